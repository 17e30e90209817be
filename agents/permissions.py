"""The worker permission ceilings and the GitHub App permission allow-list, in one place.

Each identity has one ceiling, named by its ``ceiling`` setting: a reviewing identity (the
default) never holds contents:write; the writer identity (its own App) does, and only code that
writes its own branch uses it. Roles are checked against the reviewing ceiling when they load;
the identity layer checks the identity's ceiling before it mints a token and again against the
permissions the mint response granted. githubkit
silently drops a misspelled key (``pull_request`` -> ``{}``), which GitHub may read as "all
permissions", so every key is checked against the allow-list, not only the ceiling.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Final

from pydantic import AfterValidator

LEVELS: Final[tuple[str, ...]] = ("read", "write")
_RANK: Final[dict[str, int]] = {"read": 1, "write": 2, "admin": 3}

# The most any worker token may carry. Never contents:write, administration, workflows, secrets.
WORKER_CEILING: Final[Mapping[str, str]] = {
    "issues": "write",
    "pull_requests": "write",
    "contents": "read",
    "metadata": "read",
}

# The writer identity's ceiling (DESIGN rule 3): its own App, which pushes its own branch.
WRITER_CEILING: Final[Mapping[str, str]] = {
    "contents": "write",
    "pull_requests": "write",
    "issues": "write",
    "metadata": "read",
}

# Every ceiling an identity may declare; a closed set, so a typo is refused, not widened.
CEILINGS: Final[Mapping[str, Mapping[str, str]]] = {
    "reviewing": WORKER_CEILING,
    "writing": WRITER_CEILING,
}
DEFAULT_CEILING: Final[str] = "reviewing"

# Never in any ceiling, whatever an identity declares.
NEVER_GRANTED: Final[frozenset[str]] = frozenset({"administration", "secrets", "workflows"})

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


def ceiling_of(name: str) -> Mapping[str, str]:
    """The permissions an identity declaring ceiling ``name`` may hold; refuses an unknown name."""
    if name not in CEILINGS:
        raise ValueError(ceiling_name_problem(name))
    return CEILINGS[name]


def ceiling_name_problem(name: str) -> str:
    """One line for a ceiling name outside the closed set, with the near miss if any."""
    known = " or ".join(CEILINGS)
    return f"{name!r} is not a ceiling (use {known}){did_you_mean(name, set(CEILINGS))}"


def known_ceiling(name: str) -> str:
    """``name`` when it is a ceiling; else the one-line problem, as a validation error."""
    ceiling_of(name)
    return name


# A ceiling's name wherever a model carries one (an identity's settings, a claim in an
# envelope): one check, so a typo reads the same from either.
CeilingName = Annotated[str, AfterValidator(known_ceiling)]


def ceiling_text(ceiling: Mapping[str, str]) -> str:
    return ", ".join(f"{key}:{level}" for key, level in ceiling.items())


def did_you_mean(word: str, choices: frozenset[str] | set[str] | Mapping[str, object]) -> str:
    """A `` (did you mean 'x'?)`` suffix for a near miss, or an empty string."""
    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def permission_problems(
    perms: Mapping[str, object], ceiling: str = DEFAULT_CEILING
) -> list[PermissionProblem]:
    """Every way ``perms`` breaks the allow-list or the ``ceiling`` named, in key order."""
    limit = ceiling_of(ceiling)
    # A reviewing identity's refusals read as before; a writer's name its ceiling.
    label = "worker ceiling" if ceiling == DEFAULT_CEILING else f"{ceiling} ceiling"
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
        top = None if key in NEVER_GRANTED else limit.get(key)
        if top is None:
            problems.append(
                PermissionProblem(
                    key,
                    f"{where}: {level!r} is outside the {label} ({ceiling_text(limit)})",
                )
            )
        elif _RANK[level] > _RANK[top]:
            problems.append(
                PermissionProblem(key, f"{where}: {level!r} exceeds the {label} ({key}:{top})")
            )
    return problems


def check_permissions(
    perms: Mapping[str, object], who: str, ceiling: str = DEFAULT_CEILING
) -> list[str]:
    """Readable refusals for ``perms`` requested by ``who`` (e.g. ``role 'reviewer'``) under the
    ``ceiling`` its identity declares."""
    return [f"{who}: {problem.message}" for problem in permission_problems(perms, ceiling)]


def within(granted: Mapping[str, str], needed: Mapping[str, str]) -> bool:
    """True when ``granted`` includes every ``needed`` permission at its level or above."""
    return all(
        key in granted and _RANK.get(granted[key], 0) >= _RANK.get(level, 99)
        for key, level in needed.items()
    )


def lower_level(a: str, b: str) -> str:
    """The narrower of two permission levels."""
    return a if _RANK.get(a, 0) <= _RANK.get(b, 0) else b
