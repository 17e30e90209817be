"""The narrow exception to the worker ceiling: a token that may resolve review threads.

GitHub resolves a review thread for an App's installation token only with ``contents: write``
(``pull_requests: write`` with ``contents: read`` answers ``FORBIDDEN``, github/gh-aw#35726),
which no reviewing worker holds (DESIGN rule 3). Where the operator opted in
(``SWARM_RESOLVE_THREADS``) and the installation grants it, code mints a token scoped to one
repository with :data:`agents.permissions.THREAD_RESOLUTION`, uses it for the resolve
mutations alone and revokes it at once: it is never sealed in an envelope, never handed to a
tool, and the model's loop never sees it. :func:`missing_for_resolution` says what stands in
the way, for ``swarm verify``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from pydantic import SecretStr

from agents.identity.claim import TokenScope
from agents.permissions import THREAD_RESOLUTION

if TYPE_CHECKING:
    from agents.identity.minter import InstallationMinter

RESOLUTION_ROLE = "thread-resolution"
SETTING = "SWARM_RESOLVE_THREADS"


@asynccontextmanager
async def resolution_token(minter: InstallationMinter, repo: str) -> AsyncIterator[SecretStr]:
    """A token for the resolve mutations on ``repo`` alone, revoked when the block ends (a
    refused mint raises ``MintRefused``: the caller leaves the threads open)."""
    scope = TokenScope(repositories=(repo,), permissions=dict(THREAD_RESOLUTION))
    token, _record = await minter.mint_unleased(scope, role=RESOLUTION_ROLE)
    try:
        yield token
    finally:
        await minter.revoke_unleased(token)


async def missing_for_resolution(minter: InstallationMinter, *, opted_in: bool) -> str | None:
    """Why fixed findings' threads are left open (None: they are resolved): the opt-in, the
    App's registration (``GET /app``) or the installation not granting ``contents: write``."""
    if not opted_in:
        return (
            f"{SETTING} is off: threads of fixed findings get a 'fixed at <sha>' reply and stay "
            "open (GitHub resolves a thread only for a token with Contents: write)"
        )
    if (await minter.app_permissions()).get("contents") != "write":
        return (
            "the App does not ask for Contents: write, which GitHub requires to resolve a "
            "review thread: threads of fixed findings stay open (add it in the App's "
            "Permissions & events)"
        )
    granted = await minter.installation_permissions()
    if (granted or {}).get("contents") != "write":
        return (
            "the installation has not granted Contents: write, which GitHub requires to "
            "resolve a review thread: threads of fixed findings stay open (the owner accepts "
            "the App's new permissions in the installation's settings)"
        )
    return None
