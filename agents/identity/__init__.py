"""GitHub identities for workers: App JWTs, down-scoped installation tokens, bot PATs, and the
worker-side proof that a credential is the identity its envelope names.

Light names are importable from here; the HTTP-backed classes live in their modules
(``agents.identity.minter``, ``.sources``, ``.verify``) so importing a claim does not import
githubkit.
"""

from agents.identity.claim import IdentityClaim, MintRecord, TokenScope
from agents.identity.errors import IdentityBlocked, IdentityError, MintRefused, PermissionRefused
from agents.identity.tokens import TokenKind, fingerprint, token_kind

__all__ = [
    "IdentityBlocked",
    "IdentityClaim",
    "IdentityError",
    "MintRecord",
    "MintRefused",
    "PermissionRefused",
    "TokenKind",
    "TokenScope",
    "fingerprint",
    "token_kind",
]
