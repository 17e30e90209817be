"""Per-worker transcripts: gap-free sequenced appends, read-back and scoped full-text search."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping, Sequence

import sqlalchemy as sa

from agents.event_kinds import EVENT_KINDS
from agents.json_value import JSONObject, JSONValue
from agents.store.base import (
    StoreBase,
    StoreError,
    UnknownWorkerError,
    check_choice,
    clean_json,
    utcnow,
)
from agents.store.records import EventRecord, NewEvent
from agents.store.schema import transcript_events, workers

SEARCH_TEXT_LIMIT = 20_000
# Words as FTS5 unicode61 sees them: runs of letters and digits (underscore separates).
_WORD = re.compile(r"[^\W_]+")


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield str(value)


def _fts5_match(query: str, scope_token: str) -> str | None:
    words = _WORD.findall(query)
    if not words:
        return None
    # Each word quoted: the user's text is never parsed as FTS5 syntax (AND, NEAR, *, :).
    terms = " AND ".join(f'body : "{w}"' for w in words)
    return f'{terms} AND scope : "{scope_token}"'


def _hex_token(prefix: str, value: str) -> str:
    # Same token the FTS triggers build with SQL hex(): one alphanumeric token per id.
    return prefix + value.encode("utf-8").hex().upper()


_COLUMNS = [c for c in transcript_events.c if c.name != "id"]


class TranscriptMixin(StoreBase):
    def append_event(
        self,
        worker_id: str,
        kind: str,
        content: str | Mapping[str, JSONValue],
        tokens: int = 0,
        cost: float = 0.0,
    ) -> int:
        """Append one event and return its sequence number (1, 2, 3, ... per worker)."""
        content_value: str | JSONObject = content if isinstance(content, str) else dict(content)
        return self.append_events(worker_id, [NewEvent(kind, content_value, tokens, cost)])[0]

    def append_events(self, worker_id: str, events: Sequence[NewEvent]) -> list[int]:
        """Append events in one transaction; sequence numbers are consecutive and gap-free."""
        if not events:
            return []
        rows: list[dict[str, object]] = []
        for ev in events:
            check_choice(ev.kind, EVENT_KINDS, "event kind")
            body = {"text": ev.content} if isinstance(ev.content, str) else ev.content
            content = clean_json(body)
            text = " ".join(_strings(content))[:SEARCH_TEXT_LIMIT]
            rows.append(
                {
                    "kind": ev.kind,
                    "content": content,
                    "search_text": text,
                    "tokens": int(ev.tokens),
                    "cost": float(ev.cost),
                }
            )
        now = utcnow()
        n = len(rows)
        with self._db.write() as conn:
            # Bumping the counter row-locks the worker: concurrent appenders queue here, so
            # numbers are unique and, since a failed insert rolls the bump back, gap-free.
            bumped = conn.execute(
                sa.update(workers)
                .where(workers.c.id == worker_id)
                .values(last_seq=workers.c.last_seq + n, heartbeat_at=now)
                .returning(workers.c.last_seq, workers.c.run_id)
            ).first()
            if bumped is None:
                raise UnknownWorkerError(f"no worker with id {worker_id!r}")
            first = bumped.last_seq - n + 1
            for i, row in enumerate(rows):
                row.update(worker_id=worker_id, run_id=bumped.run_id, seq=first + i, created_at=now)
            conn.execute(sa.insert(transcript_events), rows)
        return list(range(first, first + n))

    def _append_recovery_event(self, worker_id: str, reason: str) -> None:
        self.append_event(worker_id, "status", {"status": "failed", "reason": reason})

    def get_transcript(
        self, worker_id: str, *, after_seq: int = 0, limit: int | None = None
    ) -> list[EventRecord]:
        query = (
            sa.select(*_COLUMNS)
            .where(transcript_events.c.worker_id == worker_id, transcript_events.c.seq > after_seq)
            .order_by(transcript_events.c.seq)
        )
        if limit is not None:
            query = query.limit(limit)
        return self._all(EventRecord, query)

    def search_events(
        self,
        *,
        worker_id: str | None = None,
        run_id: str | None = None,
        workers_of_run: Collection[str] | None = None,
        query: str | None = None,
        kinds: Collection[str] | None = None,
        before_seq: int | None = None,
        limit: int = 10,
    ) -> list[EventRecord]:
        """Newest-first events of one worker (or one run, of only ``workers_of_run`` when
        given), optionally matching all words of ``query``. ``before_seq`` pages back through
        one worker's session."""
        if (worker_id is None) == (run_id is None):
            raise StoreError("search_events needs exactly one of worker_id or run_id")
        ev = transcript_events.c
        stmt = sa.select(*_COLUMNS)
        if worker_id is not None:
            stmt = stmt.where(ev.worker_id == worker_id).order_by(ev.seq.desc())
            scope_token = _hex_token("w", worker_id)
        else:
            stmt = stmt.where(ev.run_id == run_id).order_by(ev.id.desc())
            scope_token = _hex_token("r", run_id or "")
            if workers_of_run is not None:
                stmt = stmt.where(ev.worker_id.in_(sorted(workers_of_run)))
        if before_seq is not None:
            if worker_id is None:
                raise StoreError("before_seq pages one worker's session; it needs worker_id")
            stmt = stmt.where(ev.seq < before_seq)
        if kinds is not None:
            stmt = stmt.where(ev.kind.in_(sorted(kinds)))
        if query is not None and query.strip():
            if self._db.is_sqlite:
                match = _fts5_match(query, scope_token)
                if match is None:
                    return []
                hits = sa.text("SELECT rowid FROM transcript_fts WHERE transcript_fts MATCH :m")
                stmt = stmt.where(ev.id.in_(hits.bindparams(m=match).columns(rowid=sa.Integer)))
            else:
                words = " ".join(_WORD.findall(query))
                if not words:
                    return []
                tsquery = sa.func.plainto_tsquery(sa.literal_column("'simple'::regconfig"), words)
                stmt = stmt.where(sa.literal_column("search_vector").op("@@")(tsquery))
        return self._all(EventRecord, stmt.limit(limit))
