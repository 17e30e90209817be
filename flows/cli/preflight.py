"""What a command needs before it starts, checked at once and before Prefect spends seconds.

Every missing setting is named in one message (not one per attempt), flags are named as flags
(``--repo``), and with nothing configured at all the message points at the demo and the sandbox.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from agents.roles import Role
    from agents.settings.model import IdentitySettings, Settings

APP_SETTINGS = ("APP_ID", "PRIVATE_KEY_FILE", "INSTALLATION_ID")
SCRIPTED = "scripted"


def identity_settings(settings: Settings, name: str) -> list[str]:
    """The variables identity ``name`` still needs."""
    from agents.settings.model import DEFAULT_IDENTITY
    from agents.settings.names import identity_setting

    if name.lower() == DEFAULT_IDENTITY:
        return settings.default_identity_missing()
    return [identity_setting(name, field) for field in APP_SETTINGS]


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
        used = configured if any_identity else {n.lower(): None for n in identities}
        for name in used:
            if name in configured:
                found += missing_files(name, configured[name])
        if not settings.maintainer_login:
            found.append("SWARM_MAINTAINER_LOGIN")
        if repos and not settings.repos:
            found.append("SWARM_REPOS (or --repo OWNER/NAME)")
        return found

    return missing


def missing_files(name: str, identity: IdentitySettings) -> list[str]:
    """The key or token file an identity names and that is not there, as its setting."""
    from agents.settings.model import DEFAULT_IDENTITY

    prefix = "SWARM_APP_" if name == DEFAULT_IDENTITY else f"SWARM_IDENTITIES__{name.upper()}__"
    found = []
    for field, path in (
        ("PRIVATE_KEY_FILE", identity.private_key_file),
        ("TOKEN_FILE", identity.token_file),
    ):
        if path is not None and not path.is_file():
            found.append(f"{prefix}{field} (no file at {path})")
    return found


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
    problem = role_problem(settings, roles, role)
    if problem:
        raise ConfigError(problem)
    return roles[role]


def role_problem(settings: Settings, roles: Mapping[str, Role], role: str) -> str | None:
    """What is wrong with ``--role`` as the role of a run, if anything."""
    if role not in roles:
        known = ", ".join(sorted(roles))
        return f"--role: no role {role!r} in {settings.roles_dir} (known: {known})"
    from agents.kinds import kind_names
    from agents.kinds.book import RoleBook

    kind = RoleBook(roles).kind_of(role)
    if kind is None or kind.discover is None:
        runs = [k for k in kind_names() if RoleBook(roles).role_for(k) and k != roles[role].kind]
        return (
            f"--role: role {role!r} does {roles[role].kind} work, which is planned inside "
            f"another kind's run and finds no work of its own (run a role of: {', '.join(runs)})"
        )
    return None


def role_model_problems(
    settings: Settings, roles: Mapping[str, Role], folder: Path | None = None
) -> list[str]:
    """Each role file (of ``folder``, default the roles directory) whose ``model:`` names a
    model the registry does not know."""
    found = []
    for name, role in sorted(roles.items()):
        if role.model:
            where = f"{(folder or settings.roles_dir) / name}.yaml: model"
            found.append(settings.model_problem(role.model, where))
    return [p for p in found if p]


def model_needs(settings: Settings, model: str | None) -> list[str]:
    """A Claude model needs an API key; the scripted model needs nothing."""
    chosen = model or settings.model
    if chosen != SCRIPTED and settings.anthropic_api_key is None:
        return [f"ANTHROPIC_API_KEY (or --model {SCRIPTED})"]
    return []


def model_flag_problems(settings: Settings, model: str | None) -> list[str]:
    """``--model``, when given, names a model the registry knows."""
    if model is None or model == settings.model:
        return []  # the setting's own check names it
    problem = settings.model_problem(model, "--model")
    return [problem] if problem else []


def preflight(
    *,
    repos: Sequence[str] | None,
    role: str,
    model: str | None = None,
    overlay: str | None = None,
    targets: Sequence[str] = (),
) -> Settings:
    """``swarm run``'s checks: flags, settings, the role and its identity, the overlay role, the
    model and its key, the store, every problem of them in one message. ``targets``
    (``OWNER/NAME#N``) stand in for ``--repo``."""
    from agents.roles.files import load_roles
    from agents.settings.model import load_settings

    def run_needs(settings: Settings) -> list[str]:
        roles = load_roles(settings.roles_dir)
        wanted = needs(repos=not targets)(settings)
        if role_problem(settings, roles, role) is None:
            wanted = needs(identities=[roles[role].identity], repos=not targets)(settings)
        return wanted + model_needs(settings, model)

    def run_checks(settings: Settings) -> list[str]:
        roles = load_roles(settings.roles_dir)
        found = [role_problem(settings, roles, role), overlay_problem(settings, roles, overlay)]
        found += model_flag_problems(settings, model) + role_model_problems(settings, roles)
        return [p for p in found if p]

    overrides = repo_flags(repos)
    if targets:
        overrides = {"repos": list(dict.fromkeys(t.split("#", 1)[0] for t in targets))}
    settings = load_settings(needs=run_needs, checks=run_checks, **overrides)
    check_store(settings)
    return settings


def overlay_problem(
    settings: Settings, roles: Mapping[str, Role], overlay: str | None
) -> str | None:
    """``--overlay`` names a role of ``roles/`` (any command that lays a session overlay)."""
    if overlay is None or overlay in roles:
        return None
    known = ", ".join(sorted(roles))
    return f"--overlay: no role {overlay!r} in {settings.roles_dir} (known: {known})"


def serving_checks(
    overlay: str | None, model: str | None = None
) -> Callable[[Settings], list[str]]:
    """For :func:`agents.settings.model.load_settings` in commands that start runs later
    (``swarm serve``, ``swarm webhook serve``): their ``--overlay`` and ``--model``, and the role
    files' models, checked now rather than at the first run."""

    def checks(settings: Settings) -> list[str]:
        from agents.roles.files import load_roles

        roles = load_roles(settings.roles_dir)
        found = [overlay_problem(settings, roles, overlay)]
        found += model_flag_problems(settings, model) + role_model_problems(settings, roles)
        return [p for p in found if p]

    return checks
