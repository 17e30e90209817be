"""Labelled pull requests served by the sandbox GitHub, for ``swarm eval``.

- ``default/``: the set this repository ships, one YAML file per pull request (format in
  docs/eval.md; ``agents.eval.labels`` reads the labels, this module only the files)
- ``baseline.json``: the scripted model's precision and recall on it, which ``make test`` holds
- ``implement/``: the issues ``swarm eval --kind implement`` ships, one YAML file per issue with
  its repository and its hidden tests (``agents.eval.cases`` reads them)
- ``implement-baseline.json``: the scripted model's success rate on it

Each PR of a set becomes a repository of its own in the sandbox's organisation, holding the
PR's base files, with one open pull request that turns them into its head files; each issue of
an implement set a repository of its own holding its files, with the issue filed against it.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from sandbox.github.seed import COLLABORATORS, MAINTAINER, ORG
from sandbox.github.state import SandboxState

DEFAULT_SET = Path(__file__).resolve().parent / "default"
IMPLEMENT_SET = Path(__file__).resolve().parent / "implement"
IMPLEMENT_BASELINE = Path(__file__).resolve().parent / "implement-baseline.json"
# The repository of a PR with no base file at all still needs a first commit.
_FIRST_FILE = {"README.md": "A repository of the evaluation set.\n"}


def repo_of(pull_id: str) -> str:
    return f"{ORG}/eval-{pull_id}"


def seed_set(state: SandboxState, folder: Path) -> dict[str, tuple[str, int]]:
    """Each PR file of ``folder`` as a repository with one open PR: id -> (repo, PR number)."""
    served: dict[str, tuple[str, int]] = {}
    for path in sorted(folder.glob("*.yaml")):
        pull = yaml.safe_load(path.read_text(encoding="utf-8"))
        pull_id = str(pull.get("id") or path.stem)
        files = pull["files"]
        base = {name: f["base"] for name, f in files.items() if f.get("base") is not None}
        changes = {
            name: f.get("head") for name, f in files.items() if f.get("head") != f.get("base")
        }
        repo = repo_of(pull_id)
        state.add_repo(repo, base or dict(_FIRST_FILE), description=f"eval: {pull_id}")
        issue = state.add_pull(
            repo,
            str(pull["title"]),
            changes,
            body=str(pull.get("body") or ""),
            author=str(pull.get("author") or "eval-contributor"),
        )
        served[pull_id] = (repo, issue.number)
    return served


def seed_issue(
    state: SandboxState,
    case_id: str,
    files: dict[str, str],
    *,
    title: str,
    body: str,
    author: str,
    label: str,
) -> tuple[str, int]:
    """A repository of its own holding ``files``, an issue filed by ``author``, and ``label``
    added by the maintainer (a collaborator with write access, so the writer's discovery takes
    it as a person's request): (repo, issue number)."""
    repo = f"{ORG}/implement-{case_id}"
    state.add_repo(repo, files, description=f"eval: {case_id}")
    with state.lock:
        state.repo(repo).collaborators.update(COLLABORATORS)
    issue = state.add_issue(repo, title, body, author=author)
    state.label_issue(repo, issue.number, label, by=MAINTAINER)
    return repo, issue.number
