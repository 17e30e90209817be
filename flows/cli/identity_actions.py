"""``swarm verify`` and ``swarm exec``: identities checked and lent, never shown.

``swarm exec`` is the pattern's contract for worker programs that are not ours (``gh``, another
agent): the child gets ``GH_TOKEN`` set to a freshly minted installation token limited to one
repository and the role's permissions, in an environment built from an allow-list with a fresh
temporary HOME (:mod:`flows.cli.exec_env`), and nothing of the host's credentials. The token is
revoked and the HOME removed as soon as the child exits, whatever its exit status.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agents.identity.minter import InstallationMinter
    from agents.roles import Role
    from agents.settings.model import Settings


def exec_with_token(
    *, role: str, repo: str, command: Sequence[str], env_names: Sequence[str] = ()
) -> int:
    """Mint, run ``command`` with the token, revoke; the child's exit status is returned.

    The child's environment is built from an allow-list (:mod:`flows.cli.exec_env`) plus the host
    variables named in ``env_names``; those are checked before any token is minted.
    """
    from agents.roles.files import load_roles
    from agents.settings.model import ConfigError, load_settings
    from flows.cli.preflight import needs, repo_flags

    repo_flags([repo])
    settings = load_settings()
    roles = load_roles(settings.roles_dir)
    if role not in roles:
        known = ", ".join(sorted(roles))
        raise ConfigError(f"--role: no role {role!r} in {settings.roles_dir} (known: {known})")
    spec = roles[role]
    settings = load_settings(needs=needs(identities=[spec.identity]))
    from flows.cli.exec_env import chosen_variables, host_secrets

    chosen = chosen_variables(env_names, os.environ, host_secrets(settings, os.environ))
    return asyncio.run(_exec_as(settings, spec, role, repo, command, chosen))


async def _exec_as(
    settings: Settings,
    spec: Role,
    role: str,
    repo: str,
    command: Sequence[str],
    chosen: Mapping[str, str],
) -> int:
    """Mint for ``spec``'s identity, run the child, revoke: one event loop from mint to revoke,
    which the child's run holds up (nothing else runs on it meanwhile)."""
    from agents.identity import TokenScope
    from agents.identity.sources import open_identity
    from agents.settings.model import ConfigError
    from flows.cli.exec_env import child_environment

    source = open_identity(settings, spec.identity, per_worker=True)
    try:
        scope = TokenScope(repositories=(repo,), permissions=dict(spec.permissions))
        lease = await source.acquire(scope, role=role, holder=f"exec:{role}")
        try:
            with child_environment(
                os.environ,
                lease.token.get_secret_value(),
                api_url=settings.github_api_url,
                chosen=chosen,
            ) as env:
                try:
                    completed = subprocess.run(list(command), env=env, check=False)
                except FileNotFoundError:
                    raise ConfigError(f"cannot run {command[0]!r}: no such program") from None
                return completed.returncode
        finally:
            await source.release(lease)
    finally:
        await source.aclose()


def verify_identities() -> int:
    """Print each identity's login, kind, effective grant and what each of its roles can be
    granted. Exit 2 when an identity is refused (a configuration to fix), 1 on other failures."""
    from agents.settings.model import load_settings
    from flows.cli.preflight import needs

    settings = load_settings(needs=needs(any_identity=True))
    from flows.cli.console import print_table, say

    checks = asyncio.run(_check_identities(settings))
    columns = ["identity", "kind", "login", "roles", "check"]
    print_table("identities", columns, checks.rows, wraps={"roles", "check"})
    # Below the table, whole: a cell folds a long line over several.
    for block in checks.blocks:
        for line in block:
            say(line)
    for line in checks.grants + checks.events + checks.threads + checks.refusals:
        say(line)
    return 2 if checks.refusals else 1 if checks.failed else 0


@dataclass
class _Checks:
    """What ``swarm verify`` found: a table row per identity, and the lines below it."""

    rows: list[list[Any]] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    grants: list[str] = field(default_factory=list)
    # Events the webhook's App is not subscribed to: work GitHub never sends it.
    events: list[str] = field(default_factory=list)
    # Whether each App identity resolves fixed findings' threads, and what is missing if not.
    threads: list[str] = field(default_factory=list)
    # Per identity: its ceiling, what the installation grants, the repositories it reaches.
    blocks: list[list[str]] = field(default_factory=list)
    failed: int = 0


