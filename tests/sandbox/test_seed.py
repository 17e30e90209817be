"""The seeded world holds what scripted reviewers and the demo rely on."""

from __future__ import annotations

import re
import stat
from pathlib import Path

from githubkit_schemas.latest.models import DiffEntry

from sandbox.github import seed
from sandbox.github.state import SandboxState
from sandbox.server import SandboxServer
from tests.sandbox.clients import app_client, items, token_client

SHA = re.compile(r"^[0-9a-f]{40}$")


def _patches(state: SandboxState, repo: str, number: int) -> str:
    pull = state.pull(repo, number).pull
    assert pull is not None
    return "\n".join(f.patch or "" for f in pull.files)


def test_seeded_pulls_carry_the_findings_they_are_documented_with() -> None:
    state = SandboxState()
    first = _patches(state, seed.WIDGETS, seed.WIDGETS_PR_DEBUG_PRINT)
    assert "+    print(" in first and "+    # TODO" in first
    pull = state.pull(seed.WIDGETS, 1).pull
    assert pull is not None and not any(f.filename.startswith("tests/") for f in pull.files)
    assert "pdb.set_trace()" in _patches(state, seed.WIDGETS, seed.WIDGETS_PR_PDB)
    clean = _patches(state, seed.WIDGETS, seed.WIDGETS_PR_CLEAN)
    assert not re.search(r"^\+.*(print\(|TODO|pdb)", clean, re.M)
    large = state.pull(seed.GADGETS, seed.GADGETS_PR_LARGE).pull
    assert large is not None and len(large.files) == 40
    assert "+    print(" in _patches(state, seed.GADGETS, seed.GADGETS_PR_CLIENT)
    assert state.pull(seed.DOCS, seed.DOCS_PR_CLEAN).title == "Clarify installation steps"
    for repo, number in ((seed.WIDGETS, 4), (seed.WIDGETS, 5), (seed.GADGETS, 3), (seed.DOCS, 2)):
        assert state.repo(repo).issues[number].pull is None
    heads = {r: state.repo(r).resolve("main") for r in seed.REPOS}
    assert all(head is not None and "CONTRIBUTING.md" in head.tree for head in heads.values())
    widgets = heads[seed.WIDGETS]
    assert widgets is not None and "AGENTS.md" in widgets.tree


def test_pushing_a_commit_moves_the_head_and_the_files(sandbox: SandboxServer) -> None:
    state = sandbox.state
    gh = token_client(sandbox.url, state.mint_token(seed.REVIEWER_INSTALLATION_ID))
    before = gh.rest.pulls.get("acme", "widgets", 1).parsed_data.head.sha
    new_sha = state.push_commit(
        seed.WIDGETS, 1, {"tests/test_scale.py": "def test_scale() -> None:\n    pass\n"}
    )
    after = gh.rest.pulls.get("acme", "widgets", 1).parsed_data
    assert SHA.match(before) and SHA.match(new_sha) and new_sha != before
    assert after.head.sha == new_sha and after.commits == 2
    listed = gh.rest.pulls.list_files("acme", "widgets", 1).parsed_data
    files = [f.filename for f in items(listed, DiffEntry)]
    assert files == ["src/widgets/core.py", "tests/test_scale.py"]


def test_generated_pulls_for_benchmarks(sandbox: SandboxServer) -> None:
    pulls = seed.generate_pulls(sandbox.state, seed.GADGETS, 100)
    assert len(pulls) == 100 and len({p.number for p in pulls}) == 100
    gh = token_client(sandbox.url, sandbox.state.mint_token(seed.REVIEWER_INSTALLATION_ID))
    listed = list(gh.rest.paginate(gh.rest.pulls.list, owner="acme", repo="gadgets", per_page=100))
    assert len(listed) == 102
    patches = [p.pull.files[0].patch or "" for p in pulls if p.pull is not None]
    assert len(patches) == 100
    flagged = sum(1 for patch in patches if re.search(r"print\(|TODO|pdb", patch))
    assert 0 < flagged < 100


def test_write_credentials_lets_a_client_authenticate_as_each_app(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    env = sandbox.state.write_credentials(tmp_path / "keys", sandbox.url)
    settings = dict(line.split("=", 1) for line in env.read_text().splitlines())
    assert settings == {
        "SWARM_GITHUB_API_URL": sandbox.url,
        "SWARM_APP_ID": "1001",
        "SWARM_APP_PRIVATE_KEY_FILE": str(tmp_path / "keys" / "swarm-reviewer.pem"),
        "SWARM_APP_INSTALLATION_ID": "2001",
        "SWARM_MAINTAINER_LOGIN": "octo-maintainer",
        "SWARM_IDENTITIES__TRIAGE__APP_ID": "1002",
        "SWARM_IDENTITIES__TRIAGE__PRIVATE_KEY_FILE": str(tmp_path / "keys" / "swarm-triage.pem"),
        "SWARM_IDENTITIES__TRIAGE__INSTALLATION_ID": "2002",
        "SWARM_IDENTITIES__WRITER__APP_ID": "1003",
        "SWARM_IDENTITIES__WRITER__PRIVATE_KEY_FILE": str(tmp_path / "keys" / "swarm-writer.pem"),
        "SWARM_IDENTITIES__WRITER__INSTALLATION_ID": "2003",
        "SWARM_IDENTITIES__WRITER__CEILING": "writing",
    }
    pem = Path(settings["SWARM_APP_PRIVATE_KEY_FILE"])
    assert stat.S_IMODE(pem.stat().st_mode) == 0o600
    assert pem.read_text() == sandbox.state.private_key_pem(seed.REVIEWER_APP_ID)
    gh = app_client(sandbox.url, sandbox.state)
    app = gh.rest.apps.get_authenticated().parsed_data
    assert app is not None and app.slug == "swarm-reviewer"


def test_server_reports_its_url_and_refuses_use_before_start() -> None:
    server = SandboxServer()
    try:
        _ = server.url
    except RuntimeError as err:
        assert (
            str(err) == "SandboxServer is not started; call start() or use it as a context manager"
        )
    else:
        raise AssertionError("url before start should fail")
    with server:
        assert re.match(r"^http://127\.0\.0\.1:\d+$", server.url)
