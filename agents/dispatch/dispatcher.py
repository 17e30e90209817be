"""The dispatcher: turn a planned task into a sealed envelope with a down-scoped credential.

It is the only place that holds credentials in the clear: it asks the identity layer for a token
scoped to the task's repository and the role's permissions, seals it, and keeps the lease so the
token is released (and revoked with its last holder) when the worker ends.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from agents.dispatch.envelope import Budgets, DispatchEnvelope, SealedEnvelope
from agents.dispatch.sealing import EnvelopeSealer
from agents.identity.claim import TokenScope
from agents.identity.lease import TokenLease
from agents.identity.sources import IdentitySource, open_identity
from agents.roles import Role, RoleRefs, resolve_chain
from agents.settings.model import Settings
from agents.work import Spend, Task

# Discovery reads as the bot with the least a listing needs (contents: the repository's
# .github/swarm.yaml at its default branch).
DISCOVERY_PERMISSIONS = {"metadata": "read", "pull_requests": "read", "contents": "read"}
# Triage discovery lists issues and their comments.
TRIAGE_DISCOVERY_PERMISSIONS = {"metadata": "read", "issues": "read"}


def budgets_for(role: Role) -> Budgets:
    lim = role.limits
    return Budgets(
        llm_tokens=lim.max_tokens,
        turns=lim.max_turns,
        github_calls=lim.max_github_calls,
        wall_seconds=lim.max_wall_seconds,
        cost_usd=lim.max_cost_usd,
    )


def remaining(budgets: Budgets, spent: Spend) -> Budgets:
    """``budgets`` less what earlier workers of the same task spent (a fix round's earlier
    rounds): the role's cost and turn caps cover the task, not each worker."""
    if spent == Spend():
        return budgets
    return budgets.model_copy(
        update={
            "cost_usd": max(0.0, budgets.cost_usd - spent.cost_usd),
            "turns": max(0, budgets.turns - spent.model_calls),
        }
    )


class Dispatcher:
    """Mints, seals and releases the credentials of one run's workers."""

    def __init__(
        self,
        settings: Settings,
        roles: dict[str, Role],
        sealer: EnvelopeSealer,
        *,
        envelope_ttl: timedelta = timedelta(minutes=30),
        source_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.settings = settings
        # The runtime's own mapping, not a copy: one set of roles per runtime.
        self.roles = roles
        self.sealer = sealer
        self.maintainer_login = settings.require_maintainer_login()
        self.envelope_ttl = envelope_ttl
        self._source_options = dict(source_options or {})
        self._sources: dict[str, IdentitySource] = {}
        self._leases: dict[str, tuple[IdentitySource, TokenLease]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Dispatcher(identities={sorted(self._sources)})"

    # -- identities ----------------------------------------------------------------------------

    def source(self, identity_name: str) -> IdentitySource:
        with self._lock:
            found = self._sources.get(identity_name)
            if found is None:
                found = open_identity(self.settings, identity_name, **self._source_options)
                self._sources[identity_name] = found
            return found

    # -- leases ---------------------------------------------------------------------------------

    async def lease(
        self, identity_name: str, scope: TokenScope, *, role: str, holder: str
    ) -> TokenLease:
        """A credential for ``holder``; release it with :meth:`release_lease`."""
        source = self.source(identity_name)
        return await source.acquire(scope, role=role, holder=holder)

    async def release_lease(self, identity_name: str, lease: TokenLease) -> None:
        await self.source(identity_name).release(lease)

    async def dispatch(
        self,
        run_id: str,
        task: Task,
        refs: RoleRefs,
        *,
        worker_id: str | None = None,
        cost_budget: float | None = None,
        token_budget: int | None = None,
    ) -> SealedEnvelope:
        """Mint a token limited to the task's repository and the permissions of the role chain
        ``refs`` names, and seal it into an envelope for one worker (its cost budget lowered to
        ``cost_budget``, its token budget to ``token_budget``: what its plan expects, never above
        the role's)."""
        chain = resolve_chain(self.roles, refs)
        agent = chain.agent
        worker = worker_id or f"w-{uuid.uuid4().hex[:12]}"
        budgets = remaining(budgets_for(agent), task.budget_spent)
        if cost_budget is not None and cost_budget < budgets.cost_usd:
            budgets = budgets.model_copy(update={"cost_usd": cost_budget})
        if token_budget is not None and token_budget < budgets.llm_tokens:
            budgets = budgets.model_copy(update={"llm_tokens": token_budget})
        scope = TokenScope(repositories=(task.repo,), permissions=chain.permissions())
        lease = await self.lease(agent.identity, scope, role=agent.id, holder=worker)
        try:
            envelope = DispatchEnvelope.issue(
                run_id=run_id,
                worker_id=worker,
                task=task,
                roles=refs,
                identity=lease.claim(),
                budgets=budgets,
                ttl=self.envelope_ttl,
            )
            sealed = self.sealer.seal(envelope, lease.token, self.maintainer_login)
        except Exception:
            await self.release_lease(agent.identity, lease)
            raise
        source = self.source(agent.identity)
        with self._lock:
            self._leases[envelope.envelope_id] = (source, lease)
        return sealed

    async def hold_like(self, sealed: SealedEnvelope) -> str | None:
        """Hold the token of ``sealed`` for the run itself, so it outlives that worker: a later
        worker of the same scope then shares it instead of minting, verifying and revoking one
        of its own. Returns the key to :meth:`release` it by; None when the token is not shared
        (per-worker tokens) or the envelope holds nothing any more."""
        with self._lock:
            held = self._leases.get(sealed.envelope.envelope_id)
        if held is None or not held[1].shared:
            return None
        source, lease = held
        key = f"hold-{uuid.uuid4().hex[:12]}"
        kept = await source.acquire(lease.scope, role=sealed.envelope.roles.agent, holder=key)
        with self._lock:
            self._leases[key] = (source, kept)
        return key

    def same_token(self, hold: str, sealed: SealedEnvelope) -> bool:
        """Whether the hold ``hold`` and the envelope ``sealed`` carry one token."""
        with self._lock:
            held, other = self._leases.get(hold), self._leases.get(sealed.envelope.envelope_id)
        return (
            held is not None and other is not None and held[1].fingerprint == other[1].fingerprint
        )

    async def release(self, sealed: SealedEnvelope | str) -> None:
        """The holder of this envelope (or hold key) is done: drop its hold on the token."""
        key = sealed if isinstance(sealed, str) else sealed.envelope.envelope_id
        with self._lock:
            held = self._leases.pop(key, None)
        if held is not None:
            source, lease = held
            await source.release(lease)

    async def aclose(self) -> None:
        """End of run: release what is still held and revoke every live token."""
        with self._lock:
            held = list(self._leases.values())
            self._leases.clear()
            sources = list(self._sources.values())
            self._sources.clear()
        for source, lease in held:
            await source.release(lease)
        for source in sources:
            await source.aclose()
