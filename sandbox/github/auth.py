"""Who is calling: an App (JWT), an installation token, or a user's personal access token."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

import jwt

from sandbox.github.errors import ApiError, bad_credentials
from sandbox.github.model import PERMISSION_LEVELS, App, Repo, Token
from sandbox.github.state import SandboxState

TOKEN_PREFIXES = ("ghs_", "ghp_", "github_pat_", "gho_", "ghu_", "ghr_")
JWT_NOT_DECODED = "A JSON web token could not be decoded"
JWT_EXPIRED = (
    "'Expiration time' claim ('exp') must be a numeric value representing the future time "
    "at which the assertion expires"
)
JWT_TOO_LONG = "'Expiration time' claim ('exp') is too far in the future"
JWT_IAT_FUTURE = (
    "'Issued at' claim ('iat') must be an Integer representing the time that the "
    "assertion was issued"
)
JWT_MAX_LIFETIME_S = 600
JWT_CLOCK_SKEW_S = 60


@dataclass
class Identity:
    kind: Literal["app", "installation", "user"]
    login: str
    app: App | None = None
    token: Token | None = None

    @property
    def forbidden_message(self) -> str:
        if self.kind == "user":
            return "Resource not accessible by personal access token"
        return "Resource not accessible by integration"

    def can_see(self, repo: Repo) -> bool:
        if self.token is None:
            return False
        ids = self.token.repository_ids
        return ids is None or repo.id in ids

    def has(self, permission: str, level: str) -> bool:
        if self.token is None:
            return False
        if self.token.kind == "pat_classic":
            # `repo` / `public_repo` write to repositories; without them a classic PAT only reads.
            return level == "read" or bool({"repo", "public_repo"} & set(self.token.scopes or ()))
        granted = self.token.permissions.get(permission)
        return granted is not None and PERMISSION_LEVELS[granted] >= PERMISSION_LEVELS[level]


def bearer(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() not in ("token", "bearer") or not value.strip():
        return None
    return value.strip()


def identify(state: SandboxState, credential: str) -> Identity:
    """Resolve a credential or raise the 401 GitHub would send. Caller holds the lock."""
    if credential.startswith(TOKEN_PREFIXES):
        token = state.tokens.get(credential)
        if token is None or token.revoked:
            raise bad_credentials()
        if token.expires_at is not None and state.clock.now() >= token.expires_at:
            raise bad_credentials()
        kind: Literal["installation", "user"] = (
            "installation" if token.kind == "installation" else "user"
        )
        app = None
        if token.installation_id is not None:
            app = state.apps[state.installations[token.installation_id].app_id]
        return Identity(kind, token.login, app=app, token=token)
    if credential.count(".") == 2:
        app = verify_jwt(state, credential)
        return Identity("app", f"app/{app.slug}", app=app)
    raise bad_credentials()


def verify_jwt(state: SandboxState, encoded: str, now: float | None = None) -> App:
    """RS256 against the issuing App's key; iat/exp checked on the real clock, since clients
    sign with theirs (a fast sandbox clock would otherwise expire every JWT)."""
    try:
        claims = jwt.decode(encoded, options={"verify_signature": False})
        app = state.apps.get(int(str(claims.get("iss"))))
    except (jwt.PyJWTError, ValueError):
        raise ApiError(401, JWT_NOT_DECODED) from None
    if app is None:
        raise ApiError(401, "Integration not found")
    try:
        jwt.decode(
            encoded,
            app.private_key.public_key(),
            algorithms=["RS256"],
            options={"verify_exp": False, "verify_iat": False, "require": ["iat", "exp", "iss"]},
        )
    except jwt.PyJWTError:
        raise ApiError(401, JWT_NOT_DECODED) from None
    iat, exp = claims.get("iat"), claims.get("exp")
    if not isinstance(iat, int | float) or not isinstance(exp, int | float):
        raise ApiError(401, JWT_NOT_DECODED)
    at = time.time() if now is None else now
    if iat > at + JWT_CLOCK_SKEW_S:
        raise ApiError(401, JWT_IAT_FUTURE)
    if exp <= at:
        raise ApiError(401, JWT_EXPIRED)
    if exp - iat > JWT_MAX_LIFETIME_S:
        raise ApiError(401, JWT_TOO_LONG)
    return app
