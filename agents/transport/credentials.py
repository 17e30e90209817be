"""What kind of GitHub credential a string is, by GitHub's documented prefixes only.

Installation tokens can be hundreds of characters long and contain dots, so nothing here assumes
a length or an alphabet. The auth strategies use this to refuse sending the wrong kind; the
identity layer uses it to check what an envelope carries.
"""

from __future__ import annotations

from typing import Literal

from pydantic import SecretStr

TokenKind = Literal[
    "installation",  # ghs_  GitHub App installation token
    "classic_pat",  # ghp_  classic personal access token
    "fine_grained_pat",  # github_pat_  fine-grained personal access token
    "oauth",  # gho_  OAuth app user token
    "user_to_server",  # ghu_  GitHub App user-to-server token
    "refresh",  # ghr_  refresh token
    "unknown",
]

_PREFIXES: tuple[tuple[str, TokenKind], ...] = (
    ("github_pat_", "fine_grained_pat"),
    ("ghs_", "installation"),
    ("ghp_", "classic_pat"),
    ("gho_", "oauth"),
    ("ghu_", "user_to_server"),
    ("ghr_", "refresh"),
)

# Kinds that belong to a person (or a bot account acting like one) rather than an App.
PERSONAL_KINDS: frozenset[TokenKind] = frozenset(
    {"classic_pat", "fine_grained_pat", "oauth", "user_to_server", "refresh"}
)
# What a bot-account identity may present: its own PAT, nothing OAuth-derived.
BOT_PAT_KINDS: frozenset[TokenKind] = frozenset({"classic_pat", "fine_grained_pat"})
# What any worker identity may present: an App installation token or a bot account's PAT.
BOT_KINDS: frozenset[TokenKind] = BOT_PAT_KINDS | {"installation"}


def token_kind(token: SecretStr | str) -> TokenKind:
    value = token.get_secret_value() if isinstance(token, SecretStr) else token
    for prefix, kind in _PREFIXES:
        if value.startswith(prefix):
            return kind
    return "unknown"


def token_prefix(kind: TokenKind) -> str:
    """The prefix that names a kind in messages (safe to show: it is not secret)."""
    for prefix, known in _PREFIXES:
        if known == kind:
            return prefix
    return "unrecognised prefix"


def describe(kind: TokenKind) -> str:
    """``classic pat token (ghp_)``: how messages name a kind without showing the token."""
    return f"{kind.replace('_', ' ')} token ({token_prefix(kind)})"
