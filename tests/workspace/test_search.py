"""Searching the copy: a literal string, linear on hostile input, with bounded output."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agents.workspace.copy import Workspace
from agents.workspace.search import LINE_WINDOW, MAX_HITS, MAX_QUERY_CHARS, search

# Far more than the linear search needs on any machine, far less than backtracking takes.
GENEROUS_SECONDS = 10.0


def test_search_finds_literal_text_by_line_and_case() -> None:
    files = [("a.py", "def Size():\n    return SIZE\n"), ("b.py", "nothing\n")]
    hits, more = search(files, "size", ignore_case=True)
    assert [(h.path, h.line) for h in hits] == [("a.py", 1), ("a.py", 2)] and not more
    assert search(files, "size")[0] == []
    assert [h.line for h in search(files, "(")[0]] == [1]  # a parenthesis is only text


def test_search_output_is_bounded_in_hits_and_line_length() -> None:
    many = "\n".join(["needle " + "x" * 10_000] * (MAX_HITS * 3))
    hits, more = search([("big.txt", many)], "needle")
    assert len(hits) == MAX_HITS and more
    assert all(len(h.text) <= LINE_WINDOW + 6 for h in hits)
    with pytest.raises(ValueError, match="longer than"):
        search([], "q" * (MAX_QUERY_CHARS + 1))


def test_a_backtracking_pattern_on_adversarial_text_costs_linear_time() -> None:
    # As a regular expression, "(a+)+$" against a run of a's ending in "!" backtracks
    # exponentially (30 a's already take minutes); as text it is one linear scan. The
    # same holds for a long needle that almost matches everywhere.
    hostile = "a" * 4_000_000 + "!"
    started = time.monotonic()
    assert search([("x.txt", hostile)], "(a+)+$")[0] == []
    assert search([("x.txt", hostile)], "a" * (MAX_QUERY_CHARS - 1) + "b")[0] == []
    assert search([("x.txt", hostile)], "A" * 100 + "!", ignore_case=True)[0] != []
    assert time.monotonic() - started < GENEROUS_SECONDS


def test_the_copy_is_searched_under_a_directory_only(copy_root: Path) -> None:
    ws = Workspace(copy_root)
    hits, _ = ws.search("def size", "src")
    assert [(h.path, h.line) for h in hits] == [("src/widgets/size.py", 1)]
    assert ws.search("Be careful", "src")[0] == []
