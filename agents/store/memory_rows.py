"""Rows behind the memory surfaces: user-visible memories (superseded, never overwritten) and
append-only agent notes. Policy (scoping, snapshots, recall) lives in ``agents.memory``."""

from __future__ import annotations

from collections.abc import Mapping

import sqlalchemy as sa

from agents.memory_origin import MemoryOrigin
from agents.store.base import (
    StoreBase,
    StoreError,
    check_choice,
    clean,
    clean_json,
    to_record,
    utcnow,
)
from agents.store.records import (
    MEMORY_KINDS,
    MEMORY_STATES,
    NOTE_KINDS,
    MemoryRecord,
    NoteRecord,
)
from agents.store.schema import agent_notes, memories

AUTHOR_KINDS = ("person", "worker")


class UnknownMemoryError(StoreError):
    pass


def _inserted(
    conn: sa.Connection, table: sa.Table, values: Mapping[str, object]
) -> sa.Row[*tuple[object, ...]]:
    """Insert one row and hand it back whole (with its new id)."""
    return conn.execute(sa.insert(table).values(values).returning(*table.c)).one()


def _body(body: str) -> str:
    text = (clean(body) or "").strip()
    if not text:
        raise StoreError("memory body is empty")
    return text


class MemoryRowsMixin(StoreBase):
    def add_memory(
        self,
        kind: str,
        body: str,
        *,
        author: str,
        author_kind: str = "person",
        repo: str | None = None,
        role: str | None = None,
        state: str = "active",
        origin: MemoryOrigin | None = None,
    ) -> MemoryRecord:
        """A new memory. With its origin's ``source_key`` it is written once: adding the same
        key again hands back the row already there (whatever its state), so feedback read twice
        is proposed once."""
        origin = origin or MemoryOrigin()
        source, source_key = origin.source, origin.source_key
        if source_key is not None:
            found = self.memory_by_source(source_key)
            if found is not None:
                return found
        values = {
            "kind": check_choice(kind, MEMORY_KINDS, "memory kind"),
            "body": _body(body),
            "author": clean(author),
            "author_kind": check_choice(author_kind, AUTHOR_KINDS, "author kind"),
            "repo": clean(repo),
            "role": clean(role),
            "run_id": origin.run_id,
            "created_at": utcnow(),
            "state": check_choice(state, MEMORY_STATES, "memory state"),
            "worker_id": origin.worker_id,
            "pr_number": origin.pr_number,
            "source": clean_json(dict(source)) if source is not None else None,
            "source_key": clean(source_key),
        }
        try:
            with self._db.write() as conn:
                return to_record(MemoryRecord, _inserted(conn, memories, values))
        except sa.exc.IntegrityError:
            found = self.memory_by_source(source_key) if source_key else None
            if found is None:
                raise
            return found  # another process wrote the same source first

    def memory_by_source(self, source_key: str) -> MemoryRecord | None:
        return self._first(
            MemoryRecord, sa.select(memories).where(memories.c.source_key == clean(source_key))
        )

    def set_memory_state(self, memory_id: int, state: str, *, by: str) -> MemoryRecord:
        """Accept (``active``) or reject a proposal; ``by`` is recorded in its source."""
        check_choice(state, MEMORY_STATES, "memory state")
        old = self.get_memory(memory_id)
        if not old.active:
            raise StoreError(f"memory {memory_id} is no longer active (superseded or deleted)")
        source = {**(old.source or {}), "reviewed_by": by, "reviewed_to": state}
        m = memories.c
        live = sa.and_(m.id == memory_id, m.state == old.state, m.deleted_at.is_(None))
        if self._update(memories, live, {"state": state, "source": clean_json(source)}) != 1:
            raise StoreError(f"memory {memory_id} changed meanwhile; list and retry")
        return self.get_memory(memory_id)

    def get_memory(self, memory_id: int) -> MemoryRecord:
        query = sa.select(memories).where(memories.c.id == memory_id)
        return self._one(MemoryRecord, query, UnknownMemoryError(f"no memory with id {memory_id}"))

    def list_memories(
        self,
        *,
        repo: str | None = None,
        role: str | None = None,
        include_global: bool = True,
        include_inactive: bool = False,
        states: tuple[str, ...] | None = ("active",),
    ) -> list[MemoryRecord]:
        """Memories for ``repo``/``role``; with ``include_global`` also those not scoped to a
        repo (or role), i.e. everything that applies there. Oldest first. ``states`` picks
        accepted ones by default (None: every state)."""
        m = memories.c
        query = sa.select(memories).order_by(m.created_at, m.id)
        if states is not None:
            query = query.where(m.state.in_(states))
        for column, value in ((m.repo, repo), (m.role, role)):
            if value is not None:
                query = query.where(
                    sa.or_(column == value, column.is_(None)) if include_global else column == value
                )
        if not include_inactive:
            query = query.where(m.superseded_by.is_(None), m.deleted_at.is_(None))
        return self._all(MemoryRecord, query)

    def supersede_memory(
        self,
        memory_id: int,
        body: str,
        *,
        author: str,
        author_kind: str = "person",
        run_id: str | None = None,
    ) -> MemoryRecord:
        """Edit = a new row that supersedes the old one; the old row stays, marked."""
        old = self.get_memory(memory_id)
        if not old.active:
            raise StoreError(f"memory {memory_id} is no longer active (superseded or deleted)")
        values = {
            "kind": old.kind,
            "body": _body(body),
            "author": clean(author),
            "author_kind": check_choice(author_kind, AUTHOR_KINDS, "author kind"),
            "repo": old.repo,
            "role": old.role,
            "run_id": run_id,
            "created_at": utcnow(),
            "supersedes": memory_id,
            "state": old.state,
            "pr_number": old.pr_number,
            "source": clean_json(old.source) if old.source is not None else None,
        }
        m = memories.c
        with self._db.write() as conn:
            new = _inserted(conn, memories, values)
            done = conn.execute(
                sa.update(memories)
                .where(m.id == memory_id, m.superseded_by.is_(None), m.deleted_at.is_(None))
                .values(superseded_by=new.id)
            )
            if done.rowcount != 1:
                # Someone else edited or deleted it first; roll back our new row.
                raise StoreError(f"memory {memory_id} changed while editing; list and retry")
            return to_record(MemoryRecord, new)

    def delete_memory(self, memory_id: int, *, by: str) -> None:
        """Soft delete: hidden from every listing and snapshot, kept for provenance."""
        m = memories.c
        live = sa.and_(m.id == memory_id, m.deleted_at.is_(None))
        if self._update(memories, live, {"deleted_at": utcnow(), "deleted_by": clean(by)}) != 1:
            self.get_memory(memory_id)  # raises for an unknown id
            raise StoreError(f"memory {memory_id} is already deleted")

    def add_agent_note(
        self,
        worker_id: str,
        body: str,
        *,
        kind: str = "note",
        run_id: str | None = None,
        repo: str | None = None,
        role: str | None = None,
        pr_number: int | None = None,
    ) -> NoteRecord:
        values = {
            "worker_id": worker_id,
            "kind": check_choice(kind, NOTE_KINDS, "note kind"),
            "body": _body(body),
            "run_id": run_id,
            "repo": clean(repo),
            "role": clean(role),
            "created_at": utcnow(),
            "pr_number": pr_number,
        }
        with self._db.write() as conn:
            return to_record(NoteRecord, _inserted(conn, agent_notes, values))

    def list_agent_notes(
        self,
        *,
        worker_id: str | None = None,
        repo: str | None = None,
        role: str | None = None,
        kind: str | None = None,
        limit: int = 200,
        pr_number: int | None = None,
        exclude_worker: str | None = None,
    ) -> list[NoteRecord]:
        """Newest first."""
        n = agent_notes.c
        query = sa.select(agent_notes).order_by(n.created_at.desc(), n.id.desc()).limit(limit)
        for column, value in (
            (n.worker_id, worker_id),
            (n.repo, repo),
            (n.role, role),
            (n.kind, kind),
            (n.pr_number, pr_number),
        ):
            if value is not None:
                query = query.where(column == value)
        if exclude_worker is not None:
            query = query.where(n.worker_id != exclude_worker)
        return self._all(NoteRecord, query)

    def get_agent_note(self, note_id: int) -> NoteRecord:
        query = sa.select(agent_notes).where(agent_notes.c.id == note_id)
        return self._one(NoteRecord, query, UnknownMemoryError(f"no agent note with id {note_id}"))

    def edit_agent_note(self, note_id: int, body: str) -> NoteRecord:
        """A person's correction of what a worker wrote (notes are append-only for workers)."""
        self.get_agent_note(note_id)
        self._update(agent_notes, agent_notes.c.id == note_id, {"body": _body(body)})
        return self.get_agent_note(note_id)

    def delete_agent_note(self, note_id: int) -> None:
        self.get_agent_note(note_id)
        with self._db.write() as conn:
            conn.execute(sa.delete(agent_notes).where(agent_notes.c.id == note_id))
