"""One call to GitHub as an identity, said once for both layers that send such calls.

The identity layer makes it (verifying or revoking a token as the bot); the GitHub layer's
throttle gives it its turn on that identity's budget. Neither imports the other, so the call is
described here, beneath both.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class IdentityCall:
    """``method path`` sent as ``login``: what its budget needs to know to give it a turn."""

    login: str
    method: str
    path: str
    graphql: bool = False
