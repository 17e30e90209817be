"""Trust class 9, minting edge cases: once GitHub has handed out a token, every way the answer
can be wrong ends with that token revoked (``DELETE /installation/token`` reaching GitHub), and
a token shared by workers of one scope dies with its last holder, not at the end of the run.

GitHub's answer is mangled with respx on the mint route only: the token in it is a real one the
sandbox minted, so its revocation is seen from the sandbox's side. Everything else is the real
dispatcher, identity layer and transport against the sandbox over HTTP.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import httpx
import pytest
import respx

from agents.dispatch.sealing import SealRefused
from agents.identity import MintRefused
from agents.identity.tokens import fingerprint
from sandbox.github.seed import REVIEWER_INSTALLATION_ID, WIDGETS, WIDGETS_PR_DEBUG_PRINT
from tests.worker.conftest import Swarm, make_swarm, swarm

__all__ = ["make_swarm", "swarm"]  # the worker tests' fixtures: a live sandbox and a runtime

pytestmark = pytest.mark.anyio

MINT_ROUTE = f"/app/installations/{REVIEWER_INSTALLATION_ID}/access_tokens"
WHERE = f"identity 'default' (installation {REVIEWER_INSTALLATION_ID}), role 'reviewer'"
GRANTED = {"contents": "read", "metadata": "read", "pull_requests": "write"}
# An answer without permissions is an over-grant: the token may hold all of the installation's.
UNSTATED = "permissions not stated (the token may hold all of the installation's)"

Mangle = Callable[[dict[str, Any]], None]


class MintedForReal:
    """Mints a real sandbox token for each mint request, then lets a test mangle the answer."""

    def __init__(self, swarm: Swarm, mangle: Mangle) -> None:
        self.swarm = swarm
        self.mangle = mangle
        self.tokens: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        state = self.swarm.sandbox.state
        value = state.mint_token(
            REVIEWER_INSTALLATION_ID, repositories=["widgets"], permissions=dict(GRANTED)
        )
        self.tokens.append(value)
        body: dict[str, Any] = {
            "token": value,
            "expires_at": (state.clock.now_dt() + timedelta(hours=1)).isoformat(),
            "permissions": dict(GRANTED),
            "repository_selection": "selected",
            "repositories": [{"name": "widgets", "full_name": WIDGETS}],
        }
        self.mangle(body)
        return httpx.Response(201, json=body)

    def revoked(self) -> list[str]:
        return [t for t in self.tokens if self.swarm.sandbox.state.tokens[t].revoked]

    def deletes(self) -> int:
        return sum(
            1
            for r in self.swarm.sandbox.state.requests
            if (r.method, r.route, r.status) == ("DELETE", "/installation/token", 204)
        )


@contextmanager
def mint_answers(swarm: Swarm, mangle: Mangle) -> Iterator[MintedForReal]:
    """GitHub's mint answer, mangled; every other request reaches the sandbox."""
    minted = MintedForReal(swarm, mangle)
    with respx.mock(assert_all_called=True) as router:
        router.post(f"{swarm.sandbox.url}{MINT_ROUTE}").mock(side_effect=minted)
        router.route().pass_through()
        yield minted


def _set(key: str, value: object) -> Mangle:
    return lambda body: body.__setitem__(key, value)


def _drop(key: str) -> Mangle:
    return lambda body: body.pop(key)


def assert_refused_and_revoked(
    refused: pytest.ExceptionInfo[MintRefused], minted: MintedForReal, swarm: Swarm, reason: str
) -> None:
    (token,) = minted.tokens
    assert minted.revoked() == [token]
    assert minted.deletes() == 1  # the DELETE reached GitHub
    assert str(refused.value) == f"{reason}; token {fingerprint(token)} revoked"
    assert token not in str(refused.value)
    assert swarm.writes() == []


def expiry(shown: str) -> str:
    return f"mint response for {WHERE} has no valid expires_at ({shown})"


def over(excess: str) -> str:
    return f"mint response grants more than asked for {WHERE}: {excess}"


@pytest.mark.parametrize(
    ("mangle", "reason"),
    [
        (_set("expires_at", "next tuesday"), expiry("'next tuesday'")),
        (_set("expires_at", ""), expiry("''")),
        (_drop("expires_at"), expiry("'None'")),
        (_set("expires_at", 1893456000), expiry("'1893456000'")),
        (_set("expires_at", "2999-01-01T00:00:00"), expiry("'2999-01-01T00:00:00'")),
        (_set("expires_at", "2001-01-01T00:00:00Z"), expiry("'2001-01-01T00:00:00Z'")),
        (_drop("permissions"), over(UNSTATED)),
        (_set("permissions", None), over(UNSTATED)),
        (_set("permissions", {}), over(UNSTATED)),
        (_drop("repositories"), over("all repositories of the installation")),
        (_set("repositories", "widgets"), over("all repositories of the installation")),
        (_set("permissions", {**GRANTED, "contents": ["write"]}), over("contents:['write']")),
        (_set("permissions", {**GRANTED, "issues": "admin"}), over("issues:admin")),
    ],
    ids=[
        "expiry-words",
        "expiry-empty",
        "expiry-missing",
        "expiry-number",
        "expiry-without-timezone",
        "expiry-past",
        "no-permissions",
        "null-permissions",
        "empty-permissions",
        "no-repositories",
        "repositories-not-a-list",
        "level-not-a-string",
        "unasked-admin",
    ],
)
async def test_a_malformed_or_unprovable_mint_answer_is_refused_and_its_token_revoked(
    swarm: Swarm, mangle: Mangle, reason: str
) -> None:
    with mint_answers(swarm, mangle) as minted, pytest.raises(MintRefused) as refused:
        await swarm.dispatch(swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT))
    assert_refused_and_revoked(refused, minted, swarm, reason)


async def test_a_mint_answer_without_a_usable_token_has_nothing_to_revoke(swarm: Swarm) -> None:
    mangle = _set("token", "not-a-token")
    with mint_answers(swarm, mangle) as minted, pytest.raises(MintRefused) as refused:
        await swarm.dispatch(swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT))
    assert str(refused.value) == f"mint response for {WHERE} is not an installation token (ghs_)"
    assert minted.deletes() == 0  # nothing sent anywhere with a credential we do not recognise


async def test_a_failure_after_a_good_mint_revokes_the_token(
    make_swarm: Callable[..., Swarm], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The dispatcher mints, then refuses to seal: the bot's login is configured as the maintainer.
    monkeypatch.setenv("SWARM_MAINTAINER_LOGIN", "swarm-reviewer[bot]")
    async with make_swarm() as made:
        with pytest.raises(SealRefused, match="resolves to the maintainer login"):
            await made.dispatch(made.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT))
        tokens = [t for t in made.sandbox.state.tokens.values() if t.kind == "installation"]
        assert len(tokens) == 1 and tokens[0].revoked
        assert made.writes() == []


async def test_a_token_shared_by_workers_of_one_scope_dies_with_its_last_holder(
    swarm: Swarm,
) -> None:
    task = swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    first, second = await swarm.dispatch(task), await swarm.dispatch(task)
    mint = first.envelope.identity.mint
    assert mint is not None and second.envelope.identity.mint == mint  # one token, two holders
    (token,) = [t for t in swarm.sandbox.state.tokens.values() if t.kind == "installation"]
    await swarm.runtime.dispatcher.release(first)
    assert not token.revoked
    await swarm.runtime.dispatcher.release(second)
    assert token.revoked  # not left alive until the run ends
    assert [r.route for r in swarm.sandbox.state.requests if r.method == "DELETE"] == [
        "/installation/token"
    ]
