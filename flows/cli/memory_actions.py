"""``swarm memory list|add|edit|rm``: user-visible memory, with errors that name the flag."""

from __future__ import annotations

import getpass
from typing import TYPE_CHECKING, Any

from flows.cli.store_actions import open_store

if TYPE_CHECKING:
    from agents.store import Store


def origin(record: Any) -> str:
    """``run R / worker W / PR #N``: the parts of provenance the row has."""
    parts = []
    if getattr(record, "run_id", None):
        parts.append(f"run {record.run_id}")
    if getattr(record, "worker_id", None):
        parts.append(f"worker {record.worker_id}")
    if getattr(record, "pr_number", None):
        parts.append(f"PR #{record.pr_number}")
    return " / ".join(parts) or "cli"


def person() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name in some containers
        return "cli"


def check_scope(repo: str | None, role: str | None) -> None:
    from agents.settings.checks import repo_problem
    from agents.settings.model import ConfigError, load_settings
    from flows.cli.known import check_role

    problem = repo_problem(repo) if repo is not None else None
    if problem:
        raise ConfigError(f"--repo: {problem}")
    if role is not None and not role.replace("-", "").replace("_", "").isalnum():
        raise ConfigError(f"--role: {role!r} is not a role id like 'reviewer'")
    if role is not None:
        check_role(role, load_settings())


def check_known_repo(store: Store, repo: str | None) -> None:
    """Inside the store: a repository that is a typo of a known one is refused."""
    from agents.settings.model import load_settings
    from flows.cli.known import check_repo

    if repo is not None:
        check_repo(repo, store, load_settings())


# What a person writes; learnings come only from review feedback (`swarm memory review`).
PERSON_KINDS = ("fact", "procedure")


def _check_kind(kind: str) -> None:
    from agents.settings.model import ConfigError

    if kind not in PERSON_KINDS:
        raise ConfigError(f"--kind: {kind!r} is not one of: {', '.join(PERSON_KINDS)}")


def memory_list(*, repo: str | None, role: str | None, include_inactive: bool) -> None:
    from flows.cli.console import print_table

    check_scope(repo, role)
    with open_store() as store:
        check_known_repo(store, repo)
        records = store.list_memories(
            repo=repo,
            role=role,
            include_inactive=include_inactive,
            states=None if include_inactive else ("active",),
        )
    print_table(
        "memories",
        ["id", "kind", "repo", "role", "body", "by", "from", "when", "state"],
        (
            [
                m.id,
                m.kind,
                m.repo or "(all)",
                m.role or "(all)",
                m.body,
                f"{m.author} ({m.author_kind})",
                origin(m),
                m.created_at,
                _state(m),
            ]
            for m in records
        ),
        wraps={"body", "by", "from"},
        drop=["from", "by", "kind", "state", "role", "repo", "when"],
        empty='no memories yet; add one with `swarm memory add "..." --repo OWNER/NAME`',
    )


def _state(memory: object) -> str:
    if getattr(memory, "deleted_at", None):
        return "deleted"
    superseded = getattr(memory, "superseded_by", None)
    return f"superseded by {superseded}" if superseded else str(getattr(memory, "state", "active"))


def memory_add(*, body: str, repo: str | None, role: str | None, kind: str) -> None:
    from flows.cli.console import say

    check_scope(repo, role)
    _check_kind(kind)
    with open_store(create=True) as store:
        check_known_repo(store, repo)
        record = store.add_memory(kind, body, author=person(), repo=repo, role=role)
    say(f"added memory {record.id}")


def _active(store: object, memory_id: int, verb: str) -> None:
    """Refuse an unknown, superseded or deleted memory with what to do instead."""
    from agents.settings.model import ConfigError
    from agents.store import UnknownMemoryError

    try:
        memory = store.get_memory(memory_id)  # type: ignore[attr-defined]
    except UnknownMemoryError:
        raise ConfigError(f"no memory {memory_id}; `swarm memory list` shows the ids") from None
    if memory.deleted_at:
        raise ConfigError(f"memory {memory_id} is deleted; there is nothing to {verb}")
    if memory.superseded_by:
        raise ConfigError(
            f"memory {memory_id} was replaced by memory {memory.superseded_by}; "
            f"{verb} {memory.superseded_by} instead (`swarm memory list --all` shows the history)"
        )


def memory_edit(memory_id: int, body: str) -> None:
    from flows.cli.console import say

    with open_store() as store:
        _active(store, memory_id, "edit")
        record = store.supersede_memory(memory_id, body, author=person())
    say(f"memory {memory_id} superseded by {record.id}")


def memory_rm(memory_id: int) -> None:
    from flows.cli.console import say

    with open_store() as store:
        _active(store, memory_id, "remove")
        store.delete_memory(memory_id, by=person())
    say(f"deleted memory {memory_id}")
