"""Searching the copy for a literal string, in time linear in what is searched.

The model's query is text to find, never a regular expression: a pattern such as ``(a+)+$``
against a file of ``a``s would backtrack for longer than the run lives, and the file's text is
the repository's (anyone's). ``str.find`` is linear for any needle (CPython switches to the
two-way algorithm when a needle would cost more), the query is capped, and so is what is
returned: a number of hits, each line cut to a window around its hit.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

MAX_QUERY_CHARS = 200
MAX_HITS = 50
LINE_WINDOW = 160


@dataclass(frozen=True)
class Hit:
    path: str
    line: int
    text: str


def _window(line: str, at: int, size: int) -> str:
    if len(line) <= size:
        return line
    start = max(0, min(at - size // 4, len(line) - size))
    head = "..." if start else ""
    tail = "..." if start + size < len(line) else ""
    return f"{head}{line[start : start + size]}{tail}"


def find_in_text(path: str, text: str, query: str, *, ignore_case: bool = False) -> Iterator[Hit]:
    """Each line of ``text`` holding ``query`` (a literal), in order; every line is scanned
    once."""
    needle = query.lower() if ignore_case else query
    for number, line in enumerate(text.split("\n"), start=1):
        at = (line.lower() if ignore_case else line).find(needle)
        if at != -1:
            yield Hit(path, number, _window(line, at, LINE_WINDOW))


def search(
    files: Iterable[tuple[str, str]],
    query: str,
    *,
    ignore_case: bool = False,
    limit: int = MAX_HITS,
) -> tuple[list[Hit], bool]:
    """Hits of ``query`` in ``files`` ((path, text) pairs), at most ``limit``; and whether more
    were left out."""
    if not query:
        raise ValueError("the query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise ValueError(f"the query is longer than {MAX_QUERY_CHARS} characters")
    hits: list[Hit] = []
    for path, text in files:
        for hit in find_in_text(path, text, query, ignore_case=ignore_case):
            if len(hits) == limit:
                return hits, True
            hits.append(hit)
    return hits, False
