"""What the memory surfaces need from the store, as structural types.

``agents.memory`` and ``agents.store`` are sibling layers that never import each other; the
wiring module hands a ``Store`` in, and mypy checks it fits these protocols.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Protocol

from agents.json_value import JSONObject, JSONValue
from agents.memory_origin import MemoryOrigin


class _Row(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...


class _Written(_Row, Protocol):
    """A row a person or a worker wrote: memories and notes."""

    @property
    def id(self) -> int: ...
    @property
    def body(self) -> str: ...


class MemoryRow(_Written, Protocol):
    @property
    def repo(self) -> str | None: ...
    @property
    def role(self) -> str | None: ...
    @property
    def author(self) -> str: ...
    @property
    def author_kind(self) -> str: ...
    @property
    def run_id(self) -> str | None: ...
    @property
    def supersedes(self) -> int | None: ...
    @property
    def superseded_by(self) -> int | None: ...
    @property
    def deleted_at(self) -> datetime | None: ...
    @property
    def active(self) -> bool: ...
    @property
    def state(self) -> str: ...
    @property
    def pr_number(self) -> int | None: ...
    @property
    def source(self) -> Mapping[str, JSONValue] | None: ...


class NoteRow(_Written, Protocol):
    @property
    def worker_id(self) -> str: ...
    @property
    def run_id(self) -> str | None: ...
    @property
    def pr_number(self) -> int | None: ...


class EventRow(_Row, Protocol):
    @property
    def worker_id(self) -> str: ...
    @property
    def seq(self) -> int: ...
    @property
    def content(self) -> JSONObject: ...
    @property
    def search_text(self) -> str: ...


class WorkerRow(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def run_id(self) -> str: ...
    @property
    def identity_login(self) -> str | None: ...
    @property
    def task(self) -> JSONObject: ...


class MemoryBackend(Protocol):
    def add_memory(
        self,
        kind: str,
        body: str,
        *,
        author: str,
        author_kind: str = ...,
        repo: str | None = ...,
        role: str | None = ...,
        state: str = ...,
        origin: MemoryOrigin | None = ...,
    ) -> MemoryRow: ...

    def memory_by_source(self, source_key: str) -> MemoryRow | None: ...

    def list_memories(
        self,
        *,
        repo: str | None = ...,
        role: str | None = ...,
        include_global: bool = ...,
        include_inactive: bool = ...,
        states: tuple[str, ...] | None = ...,
    ) -> Sequence[MemoryRow]: ...

    def add_agent_note(
        self,
        worker_id: str,
        body: str,
        *,
        kind: str = ...,
        run_id: str | None = ...,
        repo: str | None = ...,
        role: str | None = ...,
        pr_number: int | None = ...,
    ) -> NoteRow: ...

    def list_agent_notes(
        self,
        *,
        worker_id: str | None = ...,
        repo: str | None = ...,
        role: str | None = ...,
        kind: str | None = ...,
        limit: int = ...,
        pr_number: int | None = ...,
        exclude_worker: str | None = ...,
    ) -> Sequence[NoteRow]: ...


class HistoryBackend(Protocol):
    def get_worker(self, worker_id: str) -> WorkerRow: ...

    def list_workers(
        self, run_id: str | None = ..., status: str | None = ...
    ) -> Sequence[WorkerRow]: ...

    def search_events(
        self,
        *,
        worker_id: str | None = ...,
        run_id: str | None = ...,
        workers_of_run: Collection[str] | None = ...,
        query: str | None = ...,
        kinds: Collection[str] | None = ...,
        before_seq: int | None = ...,
        limit: int = ...,
    ) -> Sequence[EventRow]: ...
