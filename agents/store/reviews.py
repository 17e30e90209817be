"""Review idempotency keys: at most one review per (repo, PR, head SHA, role), across workers.

Keys are opaque here; ``agents.posting.keys`` defines what they say."""

from __future__ import annotations

from collections.abc import Collection, Mapping

import sqlalchemy as sa

from agents.store.base import StoreBase, StoreError, clean, clean_json, utcnow
from agents.store.records import ReviewKeyRecord
from agents.store.schema import review_keys


class ReviewsMixin(StoreBase):
    def claim_review_key(self, key: str, worker_id: str) -> bool:
        """Atomically claim ``key`` for ``worker_id``; False when anyone (even the same worker)
        already claimed or posted it."""
        try:
            with self._db.write() as conn:
                conn.execute(
                    sa.insert(review_keys).values(
                        key=clean(key), worker_id=worker_id, state="claimed", at=utcnow()
                    )
                )
        except sa.exc.IntegrityError:
            return False
        return True

    def mark_review_posted(self, key: str, review_id: int, url: str) -> None:
        values = {
            "state": "posted",
            "review_id": review_id,
            "review_url": clean(url),
            "at": utcnow(),
        }
        if self._update(review_keys, review_keys.c.key == clean(key), values) == 0:
            raise StoreError(f"review key {key!r} was never claimed")

    def release_review_key(self, key: str, worker_id: str) -> bool:
        """Give back a claim whose review was not posted (so a retry may claim it)."""
        with self._db.write() as conn:
            done = conn.execute(
                sa.delete(review_keys).where(
                    review_keys.c.key == clean(key),
                    review_keys.c.worker_id == worker_id,
                    review_keys.c.state == "claimed",
                )
            )
        return bool(done.rowcount)

    def note_unfinished(self, key: str, worker_id: str, rest: Mapping[str, object]) -> bool:
        """Keep on ``worker_id``'s row of ``key`` what the worker has to do after the write
        (``rest``, plain data), until :meth:`mark_finished`: a run interrupted in between leaves
        it for the next one. False when ``worker_id`` holds no row of ``key``."""
        where = sa.and_(review_keys.c.key == clean(key), review_keys.c.worker_id == worker_id)
        return self._update(review_keys, where, {"unfinished": clean_json(dict(rest))}) > 0

    def mark_finished(self, key: str) -> None:
        """The work after ``key``'s write is done: nothing is left for a next run."""
        self._update(review_keys, review_keys.c.key == clean(key), {"unfinished": None})

    def posted_by(self, worker_ids: Collection[str]) -> dict[str, list[str]]:
        """The links of what each of ``worker_ids`` posted (a review, a draft pull request),
        oldest first; a worker that posted nothing is left out."""
        if not worker_ids:
            return {}
        with self._db.read() as conn:
            rows = conn.execute(
                sa.select(review_keys.c.worker_id, review_keys.c.review_url)
                .where(
                    review_keys.c.worker_id.in_(list(worker_ids)),
                    review_keys.c.state == "posted",
                    review_keys.c.review_url.is_not(None),
                )
                .order_by(review_keys.c.at, review_keys.c.key)
            ).all()
        found: dict[str, list[str]] = {}
        for row in rows:
            found.setdefault(str(row.worker_id), []).append(str(row.review_url))
        return found

    def get_review_key(self, key: str) -> ReviewKeyRecord | None:
        return self._first(
            ReviewKeyRecord, sa.select(review_keys).where(review_keys.c.key == clean(key))
        )

    def posted_review_keys(self, prefix: str) -> list[str]:
        """Keys starting with ``prefix`` whose review was posted, oldest first."""
        with self._db.read() as conn:
            rows = conn.execute(
                sa.select(review_keys.c.key)
                .where(
                    review_keys.c.key.startswith(clean(prefix), autoescape=True),
                    review_keys.c.state == "posted",
                )
                .order_by(review_keys.c.at, review_keys.c.key)
            ).all()
        return [str(row.key) for row in rows]

    def put_gate(self, key: str, holder: str, state: str, doc: Mapping[str, object]) -> None:
        """Write plan approval's row of ``key`` (agents.writer.approval): the flow run that
        holds it (``holder``), where it stands (``state``) and what it keeps (``doc``: the plan,
        the note, the deadline), replacing what an earlier run of the same issue left."""
        values = {
            "worker_id": holder,
            "state": state,
            "unfinished": clean_json(dict(doc)),
            "at": utcnow(),
        }
        with self._db.write() as conn:
            done = conn.execute(
                sa.update(review_keys).where(review_keys.c.key == clean(key)).values(values)
            )
            if not done.rowcount:
                conn.execute(sa.insert(review_keys).values(key=clean(key), **values))

    def keys_in_state(self, marker: str, state: str) -> list[ReviewKeyRecord]:
        """Every row whose key holds ``marker`` and whose state is ``state``, oldest first."""
        query = (
            sa.select(review_keys)
            .where(
                review_keys.c.key.contains(clean(marker), autoescape=True),
                review_keys.c.state == state,
            )
            .order_by(review_keys.c.at, review_keys.c.key)
        )
        return self._all(ReviewKeyRecord, query)

    def has_review_keys(self, prefix: str) -> bool:
        """Whether any key starting with ``prefix`` was claimed or posted."""
        with self._db.read() as conn:
            row = conn.execute(
                sa.select(review_keys.c.key)
                .where(review_keys.c.key.startswith(clean(prefix), autoescape=True))
                .limit(1)
            ).first()
        return row is not None
