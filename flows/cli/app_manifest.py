"""What a GitHub App made for the swarm asks GitHub for: one App per identity the roles name,
with the permissions of that identity's roles and, for the App that takes the webhook, the events
the swarm acts on.

A role's permissions are what its tokens are minted with; an App's registration is the most any
of its tokens can be. So an identity's App asks for the union of its roles' permissions (always
within the worker ceiling: a role above it does not load) plus ``metadata: read``, which GitHub
gives every App. GitHub sends an event only to an App holding the permission behind it, so the
App that takes the webhook also reads what its events need (``issues: read`` for
``issue_comment`` and ``issues``): tokens never carry more than their role's permissions.

Only one App takes the webhook (the ``default`` identity's, where reviews are posted), because
``swarm webhook serve`` checks one secret: it receives every event the swarm acts on, and hands
each piece of work to the role, and so the identity, that does it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agents.events.routing import EVENTS_ACTED_ON
from agents.kinds.kind import kind_named
from agents.permissions import DEFAULT_CEILING, lower_level
from agents.roles import Role
from agents.settings.model import DEFAULT_IDENTITY

BASE_PERMISSIONS = {"metadata": "read"}


@dataclass(frozen=True)
class AppPlan:
    """One App to make: for which identity, under which name, asking for what."""

    identity: str
    name: str
    roles: tuple[str, ...]
    permissions: dict[str, str]
    events: tuple[str, ...]
    webhook_url: str | None
    # The identity's ceiling (agents.permissions.CEILINGS): "writing" when one of its roles is of
    # a kind that writes code, so its settings say so and its tokens may carry contents: write.
    ceiling: str = DEFAULT_CEILING

    def manifest(self, *, homepage: str, redirect_url: str, setup_url: str) -> dict[str, Any]:
        """The manifest GitHub's "new App" page takes (``default_events`` only with a webhook:
        GitHub delivers nowhere else)."""
        manifest: dict[str, Any] = {
            "name": self.name,
            "url": homepage,
            "description": f"swarm: {', '.join(self.roles)} (identity {self.identity!r})",
            "public": False,
            "redirect_url": redirect_url,
            "setup_url": setup_url,
            "setup_on_update": False,
            "request_oauth_on_install": False,
            "default_permissions": dict(self.permissions),
        }
        if self.webhook_url:
            manifest["hook_attributes"] = {"url": self.webhook_url, "active": True}
            manifest["default_events"] = list(self.events)
        return manifest


def _union(into: dict[str, str], extra: Mapping[str, str]) -> None:
    for key, level in extra.items():
        known = into.get(key)
        # The broader of the two: the App's registration must cover every role's tokens.
        into[key] = level if known is None or lower_level(known, level) == known else known


def plan_apps(
    roles: Mapping[str, Role],
    *,
    prefix: str,
    webhook_url: str | None,
    only: Sequence[str] = (),
) -> list[AppPlan]:
    """One plan per identity the roles name (or those of ``only``), the default one first."""
    identities = sorted({r.identity.lower() for r in roles.values()})
    identities.sort(key=lambda name: name != DEFAULT_IDENTITY)
    chosen = [name.lower() for name in only] or identities
    hook_owner = DEFAULT_IDENTITY if DEFAULT_IDENTITY in chosen else chosen[0] if chosen else None
    plans = []
    for identity in chosen:
        users = sorted(r.id for r in roles.values() if r.identity.lower() == identity)
        permissions = dict(BASE_PERMISSIONS)
        for role_id in users:
            _union(permissions, roles[role_id].permissions)
        hook = webhook_url if identity == hook_owner else None
        events: tuple[str, ...] = ()
        if hook:
            events = tuple(EVENTS_ACTED_ON)
            _union(permissions, {EVENTS_ACTED_ON[e]: "read" for e in events})
        label = "reviewer" if identity == DEFAULT_IDENTITY else identity
        ceilings = {kind_named(roles[role_id].kind).ceiling for role_id in users}
        plans.append(
            AppPlan(
                identity=identity,
                name=f"{prefix}-{label}"[:34],
                roles=tuple(users),
                permissions=dict(sorted(permissions.items())),
                events=events,
                webhook_url=hook,
                ceiling="writing" if "writing" in ceilings else DEFAULT_CEILING,
            )
        )
    return plans
