"""The loaded roles by kind and by ``/swarm`` word: which role answers which work.

Every question "which role does this?" is answered here from the roles' own ``kind:`` and
``command:``, so no module names a role. A kind's role, when several roles share the kind, is the
one whose command word is the kind's name (``/swarm review`` names the review kind's role); the
others of a review kind are focuses a ``/swarm review FOCUS`` may lay over it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from agents.kinds.kind import Kind, kind_named

if TYPE_CHECKING:
    from agents.roles import Role


class RoleBook:
    """The roles of one roles directory, indexed by kind and by command word."""

    def __init__(self, roles: Mapping[str, Role]) -> None:
        self.roles = dict(roles)

    def kind_of(self, role: str) -> Kind | None:
        """The kind ``role`` declares; None for a role not in the book."""
        found = self.roles.get(role)
        return kind_named(found.kind) if found is not None else None

    def kinds(self) -> list[Kind]:
        """The kinds the book's roles do, by name."""
        return [kind_named(name) for name in sorted({r.kind for r in self.roles.values()})]

    def of_kind(self, kind: str) -> list[str]:
        """The ids of the roles of ``kind``, sorted."""
        return sorted(r.id for r in self.roles.values() if r.kind == kind)

    def role_for(self, kind: str) -> str | None:
        """The role that does ``kind``'s work when nothing names one: the only role of the
        kind, else the one whose command word is the kind's name, else the first by id."""
        ids = self.of_kind(kind)
        named = [i for i in ids if self.roles[i].command == kind]
        chosen = named or ids
        return chosen[0] if chosen else None

    def answering(self, work: str) -> str | None:
        """The role that takes routed webhook ``work`` (``review``, ``learn``, ``triage``...):
        the role of the first kind, by name, that answers it."""
        for name in sorted({r.kind for r in self.roles.values()}):
            if work in kind_named(name).answers:
                return self.role_for(name)
        return None

    def commanded(self, word: str) -> str | None:
        """The role ``/swarm WORD`` starts, or None when no role takes that word."""
        return next((r.id for r in self._sorted() if r.command == word), None)

    def focus(self, word: str) -> str | None:
        """The role ``/swarm review WORD`` lays over a review: another role of the review
        kind, named by its command word or its id."""
        base = self.role_for("review")
        for role in self._sorted():
            if role.kind == "review" and role.id != base and word in (role.id, role.command):
                return role.id
        return None

    def _sorted(self) -> Iterator[Role]:
        return iter(sorted(self.roles.values(), key=lambda r: r.id))
