"""Least privilege per identity (DESIGN rule 3, issue 34 item 5): the writer identity, its own
App, mints contents:write; a reviewing identity never does, even where its installation would
grant it; nobody gets workflows or administration; ``swarm verify`` shows each identity's
ceiling, grant and repositories, and refuses a writer App granted more than its ceiling."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agents.identity import IdentityBlocked, PermissionRefused, TokenScope
from agents.identity.minter import InstallationMinter
from agents.identity.sources import open_identity
from agents.identity.verify import IdentityVerifier
from agents.settings.model import ConfigError
from flows.cli.app import app
from sandbox.github.seed import REVIEWER_INSTALLATION_ID, WRITER_BOT, WRITER_INSTALLATION_ID
from sandbox.server import SandboxServer
from tests.identity.conftest import dispatch, settings_for
from tests.run.conftest import Swarm, use_sandbox_settings

pytestmark = pytest.mark.anyio

WRITE_CONTENTS = TokenScope(
    repositories=("acme/widgets",),
    permissions={"contents": "write", "pull_requests": "write", "metadata": "read"},
)


async def test_the_writer_identity_mints_contents_write_and_its_worker_accepts_it(
    sandbox: SandboxServer, tmp_path: Path, verifier: IdentityVerifier
) -> None:
    source = open_identity(settings_for(sandbox, tmp_path), "writer")
    assert isinstance(source, InstallationMinter) and source.ceiling == "writing"
    lease = await source.acquire(WRITE_CONTENTS, role="writer", holder="w1")
    try:
        assert lease.record is not None and lease.record.permissions["contents"] == "write"
        assert lease.claim().ceiling == "writing"
        verified = await verifier.verify(dispatch(lease))
        assert verified.login == WRITER_BOT and verified.permissions["contents"] == "write"
    finally:
        await source.release(lease)
        await source.aclose()


async def test_a_worker_refuses_contents_write_in_an_envelope_of_a_reviewing_identity(
    sandbox: SandboxServer, tmp_path: Path, verifier: IdentityVerifier
) -> None:
    source = open_identity(settings_for(sandbox, tmp_path), "writer")
    lease = await source.acquire(WRITE_CONTENTS, role="writer", holder="w1")
    try:
        reviewing = dataclasses.replace(lease, ceiling="reviewing")
        with pytest.raises(IdentityBlocked, match="'write' exceeds the worker ceiling"):
            await verifier.verify(dispatch(reviewing))
    finally:
        await source.release(lease)
        await source.aclose()


async def test_the_reviewing_identity_cannot_mint_contents_write_even_where_granted(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    # The installation grants contents:write (as for resolving threads): only our ceiling stops
    # a worker token from carrying it.
    sandbox.state.installations[REVIEWER_INSTALLATION_ID].permissions["contents"] = "write"
    source = open_identity(settings_for(sandbox, tmp_path), "default")
    try:
        with pytest.raises(PermissionRefused, match=r"'write' exceeds the worker ceiling"):
            await source.acquire(WRITE_CONTENTS, role="reviewer", holder="r1")
        assert source.stats.mints == 0
    finally:
        await source.aclose()


@pytest.mark.parametrize("permission", ["workflows", "administration", "secrets"])
async def test_the_writer_never_mints_workflows_administration_or_secrets(
    sandbox: SandboxServer, tmp_path: Path, permission: str
) -> None:
    sandbox.state.installations[WRITER_INSTALLATION_ID].permissions[permission] = "write"
    source = open_identity(settings_for(sandbox, tmp_path), "writer")
    scope = TokenScope(repositories=("acme/widgets",), permissions={permission: "read"})
    try:
        with pytest.raises(PermissionRefused, match="outside the writing ceiling"):
            await source.acquire(scope, role="writer", holder="w1")
        assert source.stats.mints == 0
    finally:
        await source.aclose()


def test_a_misspelled_ceiling_names_the_setting_and_the_near_miss(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    writer = {"ceiling": "writng"}
    with pytest.raises(ConfigError) as caught:
        settings_for(sandbox, tmp_path, identities={"writer": writer})
    assert "SWARM_IDENTITIES__WRITER__CEILING: 'writng' is not a ceiling" in str(caught.value)
    assert "(did you mean 'writing'?)" in str(caught.value)


@pytest.fixture
def sandboxed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Swarm]:
    with SandboxServer() as server:
        yield use_sandbox_settings(monkeypatch, server, tmp_path)


def test_verify_shows_each_identitys_ceiling_grant_and_repositories_in_80_columns(
    sandboxed: Swarm,
) -> None:
    result = CliRunner().invoke(app, ["verify"], terminal_width=80)
    assert result.exit_code == 0, result.output
    text = result.output
    # The blocks, below the table (whose width is the table's own business).
    blocks = text[text.index("identity 'default' (swarm-reviewer[bot])\n") :].splitlines()
    blocks = blocks[: next(i for i, x in enumerate(blocks) if "webhook events" in x)]
    assert all(len(line) <= 80 for line in blocks), result.output
    for name, login, ceiling in [
        ("default", "swarm-reviewer[bot]", "reviewing"),
        ("writer", WRITER_BOT, "writing"),
    ]:
        start = text.index(f"identity {name!r} ({login})\n")
        block = text[start:].split("\n")[:8]
        said = " ".join(" ".join(block).split())
        assert f"ceiling: {ceiling} (" in said
        assert "installation grants: " in said and "repositories: acme/" in said
    assert "ceiling: writing (contents:write," in " ".join(text.split())
    assert "ghs_" not in result.output


def test_verify_refuses_a_writer_app_granted_workflows_in_one_line(sandboxed: Swarm) -> None:
    sandboxed.state.installations[WRITER_INSTALLATION_ID].permissions["workflows"] = "write"
    result = CliRunner().invoke(app, ["verify"], terminal_width=400)
    assert result.exit_code == 2, result.output
    [line] = [x for x in result.output.splitlines() if x.startswith("identity 'writer': refused")]
    assert "permissions.workflows: 'write' is outside the writing ceiling" in line
    assert "Traceback" not in result.output


def test_verify_with_a_misspelled_ceiling_is_one_line_and_exit_2(
    sandboxed: Swarm, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWARM_IDENTITIES__WRITER__CEILING", "writng")
    result = CliRunner().invoke(app, ["verify"], terminal_width=400)
    assert result.exit_code == 2, result.output
    said = [line for line in result.output.splitlines() if "CEILING" in line]
    assert len(said) == 1 and "did you mean 'writing'?" in said[0], result.output
    assert "Traceback" not in result.output
