"""Review idempotency keys: one claim wins, even under concurrency."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from agents.posting.keys import review_key
from agents.store import Store


def test_key_format_names_repo_pr_sha_and_role() -> None:
    assert review_key("octo/demo", 7, "abc123", "reviewer") == "octo/demo#7@abc123:reviewer"


def test_only_one_of_many_concurrent_claims_wins(store: Store, worker: str) -> None:
    key = review_key("octo/demo", 7, "abc123", "reviewer")
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: store.claim_review_key(key, worker), range(16)))
    assert results.count(True) == 1
    record = store.get_review_key(key)
    assert record is not None and record.state == "claimed" and record.worker_id == worker


def test_posted_key_records_the_review_and_stays_claimed(store: Store, worker: str) -> None:
    key = review_key("octo/demo", 8, "def", "reviewer")
    assert store.claim_review_key(key, worker)
    store.mark_review_posted(key, 991, "https://github.test/octo/demo/pull/8#review-991")
    record = store.get_review_key(key)
    assert record is not None
    assert (record.state, record.review_id) == ("posted", 991)
    assert store.claim_review_key(key, worker) is False
    assert store.release_review_key(key, worker) is False  # posted claims cannot be released


def test_released_claim_can_be_claimed_again(store: Store, worker: str) -> None:
    key = review_key("octo/demo", 9, "fff", "reviewer")
    assert store.claim_review_key(key, worker)
    assert store.release_review_key(key, worker)
    assert store.get_review_key(key) is None
    assert store.claim_review_key(key, worker)


def test_posted_keys_of_one_prefix_come_oldest_first(store: Store, worker: str) -> None:
    first = review_key("octo/de_mo", 4, "a1", "reviewer")
    second = review_key("octo/de_mo", 4, "b2", "reviewer")
    for key in (first, second):
        assert store.claim_review_key(key, worker)
        store.mark_review_posted(key, 1, "https://github.test/r")
    store.claim_review_key(review_key("octo/de_mo", 4, "c3", "reviewer"), worker)  # not posted
    # A LIKE wildcard in the prefix is taken literally: "_" does not match "x".
    store.claim_review_key(review_key("octo/dexmo", 4, "d4", "reviewer"), worker)
    store.mark_review_posted(review_key("octo/dexmo", 4, "d4", "reviewer"), 2, "u")
    assert store.posted_review_keys("octo/de_mo#4@") == [first, second]
    assert store.posted_review_keys("octo/de_mo#40@") == []