async def _check_identities(settings: Settings) -> _Checks:
    from agents.identity import IdentityBlocked, IdentityError, TokenScope
    from agents.identity.minter import InstallationMinter
    from agents.identity.pat import BotPatIdentity
    from agents.identity.sources import open_identity
    from agents.kinds.kind import kind_named
    from agents.roles.files import load_roles
    from agents.settings.model import DEFAULT_IDENTITY, ConfigError
    from agents.transport import GitHubUnreachable
    from flows.cli.identity_blocks import identity_block

    maintainer = settings.require_maintainer_login()
    roles = load_roles(settings.roles_dir)
    found = _Checks()
    rows, refusals = found.rows, found.refusals
    for name, ident in sorted(settings.all_identities().items()):
        users = sorted(r.id for r in roles.values() if r.identity == name)
        try:
            source = open_identity(settings, name, per_worker=True)
        except Exception as exc:
            rows.append([name, ident.kind, "-", "-", f"FAILED: {exc}"])
            if isinstance(exc, ConfigError):
                refusals.append(f"identity {name!r}: {exc}")
            else:
                found.failed += 1
            continue
        try:
            login = await source.bot_login()
            if login.lower() == maintainer.lower():
                rows.append([name, ident.kind, login, "-", "FAILED: this is the maintainer"])
                refusals.append(f"identity {name!r}: BLOCKED: {login} is the maintainer")
                continue
            block, over = await identity_block(source, name, login, settings.repos)
            found.blocks.append(block)
            if over is not None:
                rows.append([name, ident.kind, login, ", ".join(users) or "-", "FAILED: refused"])
                refusals.append(over)
                continue
            checked = await _check_roles(source, roles, users, settings.repos, TokenScope)
            if isinstance(source, BotPatIdentity):
                grant = await source.grant()
                found.grants.append(f"identity {name!r} ({login}): grant: {grant.text()}")
            if isinstance(source, InstallationMinter) and name == DEFAULT_IDENTITY:
                found.events += await _unsubscribed(source, name, login, settings)
            # Only a reviewing role resolves the threads of its fixed findings; the writer never
            # resolves a thread (the reviewer who opened it does), so its App is not asked.
            reviews = any(
                roles[r].permissions.get("pull_requests") == "write"
                and kind_named(roles[r].kind).ceiling != "writing"
                for r in users
            )
            if isinstance(source, InstallationMinter) and reviews:
                found.threads.append(await _thread_resolution(source, name, login, settings))
            rows.append([name, ident.kind, login, ", ".join(users) or "(no role)", checked])
        except (IdentityError, GitHubUnreachable) as exc:
            rows.append([name, ident.kind, "-", ", ".join(users), f"FAILED: {exc}"])
            if isinstance(exc, IdentityBlocked):
                refusals.append(f"identity {name!r}: {exc}")
            else:
                found.failed += 1
        finally:
            await source.aclose()
    return found


async def _unsubscribed(
    source: InstallationMinter, name: str, login: str, settings: Settings
) -> list[str]:
    """The events the swarm acts on that the App taking the webhook (the default identity's)
    is not subscribed to, as a line to print; none for an App without any events and no
    webhook secret configured (it is polled, not sent events)."""
    from agents.events.routing import EVENT_TITLES, EVENTS_ACTED_ON

    events = await source.app_events()
    if not events and settings.webhook_secret_file is None:
        return []
    missing = [e for e in EVENTS_ACTED_ON if e not in events]
    if not missing:
        return [
            f"identity {name!r} ({login}): webhook events: all {len(EVENTS_ACTED_ON)} subscribed"
        ]
    named = ", ".join(f"{EVENT_TITLES[e]} ({e})" for e in missing)
    return [
        f"identity {name!r} ({login}): the App is not subscribed to {named}: GitHub never "
        "sends these to the webhook (the App's settings, Permissions & events; "
        "docs/events.md names what each is for)"
    ]


async def _thread_resolution(
    source: InstallationMinter, name: str, login: str, settings: Settings
) -> str:
    """One line: whether the App resolves fixed findings' threads, or what is missing."""
    from agents.identity.resolution import missing_for_resolution

    missing = await missing_for_resolution(source, opted_in=settings.resolve_threads)
    if missing is None:
        return (
            f"identity {name!r} ({login}): threads of fixed findings: resolved with a "
            "separate Contents: write token for that repository, revoked at once"
        )
    return f"identity {name!r} ({login}): threads of fixed findings NOT resolved: {missing}"


async def _check_roles(
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
        lease = await source.acquire(
            scope(repositories=tuple(repos), permissions=permissions),
            role=role_id,
            holder=f"verify:{role_id}",
        )
        try:
            got = lease.record.permissions if lease.record else permissions
            granted.append(f"{role_id}: " + ", ".join(f"{k}:{v}" for k, v in sorted(got.items())))
        finally:
            await source.release(lease)
    return "; ".join(["ok", *granted])
