"""Public, non-secret descriptions of a token: what was asked for, what GitHub granted, and the
identity a worker must turn out to be. These travel in the dispatch envelope in clear text.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agents.identity.errors import PermissionRefused
from agents.permissions import DEFAULT_CEILING, CeilingName, check_permissions
from agents.settings.model import IdentityKind

# GitHub adds metadata:read to every repository-scoped token whether asked or not; it is inside
# the worker ceiling, so a grant of it is never "more than asked".
IMPLICIT_GRANTS: dict[str, str] = {"metadata": "read"}


def _repo_full_name(value: str) -> str:
    owner, _, name = value.partition("/")
    if not owner or not name or "/" in name:
        raise ValueError(f"{value!r} is not OWNER/NAME")
    return value


class TokenScope(BaseModel):
    """What one worker's token may touch: repositories (OWNER/NAME) and permission levels."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repositories: tuple[str, ...]
    permissions: dict[str, str]

    @field_validator("repositories", mode="before")
    @classmethod
    def _normalise_repos(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list | tuple | set | frozenset):
            # Sorted and de-duplicated (case-insensitively, as GitHub compares names) so equal
            # scopes make equal cache keys.
            seen: dict[str, str] = {}
            for item in value:
                seen.setdefault(str(item).lower(), _repo_full_name(str(item)))
            return tuple(seen[key] for key in sorted(seen))
        return value

    @field_validator("permissions", mode="after")
    @classmethod
    def _sorted_permissions(cls, value: dict[str, str]) -> dict[str, str]:
        return dict(sorted(value.items()))

    @property
    def owner(self) -> str:
        return self.repositories[0].split("/", 1)[0] if self.repositories else ""

    def repository_names(self) -> list[str]:
        """Names without the owner, as the access-token endpoint wants them."""
        return [full.split("/", 1)[1] for full in self.repositories]

    def cache_key(self) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
        return (
            tuple(self.permissions.items()),
            tuple(repo.lower() for repo in self.repositories),
        )

    def check(self, role: str, ceiling: str = DEFAULT_CEILING) -> None:
        """Refuse, before any request, a scope no token of an identity with ``ceiling`` (its
        ``ceiling`` setting) may have."""
        who = f"role {role!r}"
        problems = check_permissions(self.permissions, who, ceiling)
        if not self.permissions:
            # GitHub reads an empty permission set as "everything the installation has".
            problems.append(f"{who}: asks for no permissions; name each one it needs")
        if not self.repositories:
            problems.append(
                f"{who}: names no repositories; a token without them reaches every repository "
                "of the installation"
            )
        owners = {repo.split("/", 1)[0].lower() for repo in self.repositories}
        if len(owners) > 1:
            problems.append(
                f"{who}: repositories span several owners ({', '.join(sorted(owners))}); "
                "one installation token covers one owner"
            )
        if problems:
            raise PermissionRefused(problems)


class MintRecord(BaseModel):
    """What GitHub said when it minted a token, minus the token: the worker checks against it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    token_fingerprint: str
    installation_id: int
    permissions: dict[str, str]
    repositories: tuple[str, ...]
    minted_at: datetime
    expires_at: datetime


class IdentityClaim(BaseModel):
    """The identity a worker must act as, as the dispatcher promises it in the envelope."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    kind: IdentityKind
    expected_login: str
    installation_id: int | None = None
    permissions: dict[str, str] = Field(default_factory=dict)
    repositories: tuple[str, ...] = ()
    mint: MintRecord | None = None
    # The operator accepts a bot PAT grant not shown within the ceiling (agents.identity.pat).
    accept_broader_grant: bool = False
    # The identity's ceiling, as its settings declare it: the worker holds the grant to it.
    ceiling: CeilingName = DEFAULT_CEILING
