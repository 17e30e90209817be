"""Minting against the sandbox GitHub: refusals before and after the request, sharing, expiry,
revocation, each seen from the sandbox's side."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from pydantic import SecretStr

from agents.identity import MintRefused, PermissionRefused, TokenScope
from agents.identity.api import IdentityLink
from agents.identity.minter import InstallationMinter
from agents.identity.sources import open_identity
from agents.identity.tokens import fingerprint
from agents.settings.model import IdentitySettings, Settings
from sandbox.github.seed import REVIEWER_APP_ID, REVIEWER_INSTALLATION_ID
from sandbox.github.state import SandboxState
from sandbox.server import SandboxServer

pytestmark = pytest.mark.anyio

REVIEWER = {"pull_requests": "write", "contents": "read", "metadata": "read"}


def scope(*repos: str, **perms: str) -> TokenScope:
    return TokenScope(repositories=repos or ("acme/widgets",), permissions=perms or REVIEWER)


class Minted:
    """What the sandbox holds: every installation token minted, and which were revoked."""

    def __init__(self, state: SandboxState) -> None:
        self._state = state

    def tokens(self) -> list[str]:
        return [t.value for t in self._state.tokens.values() if t.kind == "installation"]

    def revoked(self) -> set[str]:
        return {t for t in self.tokens() if self._state.tokens[t].revoked}

    def requests_to(self, route: str) -> int:
        return sum(1 for r in self._state.requests if r.route == route)


def age(minter: InstallationMinter, by: timedelta) -> None:
    """Make the minter's tokens ``by`` older as its freshness check sees them (the refresh margin
    grows by as much). JWTs stay on the real clock, which the sandbox checks them against."""
    minter.refresh_margin += by


@pytest.fixture
def minted(sandbox: SandboxServer) -> Minted:
    return Minted(sandbox.state)


def minter_on(
    sandbox: SandboxServer, *, per_worker: bool = False, **settings: Any
) -> InstallationMinter:
    key = SecretStr(sandbox.state.private_key_pem(REVIEWER_APP_ID))
    ident = IdentitySettings.model_validate(
        {"app_id": REVIEWER_APP_ID, "private_key": key, "installation_id": REVIEWER_INSTALLATION_ID}
        | settings
    )
    return InstallationMinter(ident, link=IdentityLink(sandbox.url), per_worker=per_worker)


@pytest.fixture
async def minter(sandbox: SandboxServer) -> AsyncIterator[InstallationMinter]:
    m = minter_on(sandbox)
    yield m
    await m.aclose()


@pytest.mark.parametrize(
    ("asked", "refusal"),
    [
        (
            scope(contents="write"),
            "role 'reviewer': permissions.contents: 'write' exceeds the worker ceiling "
            "(contents:read)",
        ),
        (
            scope(administration="write"),
            "role 'reviewer': permissions.administration: 'write' is outside the worker ceiling "
            "(issues:write, pull_requests:write, contents:read, metadata:read)",
        ),
        (
            scope(pull_request="write"),
            "role 'reviewer': permissions.pull_request: unknown permission 'pull_request' "
            "(did you mean 'pull_requests'?)",
        ),
        (
            TokenScope(repositories=("acme/widgets",), permissions={}),
            "role 'reviewer': asks for no permissions; name each one it needs",
        ),
        (
            TokenScope(repositories=(), permissions=REVIEWER),
            "role 'reviewer': names no repositories; a token without them reaches every "
            "repository of the installation",
        ),
    ],
    ids=["above-ceiling", "outside-ceiling", "misspelled", "no-permissions", "no-repositories"],
)
async def test_a_scope_no_worker_may_hold_is_refused_before_any_request(
    minter: InstallationMinter, sandbox: SandboxServer, asked: TokenScope, refusal: str
) -> None:
    with pytest.raises(PermissionRefused) as refused:
        await minter.acquire(asked, role="reviewer", holder="w1")
    assert str(refused.value) == refusal
    assert sandbox.state.requests == []


async def test_mint_is_down_scoped_to_the_task_repositories_and_role_permissions(
    minter: InstallationMinter, sandbox: SandboxServer
) -> None:
    lease = await minter.acquire(scope("acme/widgets"), role="reviewer", holder="w1")
    token = sandbox.state.tokens[lease.token.get_secret_value()]
    assert token.permissions == REVIEWER
    assert token.repository_ids == {sandbox.state.repo("acme/widgets").id}
    assert lease.expected_login == "swarm-reviewer[bot]"
    assert lease.record is not None
    assert lease.record.repositories == ("acme/widgets",)
    assert lease.record.permissions == REVIEWER
    assert lease.token.get_secret_value().startswith("ghs_")


async def test_mint_response_with_excess_permission_is_refused_and_the_token_revoked(
    minter: InstallationMinter, sandbox: SandboxServer, minted: Minted
) -> None:
    sandbox.state.knobs.mint_extra_permissions = {"administration": "write"}
    with pytest.raises(MintRefused) as refused:
        await minter.acquire(scope(), role="reviewer", holder="w1")
    (token,) = minted.tokens()
    assert minted.revoked() == {token}  # the DELETE reached the server
    assert str(refused.value) == (
        "mint response grants more than asked for identity 'default' (installation 2001), "
        f"role 'reviewer': administration:write; token {fingerprint(token)} revoked"
    )
    assert minter.live_fingerprints() == []


async def test_mint_response_with_a_higher_level_or_extra_repository_is_refused(
    minter: InstallationMinter, sandbox: SandboxServer, minted: Minted
) -> None:
    sandbox.state.knobs.mint_extra_permissions = {"contents": "write"}
    sandbox.state.knobs.mint_extra_repositories = ["acme/docs"]
    with pytest.raises(MintRefused) as refused:
        await minter.acquire(scope(), role="reviewer", holder="w1")
    assert "grants more than asked" in str(refused.value)
    assert "contents:write, repository acme/docs;" in str(refused.value)
    assert len(minted.revoked()) == 1


async def test_a_different_scope_mints_a_new_token(
    minter: InstallationMinter, minted: Minted
) -> None:
    a = await minter.acquire(scope("acme/widgets"), role="reviewer", holder="w1")
    b = await minter.acquire(scope("acme/gadgets"), role="reviewer", holder="w2")
    c = await minter.acquire(
        scope("acme/widgets", issues="write", metadata="read"), role="triager", holder="w3"
    )
    d = await minter.acquire(scope("acme/Widgets"), role="reviewer", holder="w4")
    assert len(minted.tokens()) == 3
    assert len({a.fingerprint, b.fingerprint, c.fingerprint}) == 3
    assert d.fingerprint == a.fingerprint  # repository names compare case-insensitively


async def test_near_expiry_token_is_reminted_and_the_old_one_revoked_with_its_last_holder(
    minter: InstallationMinter, minted: Minted
) -> None:
    first = await minter.acquire(scope(), role="reviewer", holder="w1")
    age(minter, timedelta(minutes=54))  # 6 min left: still outside the 5 min margin
    second = await minter.acquire(scope(), role="reviewer", holder="w2")
    assert second.fingerprint == first.fingerprint
    age(minter, timedelta(minutes=2))  # 4 min left: re-mint
    fresh = await minter.acquire(scope(), role="reviewer", holder="w3")
    assert fresh.fingerprint != first.fingerprint
    assert len(minted.tokens()) == 2 and minted.revoked() == set()  # w1, w2 hold the old one
    await minter.release(first)
    assert minted.revoked() == set()
    await minter.release(second)
    assert minted.revoked() == {first.token.get_secret_value()}
    await minter.release(fresh)
    assert len(minted.revoked()) == 2  # the current token goes with its last holder too


async def test_concurrent_workers_on_one_scope_share_one_mint(
    minter: InstallationMinter, minted: Minted
) -> None:
    leases = await asyncio.gather(
        *(minter.acquire(scope(), role="reviewer", holder=f"w{i}") for i in range(100))
    )
    assert len(minted.tokens()) == 1 and len({lease.fingerprint for lease in leases}) == 1
    assert minter.stats.mints == 1 and minter.stats.cache_hits == 99
    for lease in leases[:-1]:
        await minter.release(lease)
    assert minted.revoked() == set()
    await minter.release(leases[-1])
    assert len(minted.revoked()) == 1


async def test_replaced_token_is_revoked_when_its_last_holder_releases(
    minter: InstallationMinter, minted: Minted
) -> None:
    old = await minter.acquire(scope(), role="reviewer", holder="w1")
    age(minter, timedelta(minutes=56))
    await minter.acquire(scope(), role="reviewer", holder="w2")
    await minter.release(old)
    assert minted.revoked() == {old.token.get_secret_value()}


async def test_a_shared_token_is_revoked_when_its_last_holder_releases_it(
    minter: InstallationMinter, minted: Minted
) -> None:
    a = await minter.acquire(scope(), role="reviewer", holder="w1")
    b = await minter.acquire(scope(), role="reviewer", holder="w2")
    assert a.fingerprint == b.fingerprint and a.shared
    await minter.release(a)
    assert minted.revoked() == set()  # w2 still holds it
    await minter.release(b)
    assert minted.revoked() == {a.token.get_secret_value()}
    assert minter.live_fingerprints() == []
    c = await minter.acquire(scope(), role="reviewer", holder="w3")
    assert c.fingerprint != a.fingerprint  # a later worker of the scope mints afresh


async def test_tokens_still_held_are_revoked_at_run_end(
    minter: InstallationMinter, minted: Minted
) -> None:
    a = await minter.acquire(scope("acme/widgets"), role="reviewer", holder="w1")
    b = await minter.acquire(scope("acme/gadgets"), role="reviewer", holder="w2")
    await minter.aclose()
    assert minted.revoked() == {a.token.get_secret_value(), b.token.get_secret_value()}


async def test_per_worker_mode_mints_per_worker_and_revokes_on_release(
    sandbox: SandboxServer, minted: Minted
) -> None:
    m = minter_on(sandbox, per_worker=True)
    leases = [await m.acquire(scope(), role="reviewer", holder=f"w{i}") for i in range(5)]
    assert len(minted.tokens()) == 5
    await m.release(leases[0])
    assert minted.revoked() == {leases[0].token.get_secret_value()}
    await m.aclose()
    assert len(minted.revoked()) == 5


async def test_configured_bot_login_skips_get_app(sandbox: SandboxServer, minted: Minted) -> None:
    m = minter_on(sandbox, bot_login="custom-bot[bot]")
    lease = await m.acquire(scope(), role="reviewer", holder="w1")
    assert lease.expected_login == "custom-bot[bot]"
    assert minted.requests_to("/app") == 0
    await m.aclose()


async def test_github_refusing_to_mint_is_reported_with_its_message(sandbox: SandboxServer) -> None:
    m = minter_on(sandbox, installation_id=9999)
    with pytest.raises(MintRefused) as refused:
        await m.acquire(scope(), role="reviewer", holder="w1")
    assert str(refused.value) == (
        "GitHub refused a token for acme/widgets to identity 'default' (installation 9999), "
        "role 'reviewer': 404 Not Found; is the App installed there?"
    )
    await m.aclose()


async def test_github_refuses_what_the_installation_lacks_and_we_refuse_the_ceiling_first(
    settings: Settings,
) -> None:
    triage = open_identity(settings, "triage")
    with pytest.raises(MintRefused, match=r"installation 2002\), role 'triager': 422 "):
        await triage.acquire(scope(), role="triager", holder="w1")  # triage has no pull_requests
    with pytest.raises(PermissionRefused, match="exceeds the worker ceiling"):
        await triage.acquire(scope(issues="admin"), role="triager", holder="w1")
    await triage.aclose()
