"""Installation token minting: down-scoping, refusals worded like GitHub, token shapes."""

from __future__ import annotations

import base64
import json
import secrets
import string
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sandbox.github.errors import ApiError, unprocessable
from sandbox.github.model import KNOWN_PERMISSIONS, PERMISSION_LEVELS, Repo, Token
from sandbox.github.records import TokenFormat

if TYPE_CHECKING:
    from sandbox.github.state import SandboxState

TOKEN_TTL_S = 3600.0
_ALNUM = string.ascii_letters + string.digits
NOT_GRANTED = "The permissions requested are not granted to this installation."
NO_SUCH_REPO = (
    "There is at least one repository that does not exist or is not accessible "
    "to the parent installation."
)


def _random(n: int) -> str:
    return "".join(secrets.choice(_ALNUM) for _ in range(n))


def new_token_value(prefix: str, *, long: bool = False) -> str:
    """Short: prefix + 100 alphanumerics. Long: ~520 chars with dots."""
    if not long:
        return prefix + _random(100)
    return prefix + ".".join([_random(36), _random(400), _random(78)])


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def stateless_token(app_id: int, installation_id: int, expires_at: float) -> str:
    """GitHub's stateless installation token: ``ghs_<app id>_<JWT>``, the JWT's claims naming
    the installation, its segments base64url (``-`` and ``_``) joined by dots; ~520 characters."""
    header = {"alg": "RS256", "typ": "JWT", "kid": _random(8)}
    claims = {
        "iss": str(app_id),
        "sub": f"installation:{installation_id}",
        "iat": int(expires_at - TOKEN_TTL_S),
        "exp": int(expires_at),
        "jti": _random(16),
    }
    body = ".".join(
        _b64url(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims)
    )
    # The signature of an RS256 key of 2048 bits: 256 bytes.
    return f"ghs_{app_id}_{body}.{_b64url(secrets.token_bytes(256))}"


def installation_token_value(
    token_format: TokenFormat, app_id: int, installation_id: int, expires_at: float
) -> str:
    if token_format == "stateless":
        return stateless_token(app_id, installation_id, expires_at)
    if token_format == "long":
        return new_token_value("ghs_", long=True)
    if token_format == "ghes":
        # GitHub's classic format (GitHub Enterprise Server; github.com before the stateless
        # one): ghs_ and 36 alphanumerics (aquasecurity/trivy#10826 tabulates both formats;
        # GitHub's changelog, 2026-04-24, "Notice about upcoming new format for GitHub App
        # installation tokens").
        return "ghs_" + _random(36)
    # "classic": ghs_ and 100 alphanumerics, longer than GitHub's: nothing may assume a length.
    return new_token_value("ghs_")


@dataclass
class MintRequest:
    repositories: list[str] | None
    repository_ids: list[int] | None
    permissions: dict[str, str] | None

    @classmethod
    def from_body(cls, body: Any) -> MintRequest:
        if body is None:
            body = {}
        if not isinstance(body, dict):
            raise unprocessable("Invalid request.\n\nBody must be a JSON object.")
        repos, ids, perms = (
            body.get("repositories"),
            body.get("repository_ids"),
            body.get("permissions"),
        )
        if repos is not None and not (
            isinstance(repos, list) and all(isinstance(r, str) for r in repos)
        ):
            raise unprocessable(
                "Invalid request.\n\nFor 'properties/repositories', it is not an array of strings."
            )
        if ids is not None and not (isinstance(ids, list) and all(isinstance(i, int) for i in ids)):
            raise unprocessable(
                "Invalid request.\n\n"
                "For 'properties/repository_ids', it is not an array of integers."
            )
        if perms is not None and not isinstance(perms, dict):
            raise unprocessable(
                "Invalid request.\n\nFor 'properties/permissions', it is not an object."
            )
        return cls(repos, ids, perms)


def mint(state: SandboxState, installation_id: int, req: MintRequest) -> tuple[Token, list[Repo]]:
    """Mint a token no wider than the installation's grant; caller holds the state lock."""
    inst = state.installations[installation_id]
    available = state.installation_repos(inst)
    chosen: list[Repo] | None = None
    if req.repositories or req.repository_ids:
        chosen = []
        for name in req.repositories or []:
            short = name.split("/", 1)[1] if "/" in name else name
            match = next((r for r in available if r.name == short), None)
            if match is None:
                raise unprocessable(NO_SUCH_REPO)
            chosen.append(match)
        for rid in req.repository_ids or []:
            match = next((r for r in available if r.id == rid), None)
            if match is None:
                raise unprocessable(NO_SUCH_REPO)
            if match not in chosen:
                chosen.append(match)

    if req.permissions:
        for key, level in req.permissions.items():
            if key not in KNOWN_PERMISSIONS:
                raise unprocessable(f'Invalid request.\n\n"{key}" is not a permitted key.')
            if level not in PERMISSION_LEVELS:
                raise unprocessable(
                    f"Invalid request.\n\nFor 'properties/{key}', "
                    f'"{level}" is not one of read, write, admin.'
                )
            granted = inst.permissions.get(key)
            if granted is None or PERMISSION_LEVELS[granted] < PERMISSION_LEVELS[level]:
                raise ApiError(422, NOT_GRANTED)
        permissions = dict(req.permissions)
        # GitHub always includes metadata:read on a repository-scoped token.
        permissions.setdefault("metadata", "read")
    else:
        permissions = dict(inst.permissions)

    permissions.update(state.knobs.mint_extra_permissions)
    if chosen is not None:
        for extra in state.knobs.mint_extra_repositories:
            repo = state.find_repo(extra) or next((r for r in available if r.name == extra), None)
            if repo is not None and repo not in chosen:
                chosen.append(repo)

    expires_at = state.clock.now() + TOKEN_TTL_S
    token = Token(
        value=installation_token_value(state.knobs.token_format, inst.app_id, inst.id, expires_at),
        kind="installation",
        login=state.apps[inst.app_id].bot.login,
        permissions=permissions,
        repository_ids={r.id for r in (available if chosen is None else chosen)},
        expires_at=expires_at,
        installation_id=inst.id,
    )
    state.tokens[token.value] = token
    return token, available if chosen is None else chosen
