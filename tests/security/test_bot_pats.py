"""Trust class 4, bot PATs taken at their word: the maintainer's own PAT configured as a bot, or
a PAT whose grant is broader than a worker's, is refused by ``swarm exec``, ``swarm verify`` and
the worker alike, because each asks GitHub (``GET /user``) whose the PAT is and what it may do.

The attack goes through the real CLI and the real worker against the sandbox GitHub over HTTP;
the sandbox answers classic PATs with ``x-oauth-scopes`` as GitHub does.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agents.dispatch.envelope import SealedEnvelope
from agents.identity import IdentityClaim
from flows.cli.app import app
from sandbox.github.seed import BOT_USER, MAINTAINER, WIDGETS, WIDGETS_PR_DEBUG_PRINT
from sandbox.server import SandboxServer
from tests.cli.conftest import EXIT_USAGE, Seen, assert_error
from tests.run.conftest import use_sandbox_settings
from tests.worker.conftest import Swarm, make_swarm

__all__ = ["make_swarm"]  # the worker tests' fixture: a live sandbox and a runtime

SETTING = "SWARM_IDENTITIES__DEFAULT__ACCEPT_BROADER_GRANT"
MAINTAINER_REFUSED = "BLOCKED: identity mismatch: login is the maintainer octo-maintainer"
REVIEWER_PERMISSIONS = {"contents": "read", "metadata": "read", "pull_requests": "write"}


def not_shown(grant: str) -> str:
    return (
        f"BLOCKED: identity mismatch: the bot PAT's grant is not shown to be within the worker "
        f"ceiling ({grant}); set {SETTING}=true to accept it"
    )


class Host:
    """The sandbox GitHub, and the reviewer role's ``default`` identity configured as a PAT."""

    def __init__(self, server: SandboxServer, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.server = server
        self.root = root
        self.monkeypatch = monkeypatch
        self.marker = root / "child-ran"

    def configure(self, pat: str, *, accept_broader_grant: bool = False) -> str:
        pat_file = self.root / "bot.token"
        pat_file.write_text(pat + "\n")
        self.monkeypatch.setenv("SWARM_IDENTITIES__DEFAULT__KIND", "bot_pat")
        self.monkeypatch.setenv("SWARM_IDENTITIES__DEFAULT__TOKEN_FILE", str(pat_file))
        self.monkeypatch.setenv("SWARM_IDENTITIES__DEFAULT__BOT_LOGIN", BOT_USER)
        self.monkeypatch.setenv(SETTING, "true" if accept_broader_grant else "false")
        return pat

    def swarm(self, *args: str) -> Seen:
        result = CliRunner().invoke(app, list(args), terminal_width=200)
        raised = result.exception if not isinstance(result.exception, SystemExit) else None
        return Seen(result.exit_code, result.output, raised)

    def exec(self) -> Seen:
        child = f"open({str(self.marker)!r}, 'w').write('ran')"
        return self.swarm(
            "exec", "--role", "reviewer", "--repo", WIDGETS, "--", sys.executable, "-c", child
        )

    def writes(self) -> list[str]:
        """Writes beyond minting and revoking the App identities' own test tokens."""
        token_routes = ("/app/installations/{installation_id}/access_tokens", "/installation/token")
        requests = self.server.state.requests
        return [
            f"{r.method} {r.path}" for r in requests if r.is_write and r.route not in token_routes
        ]

    def calls_by(self, login: str) -> list[str]:
        return [f"{r.method} {r.route}" for r in self.server.state.requests_by(login)]


@pytest.fixture
def host(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Host]:
    with SandboxServer() as server:
        use_sandbox_settings(monkeypatch, server, tmp_path)
        monkeypatch.setenv("SWARM_REPOS", WIDGETS)
        yield Host(server, tmp_path, monkeypatch)


def test_exec_refuses_the_maintainers_pat_configured_as_a_bot(host: Host) -> None:
    pat = host.configure(host.server.state.maintainer_pat, accept_broader_grant=True)
    seen = host.exec()
    assert_error(seen, f"error: {MAINTAINER_REFUSED}", EXIT_USAGE, secrets=[pat])
    assert not host.marker.exists()  # the program never ran with the maintainer's token
    assert host.calls_by(MAINTAINER) == ["GET /user"]
    assert host.writes() == []


def test_verify_refuses_the_maintainers_pat_configured_as_a_bot(host: Host) -> None:
    pat = host.configure(host.server.state.maintainer_pat, accept_broader_grant=True)
    seen = host.swarm("verify")
    assert seen.code == EXIT_USAGE, seen.output
    assert seen.lines[-1] == f"identity 'default': {MAINTAINER_REFUSED}"
    assert "login ok" not in seen.output and pat not in seen.output
    assert "Traceback" not in seen.output and seen.exception is None
    assert host.calls_by(MAINTAINER) == ["GET /user"]
    assert host.writes() == []


@pytest.mark.parametrize(
    ("scopes", "accept", "refusal"),
    [
        (("repo",), False, not_shown("classic PAT, scopes: repo")),
        (
            ("public_repo", "read:org"),
            False,
            not_shown("classic PAT, scopes: public_repo, read:org"),
        ),
        (
            ("repo", "workflow", "admin:org"),
            True,
            "BLOCKED: identity mismatch: the bot PAT carries scopes above the worker ceiling: "
            "workflow, admin:org",
        ),
        (
            ("delete_repo",),
            True,
            "BLOCKED: identity mismatch: the bot PAT carries scopes above "
            "the worker ceiling: delete_repo",
        ),
    ],
    ids=["repo", "public-repo", "workflow-even-if-accepted", "delete-even-if-accepted"],
)
def test_exec_refuses_a_bot_pat_whose_scopes_exceed_or_are_not_shown_within_the_ceiling(
    host: Host, scopes: tuple[str, ...], accept: bool, refusal: str
) -> None:
    pat = host.configure(
        host.server.state.add_pat(BOT_USER, scopes=scopes), accept_broader_grant=accept
    )
    assert_error(host.exec(), f"error: {refusal}", EXIT_USAGE, secrets=[pat])
    assert not host.marker.exists()
    assert host.calls_by(BOT_USER) == ["GET /user"]
    assert host.writes() == []


def test_a_fine_grained_bot_pat_is_refused_unless_its_broader_grant_is_accepted(
    host: Host,
) -> None:
    pat = host.configure(host.server.state.bot_pat)
    assert_error(
        host.exec(),
        f"error: {not_shown('fine-grained PAT, grant not stated by GitHub')}",
        EXIT_USAGE,
        secrets=[pat],
    )
    assert not host.marker.exists()
    host.configure(pat, accept_broader_grant=True)
    assert host.exec().code == 0
    assert host.marker.exists()


@pytest.mark.parametrize(
    ("scopes", "accept", "grant"),
    [
        (("read:org",), False, "classic PAT, scopes: read:org (within the worker ceiling)"),
        ((), False, "classic PAT, scopes: (none) (within the worker ceiling)"),
        (("repo",), True, "classic PAT, scopes: repo (broader grant accepted)"),
    ],
    ids=["read-org", "no-scopes", "repo-accepted"],
)
def test_verify_prints_the_effective_grant_of_an_accepted_bot_pat(
    host: Host, scopes: tuple[str, ...], accept: bool, grant: str
) -> None:
    pat = host.configure(
        host.server.state.add_pat(BOT_USER, scopes=scopes), accept_broader_grant=accept
    )
    seen = host.swarm("verify")
    assert seen.code == 0, seen.output
    assert f"identity 'default' ({BOT_USER}): grant: {grant}" in seen.lines
    assert pat not in seen.output
    assert host.writes() == []


def test_verify_prints_the_grant_it_refuses(host: Host) -> None:
    host.configure(host.server.state.bot_pat)
    seen = host.swarm("verify")
    assert seen.code == EXIT_USAGE
    assert seen.lines[-1] == (
        f"identity 'default': {not_shown('fine-grained PAT, grant not stated by GitHub')}"
    )


def _pat_envelope(swarm: Swarm, pat: str, *, accept: bool = False) -> SealedEnvelope:
    """What a dispatcher that skipped the check would hand a worker: a bot PAT claim, sealed."""
    task = swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    claim = IdentityClaim(
        name="default",
        kind="bot_pat",
        expected_login=BOT_USER,
        permissions=REVIEWER_PERMISSIONS,
        repositories=(WIDGETS,),
        accept_broader_grant=accept,
    )
    return swarm.seal_by_hand(task, claim, pat, worker_id="w-posing")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("which", "accept", "reason"),
    [
        ("maintainer", True, MAINTAINER_REFUSED),
        ("repo", False, not_shown("classic PAT, scopes: repo")),
        ("fine-grained", False, not_shown("fine-grained PAT, grant not stated by GitHub")),
    ],
    ids=["maintainer-pat", "repo-scope", "fine-grained"],
)
async def test_the_worker_refuses_a_pat_the_dispatcher_should_not_have_sent(
    make_swarm: Callable[..., Swarm], which: str, accept: bool, reason: str
) -> None:
    swarm = make_swarm()
    state = swarm.sandbox.state
    pat = {
        "maintainer": state.maintainer_pat,
        "repo": state.add_pat(BOT_USER, scopes=("repo",)),
        "fine-grained": state.bot_pat,
    }[which]
    try:
        outcome = await swarm.run(_pat_envelope(swarm, pat, accept=accept))
        assert (outcome.status, outcome.reason) == ("blocked", reason)
        assert swarm.writes() == []
        assert [r.route for r in state.requests if r.route != "/user"] == []
        record = swarm.runtime.store.get_worker("w-posing")
        assert (record.status, record.blocked_reason) == ("blocked", reason)
    finally:
        await swarm.runtime.aclose()
