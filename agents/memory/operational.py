"""Agent operational memory: append-only notes and a per-worker continuity summary, plus
``recall`` for the per-turn layer. Notes are recalled a few at a time by relevance, never
injected wholesale."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.memory.ports import MemoryBackend, NoteRow
from agents.redact import redact

_WORD = re.compile(r"[^\W_]+")
MAX_RECALL = 20
EXCERPT_CHARS = 300


@dataclass(frozen=True)
class RecallHit:
    source: str  # "memory:<id>" or "note:<id>"
    kind: str
    text: str
    score: int

    @property
    def cited(self) -> str:
        """The excerpt with where it came from, e.g. ``(memory:3) Prefers small PRs``."""
        return f"({self.source}) {self.text}"


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if len(w) > 1}


def _excerpt(text: str) -> str:
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1] + "…"


def recall(
    backend: MemoryBackend,
    query: str,
    repo: str | None,
    role: str | None,
    limit: int = 5,
) -> list[RecallHit]:
    """Memories and agent notes in scope that share words with ``query``, best first."""
    if limit < 1:
        raise ValueError(f"recall limit must be at least 1, got {limit}")
    wanted = _words(query)
    if not wanted:
        return []
    candidates: list[tuple[int, float, RecallHit]] = []
    for m in backend.list_memories(repo=repo, role=role, include_global=True):
        if m.kind == "learning":
            continue  # quoted feedback reaches the model only delimited, as the briefing
        if repo is None and m.repo is not None:
            continue  # no repository: what applies everywhere, never every repository's
        score = len(wanted & _words(m.body))
        if score:
            hit = RecallHit(f"memory:{m.id}", m.kind, _excerpt(m.body), score)
            candidates.append((score, m.created_at.timestamp(), hit))
    # A note belongs to the repository it was written on; without one, no note is in scope
    # (``repo=None`` would list every repository's).
    notes = backend.list_agent_notes(repo=repo, role=role, kind="note", limit=500) if repo else []
    for n in notes:
        score = len(wanted & _words(n.body))
        if score:
            hit = RecallHit(f"note:{n.id}", "note", _excerpt(n.body), score)
            candidates.append((score, n.created_at.timestamp(), hit))
    candidates.sort(key=lambda c: (c[0], c[1]), reverse=True)
    return [hit for _, _, hit in candidates[: min(limit, MAX_RECALL)]]


class AgentMemory:
    """One worker's operational memory."""

    def __init__(
        self,
        backend: MemoryBackend,
        worker_id: str,
        *,
        run_id: str | None = None,
        repo: str | None = None,
        role: str | None = None,
        pr_number: int | None = None,
    ) -> None:
        self._backend = backend
        self.worker_id = worker_id
        self.run_id = run_id
        self.repo = repo
        self.role = role
        self.pr_number = pr_number

    def note(self, body: str) -> NoteRow:
        """Append a note (never edits an earlier one)."""
        return self._add(body, "note")

    def save_continuity(self, summary: str) -> NoteRow:
        """Record where the worker is (e.g. at compaction); the latest one wins on resume."""
        return self._add(summary, "continuity")

    def _add(self, body: str, kind: str) -> NoteRow:
        return self._backend.add_agent_note(
            self.worker_id,
            body,
            kind=kind,
            run_id=self.run_id,
            repo=self.repo,
            role=self.role,
            pr_number=self.pr_number,
        )

    def continuity(self) -> str | None:
        latest = self._backend.list_agent_notes(
            worker_id=self.worker_id, kind="continuity", limit=1
        )
        return latest[0].body if latest else None

    def previous_continuity(self) -> NoteRow | None:
        """Where the last session of this role on this repository (and pull request, when the
        work has one) left off: another worker's latest continuity, or None."""
        if self.repo is None or self.role is None:
            return None
        found = self._backend.list_agent_notes(
            repo=self.repo,
            role=self.role,
            kind="continuity",
            pr_number=self.pr_number,
            exclude_worker=self.worker_id,
            limit=1,
        )
        return found[0] if found else None

    def notes(self, limit: int = 50) -> list[NoteRow]:
        return list(
            self._backend.list_agent_notes(worker_id=self.worker_id, kind="note", limit=limit)
        )

    def recall(self, query: str, limit: int = 5) -> list[RecallHit]:
        return recall(self._backend, query, self.repo, self.role, limit)
