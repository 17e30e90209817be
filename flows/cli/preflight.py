"""What a command needs before it starts, checked at once and before Prefect spends seconds.

Every missing setting is named in one message (not one per attempt), flags are named as flags
(``--repo``), and with nothing configured at all the message points at the demo and the sandbox.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agents.roles import Role
    from agents.settings.model import Settings

APP_SETTINGS = ("APP_ID", "PRIVATE_KEY_FILE", "INSTALLATION_ID")
SCRIPTED = "scripted"


def identity_settings(settings: Settings, name: str) -> list[str]:
    """The variables identity ``name`` still needs."""
    from agents.settings.model import DEFAULT_IDENTITY

    if name.lower() == DEFAULT_IDENTITY:
        return settings.default_identity_missing()
    return [f"SWARM_IDENTITIES__{name.upper()}__{field}" for field in APP_SETTINGS]


def needs(
    *, identities: Sequence[str] = (), repos: bool = False, any_identity: bool = False
) -> Callable[[Settings], list[str]]:
    """For :func:`agents.settings.model.load_settings`: the settings a command needs and lacks,
    all of them: the identities named (or any identity at all), the maintainer login,
    repositories."""

    def missing(settings: Settings) -> list[str]:
        configured = settings.all_identities()
        found: list[str] = []
        for name in identities:
            if name.lower() not in configured:
                found += identity_settings(settings, name)
        if any_identity and not configured:
            found += identity_settings(settings, "default")
        if not settings.maintainer_login:
            found.append("SWARM_MAINTAINER_LOGIN")
        if repos and not settings.repos:
            found.append("SWARM_REPOS (or --repo OWNER/NAME)")
        return found

    return missing


def repo_flags(repos: Sequence[str] | None, flag: str = "--repo") -> dict[str, Any]:
    """Settings overrides from ``--repo`` values, each checked and named as the flag typed."""
    from agents.settings.checks import repo_problem
    from agents.settings.model import ConfigError

    for repo in repos or ():
        problem = repo_problem(repo)
        if problem:
            raise ConfigError(f"{flag}: {problem}")
    return {"repos": list(repos)} if repos else {}


def check_store(settings: Settings) -> None:
    """Open and close the store: a wrong URL or an unreachable database is one line now,
    not a failed flow run later."""
    from agents.store import Store

    Store.open(settings.store_url, settings.data_dir).close()


def target_flags(
    targets: Sequence[str] | None, repos: Sequence[str] | None, force: bool
) -> list[str]:
    """``--pr`` values as ``OWNER/NAME#N`` (a bare ``N`` takes the one ``--repo``)."""
    from agents.settings.model import ConfigError
    from agents.work import parse_target

    if force and not targets:
        raise ConfigError("--force: only with --pr (forcing every open PR is not offered)")
    found: list[str] = []
    for value in targets or ():
        text = value.strip()
        if text.isdigit():
            if not repos or len(repos) != 1:
                raise ConfigError(f"--pr {text}: a bare number needs exactly one --repo")
            text = f"{repos[0]}#{text}"
        try:
            repo, number = parse_target(text)
        except ValueError as exc:
            raise ConfigError(f"--pr: {exc}") from None
        found.append(f"{repo}#{number}")
    return found


def reviewing_role(settings: Settings, role: str) -> Role:
    """``--role``, which must exist and post reviews (``swarm run`` dispatches one per PR) or
    comment on issues (the triager, one per open issue not yet triaged)."""
    from agents.roles.files import load_roles
    from agents.settings.model import ConfigError

    roles = load_roles(settings.roles_dir)
    if role not in roles:
        known = ", ".join(sorted(roles))
        raise ConfigError(f"--role: no role {role!r} in {settings.roles_dir} (known: {known})")
    tools = roles[role].tools
    if "submit_review" not in tools and "comment_issue" not in tools:
        raise ConfigError(
            f"--role: role {role!r} neither reviews pull requests (submit_review) nor triages "
            "issues (comment_issue); swarm run dispatches one of those per PR or issue"
        )
    return roles[role]


def model_needs(settings: Settings, model: str | None) -> list[str]:
    """A Claude model needs an API key; the scripted model needs nothing."""
    chosen = model or settings.model
    if chosen != SCRIPTED and settings.anthropic_api_key is None:
        return [f"ANTHROPIC_API_KEY (or --model {SCRIPTED})"]
    return []


def preflight(
    *,
    repos: list[str] | None,
    role: str,
    model: str | None = None,
    overlay: str | None = None,
    targets: Sequence[str] = (),
) -> Settings:
    """``swarm run``'s checks: flags, settings, the role and its identity, the overlay role, the
    model's key, the store. ``targets`` (``OWNER/NAME#N``) stand in for ``--repo``."""
    from agents.settings.model import load_settings

    def run_needs(settings: Settings) -> list[str]:
        identity = reviewing_role(settings, role).identity
        wanted = needs(identities=[identity], repos=not targets)(settings)
        return wanted + model_needs(settings, model)

    from flows.run.models import check_model

    overrides = repo_flags(repos)
    if targets:
        overrides = {"repos": list(dict.fromkeys(t.split("#", 1)[0] for t in targets))}
    settings = load_settings(needs=run_needs, **overrides)
    check_model(settings, model)
    check_overlay(settings, overlay)
    check_store(settings)
    return settings


def check_overlay(settings: Settings, overlay: str | None) -> None:
    """``--overlay`` names a role of ``roles/`` (any command that lays a session overlay)."""
    if overlay is None:
        return
    from agents.roles.files import load_roles
    from agents.settings.model import ConfigError

    roles = load_roles(settings.roles_dir)
    if overlay not in roles:
        known = ", ".join(sorted(roles))
        raise ConfigError(
            f"--overlay: no role {overlay!r} in {settings.roles_dir} (known: {known})"
        )
