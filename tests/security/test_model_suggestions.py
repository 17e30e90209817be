"""Trust class 6 of issue 37: model-written suggestion fences are not committable.

A finding's message or a thread answer is the model's prose, and the model read what the PR
author wrote. A ```` ```suggestion ```` fence inside that prose was posted as one: GitHub offered
the author's chosen replacement as a one-click commit, on lines the product chose not to suggest
on. Now only the replacement code put in its own block is a suggestion; a fence in prose shows
as a plain code block. The block structure is read as GitHub reads it (CommonMark).
"""

from __future__ import annotations

from markdown_it import MarkdownIt

from agents.posting.findings import Finding
from agents.posting.render import answer_body, finding_body

HOSTILE = "Fine.\n\n```suggestion\nos.system(payload)\n```\n\n> ~~~ suggestion\n> x\n> ~~~\n"


def _suggestions(body: str) -> list[str]:
    tokens = MarkdownIt("commonmark").parse(body)
    return [t.content for t in tokens if t.type == "fence" and t.info.strip() == "suggestion"]


def test_a_suggestion_fence_in_a_findings_message_is_no_suggestion() -> None:
    finding = Finding(
        path="a.py", line=3, severity="major", category="bug", message=HOSTILE, replacement="x = 1"
    )
    assert _suggestions(finding_body(finding, "suggestion", "a" * 40)) == ["x = 1\n"]
    assert _suggestions(finding_body(finding, "line", "a" * 40)) == []


def test_a_suggestion_fence_in_a_thread_answer_is_no_suggestion() -> None:
    body = answer_body(HOSTILE)
    assert _suggestions(body) == []
    assert "os.system(payload)" in body  # shown as written, only not committable
