"""Discovery's ledger reads the store's posted review keys, on SQLite and PostgreSQL."""

from __future__ import annotations

from agents.planning.sources import StoreLedger
from agents.posting.keys import review_key
from agents.store import Store
from tests.store.backends import pg_session_url, sqlite_template, store, store_target, worker

__all__ = ["pg_session_url", "sqlite_template", "store", "store_target", "worker"]

REPO = "acme/widgets"


def _post(store: Store, worker: str, key: str) -> None:
    assert store.claim_review_key(key, worker)
    store.mark_review_posted(key, 1, "https://github.test/review")


def test_ledger_knows_posted_reviews_and_the_last_reviewed_sha(store: Store, worker: str) -> None:
    ledger = StoreLedger(store)
    assert ledger.last_reviewed_sha(REPO, 1, ["reviewer"]) is None
    _post(store, worker, review_key(REPO, 1, "a" * 40, "reviewer"))
    _post(store, worker, review_key(REPO, 1, "b" * 40, "summarizer"))
    store.claim_review_key(review_key(REPO, 1, "c" * 40, "reviewer"), worker)  # never posted

    assert ledger.has_review(review_key(REPO, 1, "a" * 40, "reviewer"))
    assert not ledger.has_review(review_key(REPO, 1, "c" * 40, "reviewer"))
    assert ledger.last_reviewed_sha(REPO, 1, ["reviewer"]) == "a" * 40
    assert ledger.last_reviewed_sha(REPO, 1, ["reviewer", "summarizer"]) == "b" * 40
    assert ledger.last_reviewed_sha(REPO, 2, ["reviewer"]) is None
