"""``swarm roles check``: role files validated, and their identities resolved when configured."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def identity_problems(
    roles: Mapping[str, Any], folder: Path, configured: Mapping[str, object]
) -> list[str]:
    """``path:line: identity: ...`` for every role whose identity is not configured."""
    from agents.permissions import did_you_mean

    problems = []
    for role in sorted(roles.values(), key=lambda r: r.id):
        name = str(role.identity).lower()
        if name in configured:
            continue
        known = ", ".join(sorted(configured))
        problems.append(
            f"{_where(folder, role.id)}: identity: {role.identity!r} is not a configured "
            f"identity (configured: {known}){did_you_mean(name, set(configured))}"
        )
    return problems


def _where(folder: Path, role_id: str) -> str:
    """The role file and the line of its ``identity:`` key, as the role loader names places."""
    from agents.roles.files import key_line

    for path in (folder / f"{role_id}.yaml", folder / f"{role_id}.yml"):
        if path.is_file():
            return f"{path}:{key_line(path, 'identity')}"
    return str(folder / f"{role_id}.yaml")


def check_roles(directory: Path | None) -> None:
    from agents.roles.files import RoleLoadError, read_roles
    from agents.settings.model import load_settings
    from flows.cli.console import print_table
    from flows.cli.preflight import role_model_problems

    settings = load_settings()
    folder = directory or settings.roles_dir
    # One pass: the files' own problems, then what the valid roles ask of the settings, all in
    # one error, so fixing a typo never uncovers the next problem only on the next run.
    roles, problems = read_roles(folder)
    configured = settings.all_identities()
    # Without any identity configured there is nothing to resolve against (a fresh checkout).
    problems += identity_problems(roles, folder, configured) if configured else []
    problems += role_model_problems(settings, roles, folder)
    problems.sort(key=lambda problem: problem.split(":", 1)[0])  # by file; stable within one
    if problems:
        raise RoleLoadError(problems)
    resolved = "identities resolved" if configured else "identities not checked (none configured)"
    print_table(
        f"{len(roles)} role(s) in {folder}: all valid; {resolved}",
        ["role", "identity", "permissions", "tools", "model", "limits"],
        (
            [
                r.id,
                r.identity,
                ", ".join(f"{k}:{v}" for k, v in sorted(r.permissions.items())),
                ", ".join(r.tools),
                r.model or "(SWARM_MODEL)",
                f"{r.limits.max_turns} turns, ${r.limits.max_cost_usd:g}",
            ]
            for r in sorted(roles.values(), key=lambda r: r.id)
        ),
        wraps={"permissions", "tools", "limits"},
    )
