"""Which lines of a patch a review comment may sit on, and in which hunk, as the sandbox
validates inline comments: GitHub's rules for a file's unified-diff patch."""

from __future__ import annotations

from sandbox.github.diffs import commentable_lines, hunk_index

# Two hunks: a line replaced near the top, and a line added after the last one of a file that
# ended without a newline (git's "\ No newline at end of file" marks that; it is no line itself).
PATCH = "\n".join(
    [
        "@@ -1,3 +1,3 @@",
        " a",
        "-b",
        "+B",
        " c",
        "@@ -9,2 +9,3 @@",
        " i",
        "-j",
        "\\ No newline at end of file",
        "+j",
        "+k",
    ]
)


def test_every_diff_line_on_its_side_is_commentable_and_the_no_newline_mark_is_not() -> None:
    left, right = commentable_lines(PATCH)
    assert left == {1, 2, 3, 9, 10}
    assert right == {1, 2, 3, 9, 10, 11}
    assert commentable_lines(None) == (set(), set())


def test_a_line_is_found_in_its_hunk_on_its_side_only() -> None:
    assert hunk_index(PATCH, 2, "LEFT") == 0  # "-b"
    assert hunk_index(PATCH, 2, "RIGHT") == 0  # "+B"
    assert hunk_index(PATCH, 11, "RIGHT") == 1
    assert hunk_index(PATCH, 11, "LEFT") is None
    assert hunk_index(PATCH, 5, "RIGHT") is None  # between the hunks
    assert hunk_index(None, 1, "RIGHT") is None
