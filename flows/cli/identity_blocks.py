"""``swarm verify``'s block per identity: its ceiling, what GitHub grants it and the repositories
a token of it reaches, each wrapped to 80 columns; and the refusal of a writer App whose
installation grants more than the writer ceiling (DESIGN rule 3)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agents.identity.sources import IdentitySource

WIDTH = 80


def _wrapped(label: str, text: str) -> list[str]:
    return textwrap.wrap(
        f"  {label}: {text}", width=WIDTH, subsequent_indent="      ", break_on_hyphens=False
    )


async def identity_block(
    source: IdentitySource, name: str, login: str, repos: Sequence[str]
) -> tuple[list[str], str | None]:
    """The lines of ``name``'s block, and the one-line refusal when its App is over its
    ceiling (nothing is minted for it then)."""
    from agents.identity import TokenScope
    from agents.identity.minter import InstallationMinter
    from agents.permissions import DEFAULT_CEILING, ceiling_of, ceiling_text

    ceiling = source.ceiling if isinstance(source, InstallationMinter) else DEFAULT_CEILING
    lines = [f"identity {name!r} ({login})"]
    lines += _wrapped("ceiling", f"{ceiling} ({ceiling_text(ceiling_of(ceiling))})")
    if not isinstance(source, InstallationMinter):
        return lines, None
    granted = await source.installation_permissions()
    shown = ", ".join(f"{k}:{v}" for k, v in sorted((granted or {}).items())) or "(none)"
    lines += _wrapped("installation grants", shown)
    refusal = source.over_ceiling(granted)
    if refusal is not None:
        return lines, refusal
    owner = repos[0].split("/", 1)[0].lower() if repos else ""
    mine = tuple(r for r in repos if r.split("/", 1)[0].lower() == owner)
    if not mine:
        lines += _wrapped("repositories", "(set SWARM_REPOS to test-mint a token)")
        return lines, None
    # A metadata-only token shows which configured repositories the installation reaches.
    lease = await source.acquire(
        TokenScope(repositories=mine, permissions={"metadata": "read"}),
        role="verify",
        holder=f"verify:{name}",
    )
    try:
        reached = lease.record.repositories if lease.record else mine
    finally:
        await source.release(lease)
    lines += _wrapped("repositories", ", ".join(reached) or "(none)")
    return lines, None
