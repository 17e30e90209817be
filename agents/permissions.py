"""The worker permission ceiling and the GitHub App permission allow-list, in one place.

Roles are checked against the ceiling when they load; the identity layer checks the same table
before it mints a token and again against the permissions the mint response granted. githubkit
silently drops a misspelled key (``pull_request`` -> ``{}``), which GitHub may read as "all
permissions", so every key is checked against the allow-list, not only the ceiling.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

LEVELS: Final[tuple[str, ...]] = ("read", "write")
_RANK: Final[dict[str, int]] = {"read": 1, "write": 2, "admin": 3}

# The most any worker token may carry. Never contents:write, administration, workflows, secrets.
WORKER_CEILING: Final[Mapping[str, str]] = {
    "issues": "write",
    "pull_requests": "write",
    "contents": "read",
    "metadata": "read",
}

# The one exception to the ceiling: what GitHub requires of an App's installation token to
# resolve a review thread (contents:write; pull_requests:write with contents:read is refused,
# github/gh-aw#35726). Only code holds it: minted for one repository, used for the resolve
# mutations alone and revoked at once, never in an envelope (agents.identity.resolution).
THREAD_RESOLUTION: Final[Mapping[str, str]] = {
    "contents": "write",
    "pull_requests": "write",
    "metadata": "read",
}

# Repository, organization and account permission names a GitHub App token can request.
KNOWN_PERMISSION_KEYS: Final[frozenset[str]] = frozenset(
    {
        "actions",
        "administration",
        "artifact_metadata",
        "attestations",
        "checks",
        "codespaces",
        "contents",
        "custom_properties",
        "dependabot_secrets",
        "deployments",
        "discussions",
        "email_addresses",
        "environments",
        "followers",
        "git_ssh_keys",
        "gpg_keys",
        "interaction_limits",
        "issues",
        "members",
        "merge_queues",
        "metadata",
        "organization_administration",
        "organization_announcement_banners",
        "organization_copilot_seat_management",
        "organization_custom_org_roles",
        "organization_custom_properties",
        "organization_custom_roles",
        "organization_events",
        "organization_hooks",
        "organization_packages",
        "organization_personal_access_token_requests",
        "organization_personal_access_tokens",
        "organization_plan",
        "organization_projects",
        "organization_secrets",
        "organization_self_hosted_runners",
        "organization_user_blocking",
        "packages",
        "pages",
        "profile",
        "pull_requests",
        "repository_custom_properties",
        "repository_hooks",
        "repository_projects",
        "secret_scanning_alerts",
        "secrets",
        "security_events",
        "single_file",
        "starring",
        "statuses",
        "team_discussions",
        "vulnerability_alerts",
        "workflows",
    }
)


@dataclass(frozen=True)
class PermissionProblem:
    """One refused permission entry; ``key`` lets callers point at the offending line."""

    key: str
    message: str


def _ceiling_text() -> str:
    return ", ".join(f"{key}:{level}" for key, level in WORKER_CEILING.items())


def did_you_mean(word: str, choices: frozenset[str] | set[str] | Mapping[str, object]) -> str:
    """A `` (did you mean 'x'?)`` suffix for a near miss, or an empty string."""
    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def permission_problems(perms: Mapping[str, object]) -> list[PermissionProblem]:
    """Every way ``perms`` breaks the allow-list or the worker ceiling, in key order."""
    problems: list[PermissionProblem] = []
    for key, level in perms.items():
        where = f"permissions.{key}"
        if key not in KNOWN_PERMISSION_KEYS:
            hint = did_you_mean(key, KNOWN_PERMISSION_KEYS)
            problems.append(PermissionProblem(key, f"{where}: unknown permission {key!r}{hint}"))
            continue
        if not isinstance(level, str) or level not in _RANK:
            problems.append(
                PermissionProblem(key, f"{where}: {level!r} is not a level (use read or write)")
            )
            continue
        ceiling = WORKER_CEILING.get(key)
        if ceiling is None:
            problems.append(
                PermissionProblem(
                    key,
                    f"{where}: {level!r} is outside the worker ceiling ({_ceiling_text()})",
                )
            )
        elif _RANK[level] > _RANK[ceiling]:
            problems.append(
                PermissionProblem(
                    key, f"{where}: {level!r} exceeds the worker ceiling ({key}:{ceiling})"
                )
            )
    return problems


def check_permissions(perms: Mapping[str, object], who: str) -> list[str]:
    """Readable refusals for ``perms`` requested by ``who`` (e.g. ``role 'reviewer'``)."""
    return [f"{who}: {problem.message}" for problem in permission_problems(perms)]


def within(granted: Mapping[str, str], needed: Mapping[str, str]) -> bool:
    """True when ``granted`` includes every ``needed`` permission at its level or above."""
    return all(
        key in granted and _RANK.get(granted[key], 0) >= _RANK.get(level, 99)
        for key, level in needed.items()
    )


def lower_level(a: str, b: str) -> str:
    """The narrower of two permission levels."""
    return a if _RANK.get(a, 0) <= _RANK.get(b, 0) else b
