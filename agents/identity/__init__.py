"""GitHub identities for workers: App JWTs, down-scoped installation tokens, bot PATs, and the
worker-side proof that a credential is the identity its envelope names.

Light names are importable from here; the HTTP-backed classes live in their modules
(``agents.identity.minter``, ``.sources``, ``.verify``) so importing a claim does not import
githubkit.

- ``api.py``: The GitHub calls the identity layer makes, each as the credential it needs, over one
  transport
- ``app_jwt.py``: The GitHub App JWT: RS256, issued 60 s in the past (clock drift), valid for 9
  minutes
- ``claim.py``: Public, non-secret descriptions of a token: what was asked for, what GitHub granted,
  and the identity a worker must turn out to be
- ``errors.py``: Refusals raised by the identity layer
- ``grant.py``: GitHub's answer to a mint, read by hand, and what it granted beyond the request
- ``lease.py``: A worker's hold on a credential, and the counters the benchmark and the flow report
- ``minter.py``: Installation tokens for one GitHub App identity: down-scoped, checked, cached,
  revoked
- ``offline.py``: The identity checks provable without GitHub (not the maintainer, token kind,
  ceiling, expiry), run before every verification
- ``pat.py``: Bot-account PATs, never taken at their word: ``GET /user`` (not the maintainer, the
  configured bot) and classic scopes held to the ceiling
- ``registration.py``: A GitHub App made from a manifest: the code turned into the App, and where it
  got installed
- ``resolution.py``: The narrow exception to the worker ceiling: a token that may resolve review
  threads
- ``sources.py``: Where a worker's credential comes from: an App installation (minted) or a bot
  account's PAT
- ``tokens.py``: How the identity layer names a credential without showing it, and what kind it is
- ``verify.py``: Worker-side proof of identity, before the first GitHub call that acts
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
