"""GitHub's answer to a mint, read by hand, and what it granted beyond the request.

Read by hand rather than through a pydantic model: a validation error would print the token.
The token is taken out first (:func:`token_of`) so that whatever is wrong with the rest of the
answer, the caller holds a live token it can revoke.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import SecretStr

from agents.identity.claim import IMPLICIT_GRANTS, MintRecord, TokenScope
from agents.identity.errors import MintRefused
from agents.identity.tokens import fingerprint, token_kind
from agents.permissions import within
from agents.transport.reply import Reply

# Without a stated grant the token may hold everything the installation has: never assume less.
UNSTATED_PERMISSIONS = "permissions not stated (the token may hold all of the installation's)"


def token_of(reply: Reply, where: str) -> SecretStr:
    """The installation token of a 201 mint answer; refuses an answer that carries none."""
    token = reply.field("token")
    if not isinstance(token, str) or not token:
        raise MintRefused(f"mint response for {where} has no token")
    secret = SecretStr(token)
    if token_kind(secret) != "installation":
        raise MintRefused(f"mint response for {where} is not an installation token (ghs_)")
    return secret


def record_of(
    reply: Reply, token: SecretStr, installation_id: int, now: datetime, where: str
) -> MintRecord:
    """The public record of a minted token; refuses an expiry that is unreadable or past."""
    body: dict[str, Any] = reply.body
    raw = body.get("expires_at")
    try:
        expires_at = datetime.fromisoformat(str(raw).replace("Z", "+00:00"))
    except ValueError:
        expires_at = None
    # A naive time cannot be compared with ours, and a past one means a dead or forged token.
    if expires_at is None or expires_at.tzinfo is None or expires_at <= now:
        raise MintRefused(f"mint response for {where} has no valid expires_at ({str(raw)[:40]!r})")
    perms = body.get("permissions")
    granted = {str(k): str(v) for k, v in perms.items()} if isinstance(perms, dict) else {}
    repos = body.get("repositories")
    names: list[str] = []
    if isinstance(repos, list):
        for repo in repos:
            if isinstance(repo, dict):
                names.append(str(repo.get("full_name") or repo.get("name")))
    return MintRecord(
        token_fingerprint=fingerprint(token),
        installation_id=installation_id,
        permissions=dict(sorted(granted.items())),
        repositories=tuple(sorted(names)),
        minted_at=now,
        expires_at=expires_at,
    )


def excess_grant(scope: TokenScope, record: MintRecord, body: dict[str, Any]) -> list[str]:
    """Everything GitHub granted beyond the request, as ``key:level`` / ``repository x``."""
    excess: list[str] = []
    if not isinstance(body.get("permissions"), dict) or not body["permissions"]:
        excess.append(UNSTATED_PERMISSIONS)
    for key, level in record.permissions.items():
        asked = scope.permissions.get(key) or IMPLICIT_GRANTS.get(key)
        if asked is None or not within({key: asked}, {key: level}):
            excess.append(f"{key}:{level}")
    if body.get("repository_selection") == "all" or not isinstance(body.get("repositories"), list):
        excess.append("all repositories of the installation")
    else:
        wanted = {repo.lower() for repo in scope.repositories}
        wanted_names = {name.lower() for name in scope.repository_names()}
        for repo in record.repositories:
            lowered = repo.lower()
            if lowered not in wanted and ("/" in lowered or lowered not in wanted_names):
                excess.append(f"repository {repo}")
    return excess


def permission_text(perms: dict[str, str]) -> str:
    return ", ".join(f"{k}:{v}" for k, v in perms.items()) or "(none)"
