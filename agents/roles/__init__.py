"""Roles: the ``Role`` schema, the call > session > agent overlay chain, and its resolution.

A role is configuration, not content: its prompt sections become system-prompt text (the agent
role inside the cached prefix, session and call overlays as system blocks after it) and never a
user or assistant message. Role files are read by :mod:`agents.roles.files`.

- ``files.py``: Role files: strict YAML -> ``Role``, every problem of every file reported at once
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from agents.permissions import lower_level
from agents.tools.catalog import KNOWN_TOOLS as KNOWN_TOOLS
from agents.tools.catalog import TOOLS as TOOLS

SCHEMA_VERSION: Final = 1


Slug = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_-]{0,62}$")]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
ONE_LINE: Final = r"^[^\r\n]*$"
OneLine = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200, pattern=ONE_LINE),
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Limits(_Strict):
    """Budgets of one worker session; hitting any ends the worker with a clear outcome."""

    max_turns: int = Field(default=20, ge=1, le=500)
    max_tokens: int = Field(default=400_000, ge=1)  # input + output over the whole session
    max_output_tokens: int = Field(default=4096, ge=1, le=128_000)  # per model call
    max_cost_usd: float = Field(default=2.0, gt=0)
    max_github_calls: int = Field(default=200, ge=1)
    max_wall_seconds: float = Field(default=900.0, gt=0)


class PromptSections(_Strict):
    identity: Text
    capabilities: Text
    communication_style: Text
    instructions: Text


class Skill(_Strict):
    name: Slug
    description: OneLine


class Role(_Strict):
    schema_version: Literal[1]
    id: Slug
    name: Text
    description: Text
    identity: Slug = "default"
    # The kind of work the role does (a name in agents.kinds' registry, checked when the file
    # is read) and the `/swarm` word that starts it, if one does.
    kind: Slug = "review"
    command: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z-]{0,31}$")] | None = None
    permissions: dict[str, str]
    model: Text | None = None
    limits: Limits = Field(default_factory=Limits)
    tools: tuple[Slug, ...]
    prompt: PromptSections
    skills: tuple[Skill, ...] = ()
    evolution_focus: tuple[Text, ...] = ()
    feedback_signals: tuple[Text, ...] = ()
    history_scope: Literal["session", "run"] = "session"

    def render(self, scope: str, *, with_skills: bool = True) -> str:
        """The role as system-prompt text; ``scope`` says which layer of the chain it fills."""
        p = self.prompt
        parts = [
            f'<role id="{self.id}" scope="{scope}">',
            f"# {self.name}",
            f"## Identity\n{p.identity}",
            f"## Capabilities\n{p.capabilities}",
            f"## Communication style\n{p.communication_style}",
            f"## Instructions\n{p.instructions}",
        ]
        if with_skills and self.skills:
            parts.append(
                "## Skills\n" + "\n".join(f"- {s.name}: {s.description}" for s in self.skills)
            )
        if self.evolution_focus:
            parts.append("## Focus\n" + "\n".join(f"- {item}" for item in self.evolution_focus))
        parts.append("</role>")
        return "\n".join(parts)


@dataclass(frozen=True)
class RoleChain:
    """The roles of one LLM call, resolved call > session > agent.

    Immutable: ``with_call`` returns a new chain, so a call overlay can never leak into the
    session or agent layer of later calls.
    """

    agent: Role
    session: Role | None = None
    call: Role | None = None

    def with_call(self, role: Role | None) -> RoleChain:
        return replace(self, call=role)

    def with_session(self, role: Role | None) -> RoleChain:
        return replace(self, session=role, call=None)

    def layers(self) -> list[tuple[str, Role]]:
        """Present layers, highest precedence first."""
        found = [("call", self.call), ("session", self.session), ("agent", self.agent)]
        return [(scope, role) for scope, role in found if role is not None]

    def resolved_chain(self) -> list[str]:
        """Role ids in precedence order (call first), recorded with every LLM call."""
        return [role.id for _, role in self.layers()]

    def describe(self) -> str:
        return " > ".join(f"{scope}:{role.id}" for scope, role in self.layers())

    def system_overlays(self) -> list[str]:
        """System blocks after the cached prefix: session overlay first, call overlay last."""
        overlays = []
        if self.session is not None:
            overlays.append(self.session.render("session"))
        if self.call is not None:
            overlays.append(self.call.render("call"))
        return overlays

    @property
    def model(self) -> str | None:
        return next((role.model for _, role in self.layers() if role.model), None)

    def allowed_tools(self) -> tuple[str, ...]:
        """Tools every layer allows: an overlay may narrow the agent's tools, never widen them."""
        allowed = set(self.agent.tools)
        for _, role in self.layers():
            allowed &= set(role.tools)
        return tuple(t for t in self.agent.tools if t in allowed)

    def permissions(self) -> dict[str, str]:
        """The agent's permissions, narrowed by any overlay that grants less."""
        granted = dict(self.agent.permissions)
        for _, role in self.layers():
            granted = {
                key: lower_level(level, role.permissions[key])
                for key, level in granted.items()
                if key in role.permissions
            }
        return granted


class RoleRefs(BaseModel):
    """Role ids of one worker (as its envelope names them), resolved call > session > agent."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str
    session: str | None = None
    call: str | None = None

    def ids(self) -> list[str]:
        """The ids in precedence order, call first."""
        return [r for r in (self.call, self.session, self.agent) if r]


def role_by_id(roles: Mapping[str, Role], role_id: str) -> Role:
    try:
        return roles[role_id]
    except KeyError:
        known = ", ".join(sorted(roles))
        raise KeyError(f"unknown role {role_id!r} (known roles: {known})") from None


def resolve_chain(roles: Mapping[str, Role], refs: RoleRefs) -> RoleChain:
    """The chain the refs name, from ``roles``; an unknown id is a ``KeyError`` naming it."""
    return RoleChain(
        agent=role_by_id(roles, refs.agent),
        session=role_by_id(roles, refs.session) if refs.session else None,
        call=role_by_id(roles, refs.call) if refs.call else None,
    )
