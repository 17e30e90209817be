"""Paged tool output: long patches, files and listings come in pages that say what comes next,
and joined together the pages are the original, character for character."""

from __future__ import annotations

import pytest

from agents.llm.context import ContextBudget
from agents.tools.base import ToolError
from agents.tools.pages import file_page, listing, one_patch, split_pages

SMALL = ContextBudget.for_window(16_000, 2_048).policy(3.0)


def test_pages_rejoin_to_the_original_and_cut_after_line_ends() -> None:
    text = "".join(f"line {i}\n" for i in range(2_000))
    pages = split_pages(text, 1_000)
    assert "".join(pages) == text
    assert all(len(p) <= 1_000 for p in pages)
    assert all(p.endswith("\n") for p in pages)


def test_a_line_longer_than_a_page_is_split_not_dropped() -> None:
    text = "x" * 2_500
    assert split_pages(text, 1_000) == ["x" * 1_000, "x" * 1_000, "x" * 500]


def test_a_long_file_says_which_page_it_is_and_how_to_read_the_next() -> None:
    text = "".join(f"VALUE_{i} = {i}\n" for i in range(5_000))
    body, footer, _ = file_page(text, "src/table.py", SMALL, 1)
    total = len(split_pages(text, SMALL.file_page_chars))
    assert total > 5
    assert footer == (
        f'[file page 1 of {total}, read the next with read_file(path="src/table.py", page=2)]'
    )
    last_body, last_footer, _ = file_page(text, "src/table.py", SMALL, total)
    assert last_footer == f"[file page {total} of {total}]"
    rejoined = "".join(file_page(text, "src/table.py", SMALL, n)[0] for n in range(1, total + 1))
    assert rejoined == text and body and last_body
    with pytest.raises(ToolError, match=f"has {total} page"):
        file_page(text, "src/table.py", SMALL, total + 1)


def test_a_short_file_has_no_footer() -> None:
    assert file_page("x = 1\n", "a.py", SMALL, 1)[1] == ""


def test_a_long_patch_is_paged_within_the_listing_and_by_path() -> None:
    patch = "@@ -1,0 +1,900 @@\n" + "".join(f"+row_{i} = {i}\n" for i in range(900))
    files = [{"filename": "big.py", "status": "added", "patch": patch}]
    view, _ = listing(files, SMALL, 1)
    entry = view["files"][0]
    pages = entry["patch_pages"]
    assert pages > 1 and entry["patch_page"] == 1
    assert 'list_pull_files(path="big.py", patch_page=2)' in entry["patch_note"]
    later = [one_patch(files, "big.py", SMALL, n)[0]["patch"] for n in range(2, pages + 1)]
    # Each later page opens with a hunk header naming the file line its first row is on.
    for page in later:
        header, first, _ = page.split("\n", 2)
        assert header.endswith("@@ (continued)")
        row = int(first.removeprefix("+row_").split(" ")[0])
        assert header.startswith(f"@@ -1 +{row + 1} @@")
    bodies = [page.split("\n", 1)[1] for page in later]
    assert "".join([entry["patch"], *bodies]) == patch


def test_a_listing_of_300_files_is_paged_by_count_and_size() -> None:
    files = [
        {"filename": f"m{i}.py", "status": "added", "patch": "+x = 1\n" * 40} for i in range(300)
    ]
    first, _ = listing(files, SMALL, 1)
    total = first["pages"]
    assert total > 1 and first["next_page"] == 2
    assert first["note"] == f"page 1 of {total}, read the next with list_pull_files(page=2)"
    seen = [
        f["filename"] for n in range(1, total + 1) for f in listing(files, SMALL, n)[0]["files"]
    ]
    assert seen == [f"m{i}.py" for i in range(300)]
    assert all(len(str(listing(files, SMALL, n)[0])) < 2 * SMALL.file_page_chars for n in (1, 2))
