"""What a name typed on the command line is checked against: the roles on disk, and the
repositories and identities configured or recorded in the store. A near miss of a known name is
a typo, refused with a "did you mean"; a memory under a misspelt repository is one no worker
would ever see, and an audit of a misspelt login answers "nothing happened"."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agents.settings.model import Settings
    from agents.store import Store


def check_role(role: str, settings: Settings) -> None:
    """A role must be a file in the roles folder: no worker runs as any other."""
    from agents.permissions import did_you_mean
    from agents.settings.model import ConfigError

    roles = {path.stem for path in settings.roles_dir.glob("*.yaml")}
    if roles and role not in roles:
        raise ConfigError(
            f"--role: no role {role!r} in {settings.roles_dir}{did_you_mean(role, roles)}"
        )


def check_repo(repo: str, store: Store, settings: Settings) -> None:
    """A repository neither configured nor recorded that is a near miss of one that is: a
    typo. A name like no other is a new repository, and welcome."""
    from agents.permissions import did_you_mean
    from agents.settings.model import ConfigError

    known = set(settings.repos)
    known |= {str(w.task.get("repo")) for w in store.list_workers() if w.task.get("repo")}
    known |= {m.repo for m in store.list_memories(states=None) if m.repo}
    hint = did_you_mean(repo, known) if repo not in known else ""
    if hint:
        raise ConfigError(f"--repo: {repo} is neither in SWARM_REPOS nor in any run{hint}")


def check_identity(identity: str, store: Store, settings: Settings) -> None:
    """An audit asks about a login swarm used: configured, or recorded doing work. Any other
    would answer "no recorded writes", which is not the truth about a typo."""
    from agents.permissions import did_you_mean
    from agents.settings.model import ConfigError

    known = {i.bot_login for i in settings.all_identities().values() if i.bot_login}
    known |= {w.identity_login for w in store.list_workers() if w.identity_login}
    known |= {r.identity for r in store.latest_rate_limits()}
    if identity in known:
        return
    listed = f"; known: {', '.join(sorted(known))}" if known else ""
    hint = did_you_mean(identity, known)
    raise ConfigError(f"--identity: swarm never worked as {identity!r}{hint or listed}")
