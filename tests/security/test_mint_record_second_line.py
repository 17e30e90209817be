"""The second line of defence behind minting: the worker holds the mint record in its envelope
(what GitHub granted) to the envelope's own permissions and repositories, and refuses a token
whose grant exceeds or differs from them.

The dispatcher's over-grant check (class 9) normally stops such a token before it is sealed, so
these tests play a dispatcher that let one through: a token really minted on the sandbox with a
broader (or narrower) grant than the envelope names, its true record, sealed with the run's key.
The real worker must refuse it before its first write. Without the worker's check the first two
tokens would review the pull request with rights the envelope never gave.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from agents.dispatch.envelope import SealedEnvelope
from agents.identity import IdentityClaim, MintRecord
from agents.identity.tokens import fingerprint
from sandbox.github.seed import (
    REVIEWER_BOT,
    REVIEWER_INSTALLATION_ID,
    WIDGETS,
    WIDGETS_PR_DEBUG_PRINT,
)
from tests.worker.conftest import Swarm, make_swarm, swarm

__all__ = ["make_swarm", "swarm"]  # the worker tests' fixtures: a live sandbox and a runtime

pytestmark = pytest.mark.anyio

ENVELOPE = {"contents": "read", "metadata": "read", "pull_requests": "write"}


def sealed_for(
    swarm: Swarm, *, minted: dict[str, Any], envelope: dict[str, str] = ENVELOPE
) -> SealedEnvelope:
    """A token the sandbox really minted with ``minted``'s grant, its true record, and a
    reviewer envelope naming ``envelope`` on acme/widgets."""
    state = swarm.sandbox.state
    token = state.mint_token(
        REVIEWER_INSTALLATION_ID,
        repositories=[r.split("/")[1] for r in minted["repositories"]],
        permissions=minted["permissions"],
    )
    now = state.clock.now_dt()
    record = MintRecord(
        token_fingerprint=fingerprint(token),
        installation_id=REVIEWER_INSTALLATION_ID,
        permissions=dict(sorted(state.tokens[token].permissions.items())),
        repositories=tuple(sorted(minted["repositories"])),
        minted_at=now,
        expires_at=now + timedelta(hours=1),
    )
    claim = IdentityClaim(
        name="default",
        kind="app",
        expected_login=REVIEWER_BOT,
        installation_id=REVIEWER_INSTALLATION_ID,
        permissions=envelope,
        repositories=(WIDGETS,),
        mint=record,
    )
    task = swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    return swarm.seal_by_hand(task, claim, token, worker_id="w-second-line")


READ_ONLY_PULLS = {**ENVELOPE, "pull_requests": "read"}


@pytest.mark.parametrize(
    ("repositories", "granted", "named", "reason"),
    [
        (
            [WIDGETS],
            {**ENVELOPE, "issues": "write"},
            ENVELOPE,
            "granted permissions exceed the envelope: issues:write",
        ),
        (
            [WIDGETS],
            ENVELOPE,
            READ_ONLY_PULLS,
            "granted permissions exceed the envelope: pull_requests:write",
        ),
        (
            ["acme/gadgets", WIDGETS],
            ENVELOPE,
            ENVELOPE,
            "granted repositories exceed the envelope: acme/gadgets",
        ),
        (
            [WIDGETS],
            READ_ONLY_PULLS,
            ENVELOPE,
            "the grant differs from the envelope, which names pull_requests:write (granted read)",
        ),
    ],
    ids=["extra-permission", "higher-level", "extra-repository", "narrower-than-named"],
)
async def test_a_token_whose_grant_is_not_the_envelopes_is_blocked_before_any_write(
    swarm: Swarm,
    repositories: list[str],
    granted: dict[str, str],
    named: dict[str, str],
    reason: str,
) -> None:
    minted = {"repositories": repositories, "permissions": granted}
    outcome = await swarm.run(sealed_for(swarm, minted=minted, envelope=named))
    assert (outcome.status, outcome.reason) == ("blocked", f"BLOCKED: identity mismatch: {reason}")
    assert swarm.writes() == []
    assert [r for r in swarm.sandbox.state.requests if r.login == REVIEWER_BOT] == []
    row = swarm.runtime.store.get_worker("w-second-line")
    assert (row.status, row.blocked_reason) == ("blocked", outcome.reason)


async def test_a_record_naming_another_repository_than_the_envelope_is_blocked(
    swarm: Swarm,
) -> None:
    # The token and its record cover acme/gadgets; the envelope (and the task) name acme/widgets.
    sealed = sealed_for(swarm, minted={"repositories": ["acme/gadgets"], "permissions": ENVELOPE})
    outcome = await swarm.run(sealed)
    assert outcome.status == "blocked"
    assert outcome.reason == (
        "BLOCKED: identity mismatch: granted repositories exceed the envelope: acme/gadgets"
    )
    assert swarm.writes() == []


async def test_the_same_token_with_its_true_grant_is_accepted(swarm: Swarm) -> None:
    # The control: the forging helper itself is sound, so the refusals above are the check's.
    sealed = sealed_for(swarm, minted={"repositories": [WIDGETS], "permissions": ENVELOPE})
    outcome = await swarm.run(sealed)
    assert outcome.status == "succeeded", outcome.reason
    assert outcome.posted
