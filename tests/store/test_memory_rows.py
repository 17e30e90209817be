"""User-visible memory rows: scoped facts and procedures with provenance, edited by superseding."""

from __future__ import annotations

import pytest

from agents.store import Store, StoreError


def test_memories_are_listed_for_their_repo_role_and_globally(store: Store) -> None:
    repo_fact = store.add_memory(
        "fact", "This repo wants tests for every bug fix", author="alice", repo="octo/demo"
    )
    role_proc = store.add_memory(
        "procedure", "Reviewers cite file:line", author="alice", role="reviewer"
    )
    glob = store.add_memory("fact", "Be brief", author="bob")
    other = store.add_memory("fact", "Other repo fact", author="bob", repo="octo/other")
    ids = [m.id for m in store.list_memories(repo="octo/demo", role="reviewer")]
    assert ids == [repo_fact.id, role_proc.id, glob.id]
    assert [m.id for m in store.list_memories(repo="octo/other", role="triager")] == [
        glob.id,
        other.id,
    ]
    m = store.list_memories(repo="octo/demo")[0]
    assert (m.author, m.author_kind, m.kind, m.repo) == ("alice", "person", "fact", "octo/demo")
    assert m.created_at.tzinfo is not None


def test_edit_supersedes_and_keeps_the_old_version(store: Store) -> None:
    old = store.add_memory("fact", "tests for fixes", author="alice", repo="octo/demo")
    new = store.supersede_memory(
        old.id, "tests for every bug fix", author="w-123", author_kind="worker", run_id="run-9"
    )
    assert new.id != old.id and new.supersedes == old.id
    assert (new.author, new.author_kind, new.run_id) == ("w-123", "worker", "run-9")
    assert [m.body for m in store.list_memories(repo="octo/demo")] == ["tests for every bug fix"]
    assert store.get_memory(old.id).superseded_by == new.id
    with pytest.raises(StoreError) as err:
        store.supersede_memory(old.id, "again", author="bob")
    assert str(err.value) == f"memory {old.id} is no longer active (superseded or deleted)"


def test_delete_hides_a_memory_but_keeps_provenance(store: Store) -> None:
    m = store.add_memory("fact", "temporary", author="alice")
    store.delete_memory(m.id, by="alice")
    assert store.list_memories() == []
    gone = store.get_memory(m.id)
    assert gone.deleted_at is not None and gone.deleted_by == "alice"
    assert [x.id for x in store.list_memories(include_inactive=True)] == [m.id]
    with pytest.raises(StoreError, match=f"memory {m.id} is already deleted"):
        store.delete_memory(m.id, by="alice")


def test_secrets_in_a_memory_are_redacted_on_write(store: Store) -> None:
    m = store.add_memory("fact", "deploy with token=ghp_abcdef123456", author="alice")
    assert m.body == "deploy with token=[REDACTED:github-token]"


@pytest.mark.parametrize(
    ("kind", "body", "author_kind", "message"),
    [
        ("rule", "fine", "person", "memory kind"),
        ("fact", "   ", "person", "memory body is empty"),
        ("fact", "fine", "robot", "author kind"),
    ],
)
def test_a_memory_the_store_cannot_hold_is_refused(
    store: Store, kind: str, body: str, author_kind: str, message: str
) -> None:
    with pytest.raises(StoreError, match=message):
        store.add_memory(kind, body, author="alice", author_kind=author_kind)
    assert store.list_memories(include_inactive=True, states=None) == []
