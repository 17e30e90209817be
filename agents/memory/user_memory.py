"""User-visible memory: facts and procedures a person lists, adds, edits and deletes
(``swarm memory list|add|edit|rm``). Edits supersede; nothing is silently overwritten."""

from __future__ import annotations

import builtins
import re
from collections.abc import Sequence

from agents.errors import SwarmError
from agents.memory.ports import MemoryBackend, MemoryRow

_REPO_RE = re.compile(r"^[A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+$")
_ROLE_RE = re.compile(r"^[a-z][a-z0-9_\-]{0,99}$")
MAX_BODY_CHARS = 2_000


class MemoryInputError(SwarmError, ValueError):
    """A memory was refused; the message names the field and the problem."""


def _check_scope(repo: str | None, role: str | None) -> None:
    if repo is not None and not _REPO_RE.match(repo):
        raise MemoryInputError(f"memory repo must look like OWNER/NAME, got {repo!r}")
    if role is not None and not _ROLE_RE.match(role):
        raise MemoryInputError(
            f"memory role must be a lowercase role name like 'reviewer', got {role!r}"
        )


def _check_body(body: str) -> str:
    text = body.strip()
    if not text:
        raise MemoryInputError("memory text is empty")
    if len(text) > MAX_BODY_CHARS:
        raise MemoryInputError(
            f"memory text is {len(text)} characters; the limit is {MAX_BODY_CHARS}"
        )
    return text


class UserMemory:
    """The person-facing memory book over any :class:`MemoryBackend` (the store)."""

    def __init__(self, backend: MemoryBackend) -> None:
        self._backend = backend

    def list(
        self,
        repo: str | None = None,
        role: str | None = None,
        *,
        include_history: bool = False,
    ) -> Sequence[MemoryRow]:
        """Memories that apply to ``repo``/``role`` (scoped ones plus global ones)."""
        _check_scope(repo, role)
        return self._backend.list_memories(
            repo=repo, role=role, include_global=True, include_inactive=include_history
        )

    def add(
        self,
        body: str,
        *,
        author: str,
        kind: str = "fact",
        repo: str | None = None,
        role: str | None = None,
        author_kind: str = "person",
        run_id: str | None = None,
    ) -> MemoryRow:
        _check_scope(repo, role)
        if kind not in ("fact", "procedure"):
            raise MemoryInputError(f"memory kind must be 'fact' or 'procedure', got {kind!r}")
        if not author.strip():
            raise MemoryInputError("memory author is empty: say who (a login or worker id)")
        return self._backend.add_memory(
            kind,
            _check_body(body),
            author=author,
            author_kind=author_kind,
            repo=repo,
            role=role,
            run_id=run_id,
        )

    def edit(
        self,
        memory_id: int,
        body: str,
        *,
        author: str,
        author_kind: str = "person",
        run_id: str | None = None,
    ) -> MemoryRow:
        """Replace a memory's text: returns the new row; the old one is marked superseded."""
        return self._backend.supersede_memory(
            memory_id, _check_body(body), author=author, author_kind=author_kind, run_id=run_id
        )

    def delete(self, memory_id: int, *, by: str) -> None:
        self._backend.delete_memory(memory_id, by=by)

    def history(self, memory_id: int) -> builtins.list[MemoryRow]:
        """The chain of versions ending at (or passing through) ``memory_id``, oldest first."""
        chain = [self._backend.get_memory(memory_id)]
        while chain[0].supersedes is not None:
            chain.insert(0, self._backend.get_memory(chain[0].supersedes))
        while chain[-1].superseded_by is not None:
            chain.append(self._backend.get_memory(chain[-1].superseded_by))
        return chain
