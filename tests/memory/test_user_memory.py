"""User-visible memory: scoped facts and procedures with provenance, edited by superseding."""

from __future__ import annotations

import pytest

from agents.memory import MemoryInputError, UserMemory
from agents.store import Store, StoreError


def test_memories_are_listed_for_their_repo_role_and_globally(store: Store) -> None:
    book = UserMemory(store)
    repo_fact = book.add(
        "This repo wants tests for every bug fix", author="alice", repo="octo/demo"
    )
    role_proc = book.add(
        "Reviewers cite file:line", author="alice", kind="procedure", role="reviewer"
    )
    glob = book.add("Be brief", author="bob")
    other = book.add("Other repo fact", author="bob", repo="octo/other")
    ids = [m.id for m in book.list("octo/demo", "reviewer")]
    assert ids == [repo_fact.id, role_proc.id, glob.id]
    assert [m.id for m in book.list("octo/other", "triager")] == [glob.id, other.id]
    m = book.list("octo/demo")[0]
    assert (m.author, m.author_kind, m.kind, m.repo) == ("alice", "person", "fact", "octo/demo")
    assert m.created_at.tzinfo is not None


def test_edit_supersedes_and_keeps_the_old_version(store: Store) -> None:
    book = UserMemory(store)
    old = book.add("tests for fixes", author="alice", repo="octo/demo")
    new = book.edit(
        old.id, "tests for every bug fix", author="w-123", author_kind="worker", run_id="run-9"
    )
    assert new.id != old.id and new.supersedes == old.id
    assert (new.author, new.author_kind, new.run_id) == ("w-123", "worker", "run-9")
    assert [m.body for m in book.list("octo/demo")] == ["tests for every bug fix"]
    assert store.get_memory(old.id).superseded_by == new.id
    assert [m.body for m in book.history(old.id)] == ["tests for fixes", "tests for every bug fix"]
    with pytest.raises(StoreError) as err:
        book.edit(old.id, "again", author="bob")
    assert str(err.value) == f"memory {old.id} is no longer active (superseded or deleted)"


def test_delete_hides_a_memory_but_keeps_provenance(store: Store) -> None:
    book = UserMemory(store)
    m = book.add("temporary", author="alice")
    book.delete(m.id, by="alice")
    assert book.list() == []
    gone = store.get_memory(m.id)
    assert gone.deleted_at is not None and gone.deleted_by == "alice"
    assert [x.id for x in book.list(include_history=True)] == [m.id]
    with pytest.raises(StoreError, match=f"memory {m.id} is already deleted"):
        book.delete(m.id, by="alice")


def test_secrets_in_a_memory_are_redacted_on_write(store: Store) -> None:
    m = UserMemory(store).add("deploy with token=ghp_abcdef123456", author="alice")
    assert m.body == "deploy with token=[REDACTED:github-token]"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"repo": "not-a-repo"}, "memory repo must look like OWNER/NAME, got 'not-a-repo'"),
        (
            {"role": "Reviewer!"},
            "memory role must be a lowercase role name like 'reviewer', got 'Reviewer!'",
        ),
        ({"kind": "rule"}, "memory kind must be 'fact' or 'procedure', got 'rule'"),
        ({"body": "   "}, "memory text is empty"),
        ({"author": " "}, "memory author is empty: say who (a login or worker id)"),
        ({"body": "x" * 2001}, "memory text is 2001 characters; the limit is 2000"),
    ],
)
def test_bad_memory_input_is_refused_naming_the_field(
    store: Store, kwargs: dict[str, str], message: str
) -> None:
    args = {"body": "fine", "author": "alice", **kwargs}
    body = args.pop("body")
    with pytest.raises(MemoryInputError) as err:
        UserMemory(store).add(body, **args)
    assert str(err.value) == message
