"""The identity checks provable without GitHub, run before every verification (and on every
cache hit, so expiry is still honoured): not the maintainer, the right token kind, within the
ceiling, and for Apps that the credential is the minted token and its grant fits the envelope.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import SecretStr

from agents.identity.claim import IMPLICIT_GRANTS, IdentityClaim
from agents.identity.errors import IdentityBlocked
from agents.identity.tokens import BOT_PAT_KINDS, describe, fingerprint, token_kind
from agents.permissions import check_permissions, within


def check_offline(
    claim: IdentityClaim, credential: SecretStr, maintainer_login: str, now: datetime
) -> dict[str, str]:
    """Refuses what the envelope and credential alone disprove; returns the permissions the
    token is known to hold."""
    if claim.expected_login.lower() == maintainer_login.lower():
        raise IdentityBlocked.mismatch(
            f"the envelope names the maintainer {claim.expected_login}; swarm never acts "
            "as the maintainer"
        )
    _check_kind(claim, credential)
    ceiling = check_permissions(claim.permissions, f"identity {claim.name!r}", claim.ceiling)
    if ceiling:
        raise IdentityBlocked.mismatch("; ".join(ceiling))
    if claim.kind == "app":
        return _check_mint_record(claim, credential, now)
    return dict(claim.permissions)


def _check_kind(claim: IdentityClaim, credential: SecretStr) -> None:
    kind = token_kind(credential)
    if claim.kind == "app" and kind != "installation":
        raise IdentityBlocked.mismatch(
            f"identity {claim.name!r} is an App but the credential is a {describe(kind)}, "
            "not an installation token (ghs_)"
        )
    if claim.kind == "bot_pat" and kind not in BOT_PAT_KINDS:
        raise IdentityBlocked.mismatch(
            f"identity {claim.name!r} is a bot account but the credential is a "
            f"{describe(kind)}, not a PAT (ghp_ or github_pat_)"
        )


def _check_mint_record(
    claim: IdentityClaim, credential: SecretStr, now: datetime
) -> dict[str, str]:
    """The dispatcher signed what GitHub granted; hold the credential and the grant to it."""
    record = claim.mint
    if record is None:
        raise IdentityBlocked.mismatch(f"identity {claim.name!r} has no mint record")
    if record.token_fingerprint != fingerprint(credential):
        raise IdentityBlocked.mismatch(
            f"the credential is not the token minted for this envelope "
            f"({fingerprint(credential)} != {record.token_fingerprint})"
        )
    if claim.installation_id is not None and record.installation_id != claim.installation_id:
        raise IdentityBlocked.mismatch(
            f"the token belongs to installation {record.installation_id}, "
            f"expected {claim.installation_id}"
        )
    if now >= record.expires_at:
        raise IdentityBlocked.mismatch(f"the token expired at {record.expires_at.isoformat()}")
    excess = [
        f"{key}:{level}"
        for key, level in record.permissions.items()
        if not within(
            {key: claim.permissions.get(key) or IMPLICIT_GRANTS.get(key, "none")}, {key: level}
        )
    ]
    if excess:
        raise IdentityBlocked.mismatch(
            f"granted permissions exceed the envelope: {', '.join(excess)}"
        )
    allowed = {repo.lower() for repo in claim.repositories}
    outside = [repo for repo in record.repositories if repo.lower() not in allowed]
    if outside:
        raise IdentityBlocked.mismatch(
            f"granted repositories exceed the envelope: {', '.join(outside)}"
        )
    # A grant short of the envelope is a record that does not describe this dispatch either.
    short = [
        f"{key}:{level} (granted {record.permissions.get(key, 'none')})"
        for key, level in claim.permissions.items()
        if not within(record.permissions, {key: level})
    ]
    granted = {repo.lower() for repo in record.repositories}
    short += [f"repository {repo}" for repo in claim.repositories if repo.lower() not in granted]
    if short:
        raise IdentityBlocked.mismatch(
            f"the grant differs from the envelope, which names {', '.join(short)}"
        )
    return dict(record.permissions)
