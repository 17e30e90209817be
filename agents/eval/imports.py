"""External sets: pull request URLs and their golden comments, turned into a set's files.

The golden file lists PRs as public benchmarks publish them (a URL and human-written comments
with a severity, sometimes a path and lines). The import reads each PR's changed files at its
base and head commits from a GitHub REST API and writes one set file per PR. The reads are plain
REST calls made for a person who runs the command, never by a worker: they use the token the
person names (``--token-env``), or none for public repositories.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.eval.labels import EvalPull, EvalSetError, Label
from agents.posting.findings import Severity

_URL = re.compile(r"^https?://[^/]+/(?P<owner>[\w.-]+)/(?P<name>[\w.-]+)/pull/(?P<number>\d+)/?$")
# Reads one API path (with query) and returns its decoded JSON, or text for raw contents.
Fetch = Callable[[str, bool], Any]
MAX_FILES = 300


class GoldenComment(BaseModel):
    model_config = ConfigDict(extra="forbid")

    body: str = Field(min_length=1)
    severity: Severity
    path: str | None = None
    lines: tuple[int, int] | None = None


class GoldenPull(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(pattern=_URL.pattern)
    comments: list[GoldenComment] = Field(default_factory=list)


def read_golden(path: Path) -> list[GoldenPull]:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise EvalSetError(f"{path}: cannot read it: {exc}") from None
    if not isinstance(raw, list):
        raise EvalSetError(f"{path}: a list of pull requests (url, comments) is expected")
    pulls = []
    for n, item in enumerate(raw):
        if isinstance(item, dict) and not _URL.match(str(item.get("url", ""))):
            raise EvalSetError(
                f"{path}: entry {n}: url {item.get('url')!r} is not a pull request URL "
                "(https://HOST/OWNER/NAME/pull/NUMBER)"
            )
        try:
            pulls.append(GoldenPull.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise EvalSetError(f"{path}: entry {n}: {where}: {first['msg']}") from None
    return pulls


def pull_id(url: str) -> str:
    found = _URL.match(url)
    assert found is not None
    text = f"{found['owner']}-{found['name']}-{found['number']}".lower()
    return re.sub(r"[^a-z0-9-]+", "-", text)[:80].strip("-")


def imported(golden: GoldenPull, fetch: Fetch) -> EvalPull:
    """One PR read through ``fetch`` and its golden comments as labels."""
    found = _URL.match(golden.url)
    assert found is not None
    repo = f"{found['owner']}/{found['name']}"
    number = int(found["number"])
    pull = fetch(f"/repos/{repo}/pulls/{number}", False)
    files: list[Mapping[str, Any]] = []
    page = 1
    while len(files) < MAX_FILES:
        batch = fetch(f"/repos/{repo}/pulls/{number}/files?per_page=100&page={page}", False)
        files += batch
        if len(batch) < 100:
            break
        page += 1
    changed: dict[str, dict[str, str | None]] = {}
    base_sha, head_sha = pull["base"]["sha"], pull["head"]["sha"]
    for entry in files[:MAX_FILES]:
        name = str(entry["filename"])
        status = entry.get("status")
        old = str(entry.get("previous_filename") or name)
        base = None if status == "added" else _contents(fetch, repo, old, base_sha)
        head = None if status == "removed" else _contents(fetch, repo, name, head_sha)
        if old != name:
            changed[old] = {"base": base, "head": None}
            base = None
        changed[name] = {"base": base, "head": head}
    labels = [
        Label(path=c.path, lines=c.lines if c.path else None, severity=c.severity, comment=c.body)
        for c in golden.comments
    ]
    return EvalPull.model_validate(
        {
            "id": pull_id(golden.url),
            "title": pull.get("title") or golden.url,
            "body": pull.get("body") or "",
            "author": (pull.get("user") or {}).get("login") or "eval-contributor",
            "language": "unknown",
            "files": changed,
            "findings": [label.model_dump(exclude_none=True) for label in labels],
            "source": golden.url,
        }
    )


def _contents(fetch: Fetch, repo: str, path: str, sha: str) -> str | None:
    text = fetch(f"/repos/{repo}/contents/{quote(path)}?ref={sha}", True)
    return text if isinstance(text, str) else None


def write_pull(pull: EvalPull, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{pull.id}.yaml"
    data = pull.model_dump(mode="json", exclude_none=True, exclude={"id"})
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path
