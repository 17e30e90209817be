"""A worker's hold on a credential, and the counters the benchmark and the flow report."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import SecretStr

from agents.identity.claim import IdentityClaim, MintRecord, TokenScope
from agents.permissions import DEFAULT_CEILING
from agents.settings.model import IdentityKind


@dataclass(frozen=True)
class TokenLease:
    """One holder's use of one credential. ``repr`` shows the fingerprint, never the token."""

    lease_id: str
    holder: str
    identity_name: str
    kind: IdentityKind
    expected_login: str
    scope: TokenScope
    token: SecretStr = field(repr=False)
    fingerprint: str
    record: MintRecord | None
    installation_id: int | None
    shared: bool
    accept_broader_grant: bool = False
    ceiling: str = DEFAULT_CEILING

    def claim(self) -> IdentityClaim:
        """The identity block for this worker's dispatch envelope."""
        return IdentityClaim(
            name=self.identity_name,
            kind=self.kind,
            expected_login=self.expected_login,
            installation_id=self.installation_id,
            permissions=dict(self.scope.permissions),
            repositories=self.scope.repositories,
            mint=self.record,
            accept_broader_grant=self.accept_broader_grant,
            ceiling=self.ceiling,
        )

    def __reduce__(self) -> str | tuple[object, ...]:
        # A lease holds a live credential; it must never be pickled into a task parameter.
        raise TypeError("a TokenLease holds a credential and cannot be pickled; seal it instead")


@dataclass
class MintStats:
    """How often this identity minted, reused, revoked. Plain numbers, safe to log."""

    mints: int = 0
    cache_hits: int = 0
    revocations: int = 0
    revocation_failures: int = 0
    refused_grants: int = 0
