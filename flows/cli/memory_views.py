"""``swarm memory show|notes|continuity|review``: everything workers remember, in reach of a
person, each entry with where it came from (run, worker, pull request, who).

Only user-visible memory and agent notes are shown; hidden runtime records (transcript events,
tool payloads, costs) never are: ``swarm transcript`` and ``swarm history`` are their views.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flows.cli.memory_actions import check_scope, origin
from flows.cli.store_actions import open_store, when

if TYPE_CHECKING:
    from agents.store import MemoryRecord, NoteRecord, Store

NOTE_KINDS = ("note", "continuity")


def _known_memory(store: Store, memory_id: int) -> MemoryRecord:
    from agents.settings.model import ConfigError
    from agents.store import UnknownMemoryError

    try:
        return store.get_memory(memory_id)
    except UnknownMemoryError:
        raise ConfigError(f"no memory {memory_id}; `swarm memory list` shows the ids") from None


def _known_note(store: Store, note_id: int) -> NoteRecord:
    from agents.settings.model import ConfigError
    from agents.store import UnknownMemoryError

    try:
        return store.get_agent_note(note_id)
    except UnknownMemoryError:
        raise ConfigError(f"no agent note {note_id}; `swarm memory notes` shows the ids") from None


def memory_show(memory_id: int) -> None:
    from flows.cli.console import say

    with open_store() as store:
        m = _known_memory(store, memory_id)
    state = "deleted" if m.deleted_at else m.state
    if m.superseded_by:
        state = f"superseded by {m.superseded_by}"
    say(f"memory {m.id} ({m.kind}, {state})")
    say(f"scope: repo {m.repo or '(all)'}, role {m.role or '(all)'}")
    say(f"by: {m.author} ({m.author_kind}) at {when(m.created_at)}")
    say(f"from: {origin(m)}")
    for key in ("comment_url", "reply_url", "signal", "reviewed_by"):
        if m.source and m.source.get(key):
            say(f"{key.replace('_', ' ')}: {m.source[key]}")
    if m.supersedes:
        say(f"replaces: memory {m.supersedes}")
    if m.deleted_at:
        say(f"deleted by {m.deleted_by or '?'} at {when(m.deleted_at)}")
    say("")
    say(m.body)


def _check_note_kind(kind: str | None) -> None:
    from agents.settings.model import ConfigError

    if kind is not None and kind not in NOTE_KINDS:
        raise ConfigError(f"--kind: {kind!r} is not one of: {', '.join(NOTE_KINDS)}")


def notes_list(
    *, repo: str | None, role: str | None, worker: str | None, kind: str | None, limit: int
) -> None:
    from flows.cli.console import print_table

    check_scope(repo, role)
    _check_note_kind(kind)
    with open_store() as store:
        notes = store.list_agent_notes(
            repo=repo, role=role, worker_id=worker, kind=kind, limit=limit
        )
    rows = (
        [n.id, n.kind, n.repo or "-", n.role or "-", n.body, origin(n), n.created_at] for n in notes
    )
    columns = ["id", "kind", "repo", "role", "body", "from", "when"]
    print_table(
        "agent notes (newest first)",
        columns,
        rows,
        wraps={"body", "from"},
        empty="no agent notes yet; workers write them while they work",
    )


def note_edit(note_id: int, body: str) -> None:
    from flows.cli.console import say

    with open_store() as store:
        _known_note(store, note_id)
        store.edit_agent_note(note_id, body)
    say(f"edited agent note {note_id}")


def note_rm(note_id: int) -> None:
    from flows.cli.console import say

    with open_store() as store:
        _known_note(store, note_id)
        store.delete_agent_note(note_id)
    say(f"deleted agent note {note_id}")


def continuity_show(*, repo: str, role: str, pr: int | None) -> None:
    from flows.cli.console import say

    check_scope(repo, role)
    with open_store() as store:
        found = store.list_agent_notes(
            repo=repo, role=role, kind="continuity", pr_number=pr, limit=1
        )
    where = f"{repo}" + (f"#{pr}" if pr else "")
    if not found:
        say(f"no continuity for {role} on {where} yet")
        return
    note = found[0]
    say(f"continuity {note.id} for {role} on {where}, {when(note.created_at)}")
    say(f"from: {origin(note)}")
    say("")
    say(note.body)
