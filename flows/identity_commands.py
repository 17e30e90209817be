"""``swarm verify`` and ``swarm exec``: identities checked and lent, never shown.

``swarm exec`` is the pattern's contract for worker programs that are not ours (``gh``, another
agent): the child gets ``GH_TOKEN`` set to a freshly minted installation token limited to one
repository and the role's permissions, and nothing else of the host's GitHub credentials. Its
``gh`` sees an empty configuration directory, git sees no global config or credential helper,
and the token is revoked as soon as the child exits, whatever its exit status.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# Host variables a child must not inherit: they would let it act as someone else.
HIDDEN_ENV = (
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "GH_CONFIG_DIR",
    "GH_HOST",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "XDG_CONFIG_HOME",
    "ANTHROPIC_API_KEY",
)
HIDDEN_PREFIXES = ("SWARM_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")


def child_environment(
    host: Mapping[str, str], token: str, *, config_dir: Path, api_url: str
) -> dict[str, str]:
    """The child's environment: the host's, minus every GitHub credential, plus the bot token."""
    env = {
        key: value
        for key, value in host.items()
        if key not in HIDDEN_ENV and not key.startswith(HIDDEN_PREFIXES)
    }
    env.update(
        {
            "GH_TOKEN": token,
            # gh reads hosts.yml (with the maintainer's login) from here: point it at nothing.
            "GH_CONFIG_DIR": str(config_dir / "gh"),
            "XDG_CONFIG_HOME": str(config_dir),
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GH_PROMPT_DISABLED": "1",
            "GH_NO_UPDATE_NOTIFIER": "1",
            "SWARM_GITHUB_API_URL": api_url,
        }
    )
    host_name = _gh_host(api_url)
    if host_name:
        env["GH_HOST"] = host_name
        env["GH_ENTERPRISE_TOKEN"] = token
    return env


def _gh_host(api_url: str) -> str | None:
    """GitHub Enterprise-style hosts need GH_HOST for gh; github.com does not."""
    from urllib.parse import urlparse

    host = urlparse(api_url).netloc
    return None if host in ("api.github.com", "") else host


def exec_with_token(*, role: str, repo: str, command: Sequence[str]) -> int:
    """Mint, run ``command`` with the token, revoke; the child's exit status is returned."""
    from agents.config import ConfigError, load_settings
    from agents.role_files import load_roles
    from flows.preflight import needs, repo_flags

    repo_flags([repo])
    settings = load_settings()
    roles = load_roles(settings.roles_dir)
    if role not in roles:
        known = ", ".join(sorted(roles))
        raise ConfigError(f"--role: no role {role!r} in {settings.roles_dir} (known: {known})")
    spec = roles[role]
    settings = load_settings(needs=needs(identities=[spec.identity]))
    from agents.identity import TokenScope
    from agents.identity.sources import open_identity

    source = open_identity(settings, spec.identity, per_worker=True)
    try:
        scope = TokenScope(repositories=(repo,), permissions=dict(spec.permissions))
        lease = source.acquire(scope, role=role, holder=f"exec:{role}")
        try:
            with tempfile.TemporaryDirectory(prefix="swarm-exec-") as tmp:
                (Path(tmp) / "gh").mkdir()
                env = child_environment(
                    os.environ,
                    lease.token.get_secret_value(),
                    config_dir=Path(tmp),
                    api_url=settings.github_api_url,
                )
                try:
                    completed = subprocess.run(list(command), env=env, check=False)
                except FileNotFoundError:
                    raise ConfigError(f"cannot run {command[0]!r}: no such program") from None
                return completed.returncode
        finally:
            source.release(lease)
    finally:
        source.close()


def verify_identities() -> int:
    """Print each identity's login, kind and what each of its roles can be granted."""
    from agents.config import load_settings
    from flows.preflight import needs

    settings = load_settings(needs=needs(any_identity=True))
    maintainer = settings.require_maintainer_login()
    from agents.identity import IdentityError, TokenScope
    from agents.identity.sources import open_identity
    from agents.role_files import load_roles
    from flows.console import console, table

    roles = load_roles(settings.roles_dir)
    identities = settings.all_identities()
    rows: list[list[Any]] = []
    failures = 0
    for name, ident in sorted(identities.items()):
        users = sorted(r.id for r in roles.values() if r.identity == name)
        try:
            source = open_identity(settings, name, per_worker=True)
        except Exception as exc:
            rows.append([name, ident.kind, "-", "-", f"FAILED: {exc}"])
            failures += 1
            continue
        try:
            login = source.bot_login()
            if login.lower() == maintainer.lower():
                rows.append([name, ident.kind, login, "-", "FAILED: this is the maintainer"])
                failures += 1
                continue
            checked = _check_roles(source, roles, users, settings.repos, TokenScope)
            rows.append([name, ident.kind, login, ", ".join(users) or "(no role)", checked])
        except IdentityError as exc:
            rows.append([name, ident.kind, "-", ", ".join(users), f"FAILED: {exc}"])
            failures += 1
        finally:
            source.close()
    console.print(table("identities", ["identity", "kind", "login", "roles", "check"], rows))
    return 1 if failures else 0


def _check_roles(
    source: Any, roles: Mapping[str, Any], users: Sequence[str], repos: Sequence[str], scope: Any
) -> str:
    """Mint (and revoke at once) each role's scope over the configured repositories."""
    if not repos:
        return "login ok (set SWARM_REPOS to test-mint each role's token)"
    # One installation token covers one owner: test with the first owner's repositories.
    owner = repos[0].split("/", 1)[0].lower()
    repos = [r for r in repos if r.split("/", 1)[0].lower() == owner]
    granted: list[str] = []
    for role_id in users:
        permissions = dict(roles[role_id].permissions)
        lease = source.acquire(
            scope(repositories=tuple(repos), permissions=permissions),
            role=role_id,
            holder=f"verify:{role_id}",
        )
        try:
            got = lease.record.permissions if lease.record else permissions
            granted.append(f"{role_id}: " + ", ".join(f"{k}:{v}" for k, v in sorted(got.items())))
        finally:
            source.release(lease)
    return "ok; " + "; ".join(granted)
