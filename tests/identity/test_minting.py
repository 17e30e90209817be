"""Minting: refusals before and after the request, sharing, expiry, revocation (respx)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import SecretStr

from agents.identity import MintRefused, PermissionRefused, TokenScope
from agents.identity.minter import InstallationMinter
from agents.identity.tokens import fingerprint
from tests.identity.conftest import Clock, minter_for
from tests.identity.fake_github import FakeGitHub

REVIEWER = {"pull_requests": "write", "contents": "read", "metadata": "read"}


def scope(*repos: str, **perms: str) -> TokenScope:
    return TokenScope(repositories=repos or ("acme/widgets",), permissions=perms or REVIEWER)


def test_over_ceiling_permission_is_refused_before_any_request(
    minter: InstallationMinter, fake: FakeGitHub
) -> None:
    with pytest.raises(PermissionRefused) as refused:
        minter.acquire(scope(contents="write"), role="reviewer", holder="w1")
    assert str(refused.value) == (
        "role 'reviewer': permissions.contents: 'write' exceeds the worker ceiling (contents:read)"
    )
    assert fake.seen == []


def test_permission_outside_the_ceiling_is_refused(minter: InstallationMinter) -> None:
    with pytest.raises(PermissionRefused) as refused:
        minter.acquire(scope(administration="write"), role="reviewer", holder="w1")
    assert str(refused.value) == (
        "role 'reviewer': permissions.administration: 'write' is outside the worker ceiling "
        "(issues:write, pull_requests:write, contents:read, metadata:read)"
    )


def test_misspelled_permission_key_is_refused_with_a_suggestion(
    minter: InstallationMinter, fake: FakeGitHub
) -> None:
    with pytest.raises(PermissionRefused) as refused:
        minter.acquire(scope(pull_request="write"), role="reviewer", holder="w1")
    assert str(refused.value) == (
        "role 'reviewer': permissions.pull_request: unknown permission 'pull_request' "
        "(did you mean 'pull_requests'?)"
    )
    assert fake.mint_count == 0


def test_empty_permissions_are_refused_because_github_reads_them_as_all(
    minter: InstallationMinter,
) -> None:
    with pytest.raises(PermissionRefused) as refused:
        minter.acquire(
            TokenScope(repositories=("acme/widgets",), permissions={}), role="triager", holder="w"
        )
    assert str(refused.value) == ("role 'triager': asks for no permissions; name each one it needs")


def test_scope_without_repositories_is_refused(minter: InstallationMinter) -> None:
    with pytest.raises(PermissionRefused) as refused:
        minter.acquire(TokenScope(repositories=(), permissions=REVIEWER), role="r", holder="w")
    assert "names no repositories" in str(refused.value)


def test_mint_is_down_scoped_to_the_task_repositories_and_role_permissions(
    minter: InstallationMinter, fake: FakeGitHub
) -> None:
    lease = minter.acquire(scope("acme/widgets"), role="reviewer", holder="w1")
    mint_request = next(s for s in fake.seen if s.path.endswith("/access_tokens"))
    assert mint_request.body == {"repositories": ["widgets"], "permissions": REVIEWER}
    assert lease.expected_login == "swarm-reviewer[bot]"
    assert lease.record is not None
    assert lease.record.repositories == ("acme/widgets",)
    assert lease.record.permissions == REVIEWER
    assert lease.token.get_secret_value().startswith("ghs_")


def test_mint_response_with_excess_permission_is_refused_and_the_token_revoked(
    minter: InstallationMinter, fake: FakeGitHub
) -> None:
    fake.extra_permissions = {"administration": "write"}
    with pytest.raises(MintRefused) as refused:
        minter.acquire(scope(), role="reviewer", holder="w1")
    (token,) = fake.minted
    assert fake.revoked == [token]  # the DELETE reached the server
    assert str(refused.value) == (
        "mint response grants more than asked for identity 'default' (installation 2001), "
        f"role 'reviewer': administration:write; token {fingerprint(token)} revoked"
    )
    assert minter.live_fingerprints() == []


def test_mint_response_with_a_higher_level_or_extra_repository_is_refused(
    minter: InstallationMinter, fake: FakeGitHub
) -> None:
    fake.extra_permissions = {"contents": "write"}
    fake.extra_repositories = ("secret-sauce",)
    with pytest.raises(MintRefused) as refused:
        minter.acquire(scope(), role="reviewer", holder="w1")
    assert "grants more than asked" in str(refused.value)
    assert "contents:write, repository acme/secret-sauce;" in str(refused.value)
    assert len(fake.revoked) == 1


def test_a_different_scope_mints_a_new_token(minter: InstallationMinter, fake: FakeGitHub) -> None:
    a = minter.acquire(scope("acme/widgets"), role="reviewer", holder="w1")
    b = minter.acquire(scope("acme/gadgets"), role="reviewer", holder="w2")
    c = minter.acquire(
        scope("acme/widgets", issues="write", metadata="read"), role="triager", holder="w3"
    )
    d = minter.acquire(scope("acme/Widgets"), role="reviewer", holder="w4")
    assert fake.mint_count == 3
    assert len({a.fingerprint, b.fingerprint, c.fingerprint}) == 3
    assert d.fingerprint == a.fingerprint  # repository names compare case-insensitively


def test_near_expiry_token_is_reminted_and_the_old_one_revoked_with_its_last_holder(
    minter: InstallationMinter, fake: FakeGitHub, clock: Clock
) -> None:
    first = minter.acquire(scope(), role="reviewer", holder="w1")
    clock.advance(timedelta(minutes=54))  # 6 min left: still outside the 5 min margin
    second = minter.acquire(scope(), role="reviewer", holder="w2")
    assert second.fingerprint == first.fingerprint
    clock.advance(timedelta(minutes=2))  # 4 min left: re-mint
    fresh = minter.acquire(scope(), role="reviewer", holder="w3")
    assert fresh.fingerprint != first.fingerprint
    assert fake.mint_count == 2 and fake.revoked == []  # w1 and w2 still hold the old token
    minter.release(first)
    assert fake.revoked == []
    minter.release(second)
    assert fake.revoked == [first.token.get_secret_value()]
    minter.release(fresh)
    assert len(fake.revoked) == 1  # the current token lingers for the next worker


def test_concurrent_workers_on_one_scope_share_one_mint(
    minter: InstallationMinter, fake: FakeGitHub
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=16) as pool:
        leases = list(
            pool.map(lambda i: minter.acquire(scope(), role="reviewer", holder=f"w{i}"), range(100))
        )
    assert fake.mint_count == 1
    for lease in leases:
        minter.release(lease)
    assert fake.revoked == []
    minter.close()
    assert len(fake.revoked) == 1


def test_replaced_token_is_revoked_when_its_last_holder_releases(
    minter: InstallationMinter, fake: FakeGitHub, clock: Clock
) -> None:
    old = minter.acquire(scope(), role="reviewer", holder="w1")
    clock.advance(timedelta(minutes=56))
    minter.acquire(scope(), role="reviewer", holder="w2")
    minter.release(old)
    old_token = old.token.get_secret_value()
    assert fake.revoked == [old_token]


def test_idle_stale_token_is_revoked_when_replaced(
    minter: InstallationMinter, fake: FakeGitHub, clock: Clock
) -> None:
    old = minter.acquire(scope(), role="reviewer", holder="w1")
    minter.release(old)
    assert fake.revoked == []  # shared tokens linger for the next worker
    clock.advance(timedelta(minutes=57))
    minter.acquire(scope(), role="reviewer", holder="w2")
    assert fake.revoked == [old.token.get_secret_value()]


def test_shared_tokens_are_revoked_at_run_end(minter: InstallationMinter, fake: FakeGitHub) -> None:
    a = minter.acquire(scope("acme/widgets"), role="reviewer", holder="w1")
    b = minter.acquire(scope("acme/gadgets"), role="reviewer", holder="w2")
    minter.release(a)
    minter.close()
    assert sorted(fake.revoked) == sorted([a.token.get_secret_value(), b.token.get_secret_value()])


def test_per_worker_mode_mints_per_worker_and_revokes_on_release(
    fake: FakeGitHub, app_pem: SecretStr, clock: Clock
) -> None:
    m = minter_for(app_pem, clock, per_worker=True)
    leases = [m.acquire(scope(), role="reviewer", holder=f"w{i}") for i in range(5)]
    assert fake.mint_count == 5
    m.release(leases[0])
    assert fake.revoked == [leases[0].token.get_secret_value()]
    m.close()
    assert len(fake.revoked) == 5


def test_configured_bot_login_skips_get_app(
    fake: FakeGitHub, app_pem: SecretStr, clock: Clock
) -> None:
    m = minter_for(app_pem, clock, bot_login="custom-bot[bot]")
    lease = m.acquire(scope(), role="reviewer", holder="w1")
    assert lease.expected_login == "custom-bot[bot]"
    assert not any(s.path.endswith("/app") for s in fake.seen)
    m.close()


def test_github_refusing_to_mint_is_reported_with_its_message(
    fake: FakeGitHub, app_pem: SecretStr, clock: Clock
) -> None:
    m = minter_for(app_pem, clock, installation_id=9999)
    with pytest.raises(MintRefused) as refused:
        m.acquire(scope(), role="reviewer", holder="w1")
    assert str(refused.value) == (
        "GitHub refused to mint a token for identity 'default' (installation 9999), "
        "role 'reviewer': 404 Not Found"
    )
    m.close()
