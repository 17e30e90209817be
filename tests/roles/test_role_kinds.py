"""A role says which kind of work it does (``kind:``) and which ``/swarm`` word starts it
(``command:``); the files are checked for both, and the role book answers from them alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.kinds.book import RoleBook
from agents.roles.files import RoleLoadError, load_roles
from tests.paths import ROLES_DIR
from tests.roles.test_roles import GOOD, _write


def test_each_shipped_role_declares_its_kind_and_the_book_answers_from_them() -> None:
    roles = load_roles(ROLES_DIR)
    book = RoleBook(roles)
    assert {r.id: r.kind for r in roles.values()} == {
        "fixer": "fix",
        "implementer": "implement",
        "responder": "respond",
        "reviewer": "review",
        "security-reviewer": "review",
        "summarizer": "summarize",
        "triager": "triage",
    }
    assert [book.role_for(k) for k in ("review", "summarize", "triage", "respond")] == [
        "reviewer",
        "summarizer",
        "triager",
        "responder",
    ]
    assert (book.commanded("review"), book.commanded("security"), book.commanded("x")) == (
        "reviewer",
        "security-reviewer",
        None,
    )
    assert book.focus("security") == book.focus("security-reviewer") == "security-reviewer"
    assert book.focus("reviewer") is None  # the review itself is no focus laid over it


def test_a_mistyped_kind_is_named_with_its_file_line_and_the_kind_meant(tmp_path: Path) -> None:
    folder = _write(tmp_path, "reviewer.yaml", GOOD + "kind: reveiw\n")
    with pytest.raises(RoleLoadError) as caught:
        load_roles(folder)
    [message] = caught.value.messages
    assert message == (
        f"{folder / 'reviewer.yaml'}:17: kind: unknown kind of work 'reveiw' "
        "(did you mean 'review'?)"
    )


def test_a_kind_far_from_any_lists_the_known_kinds(tmp_path: Path) -> None:
    folder = _write(tmp_path, "reviewer.yaml", GOOD + "kind: zzz\n")
    with pytest.raises(RoleLoadError) as caught:
        load_roles(folder)
    assert "(known: fix, implement, respond, review, summarize, triage" in caught.value.messages[0]


def test_two_roles_claiming_one_command_word_are_refused(tmp_path: Path) -> None:
    folder = _write(tmp_path, "reviewer.yaml", GOOD + "command: review\n")
    other = GOOD.replace("id: reviewer", "id: second") + "command: review\n"
    _write(tmp_path, "second.yaml", other)
    with pytest.raises(RoleLoadError) as caught:
        load_roles(folder)
    assert caught.value.messages == [
        f"{folder / 'second'}.yaml:{len(other.splitlines())}: command: /swarm review is "
        "already the word of role 'reviewer'"
    ]


@pytest.mark.parametrize("word", ["help", "Review", "two words"])
def test_a_command_word_is_a_plain_lower_case_word_and_never_help(
    tmp_path: Path, word: str
) -> None:
    folder = _write(tmp_path, "reviewer.yaml", GOOD + f"command: {word}\n")
    with pytest.raises(RoleLoadError) as caught:
        load_roles(folder)
    assert caught.value.messages[0].startswith(f"{folder / 'reviewer.yaml'}:17: command:")


def test_a_role_file_without_kind_is_a_reviewer_as_before(tmp_path: Path) -> None:
    roles = load_roles(_write(tmp_path, "reviewer.yaml", GOOD))
    assert (roles["reviewer"].kind, roles["reviewer"].command) == ("review", None)
