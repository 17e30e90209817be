"""Paging tool output to the session's tier: nothing is cut, everything is one more call away.

A patch or a file longer than a page is split at line ends into pages of at most the tier's
size; every page says which page it is and the exact call that reads the next one. The
changed-files listing is split the same way, by file count and by the characters of the patch
pages it carries, so one tool result never outgrows its share of the context budget.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from agents.llm.context import TierPolicy
from agents.tools.base import ToolError

# How many of a page's file names its one-line summary (the transcript, the run log) shows.
SUMMARY_NAMES = 5
# A listed file (generated, vendored, data, no patch from GitHub...) is read this far, once.
EXCERPT_CHARS = 4000


def split_pages(text: str, size: int) -> list[str]:
    """``text`` in pages of at most ``size`` characters, cut after a newline where there is one.

    Joined back together the pages are ``text`` again, character for character.
    """
    if size <= 0:
        raise ValueError("a page must hold at least one character")
    pages: list[str] = []
    start = 0
    while len(text) - start > size:
        cut = text.rfind("\n", start, start + size)
        end = cut + 1 if cut >= start else start + size
        pages.append(text[start:end])
        start = end
    pages.append(text[start:])
    return pages


_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def continued_hunk(before: str) -> str:
    """A hunk header naming the old and new line numbers where a patch continues after
    ``before`` (the pages already shown), for the top of the next page."""
    old = new = 0
    for line in before.splitlines():
        header = _HUNK.match(line)
        if header:
            old, new = int(header.group(1)), int(header.group(2))
        elif line.startswith("+"):
            new += 1
        elif line.startswith("-"):
            old += 1
        elif not line.startswith("\\"):
            old += 1
            new += 1
    return f"@@ -{old} +{new} @@ (continued)\n"


def _call(name: str, args: Mapping[str, Any]) -> str:
    inner = ", ".join(f"{k}={json.dumps(v)}" for k, v in args.items())
    return f"{name}({inner})"


def patch_entry(file: Mapping[str, Any], policy: TierPolicy, patch_page: int = 1) -> dict[str, Any]:
    """One changed file as the listing shows it, its patch reduced to page ``patch_page``."""
    entry: dict[str, Any] = {
        "filename": file.get("filename"),
        "status": file.get("status"),
        "additions": file.get("additions"),
        "deletions": file.get("deletions"),
    }
    patch = file.get("patch")
    if not isinstance(patch, str):
        return entry
    pages = split_pages(patch, policy.patch_page_chars)
    if patch_page > len(pages):
        raise ToolError(
            f"the patch of {entry['filename']} has {len(pages)} page(s); "
            f"there is no patch_page {patch_page}"
        )
    entry["patch"] = pages[patch_page - 1]
    if patch_page > 1:
        # A page cut from the middle of a hunk has no header of its own: without one, nobody
        # reading it (a model, a person) knows which line of the file its first line is.
        entry["patch"] = continued_hunk("".join(pages[: patch_page - 1])) + entry["patch"]
    if len(pages) > 1:
        entry["patch_page"] = patch_page
        entry["patch_pages"] = len(pages)
        if patch_page < len(pages):
            nxt = {"path": entry["filename"], "patch_page": patch_page + 1}
            entry["patch_note"] = (
                f"patch page {patch_page} of {len(pages)}, read the next with "
                f"{_call('list_pull_files', nxt)}"
            )
    return entry


def listing_pages(files: Sequence[Mapping[str, Any]], policy: TierPolicy) -> list[list[int]]:
    """Indexes of ``files`` per listing page: at most ``files_per_page`` files and about a
    file page's worth of patch characters each (a page always holds at least one file)."""
    pages: list[list[int]] = [[]]
    used = 0
    for index, file in enumerate(files):
        patch = file.get("patch")
        size = min(len(patch), policy.patch_page_chars) if isinstance(patch, str) else 0
        size += 200  # the entry's other fields and the JSON around them
        current = pages[-1]
        full = len(current) >= policy.files_per_page or used + size > policy.file_page_chars
        if current and full:
            pages.append([])
            used = 0
        pages[-1].append(index)
        used += size
    return pages


def listing(
    files: Sequence[Mapping[str, Any]], policy: TierPolicy, page: int
) -> tuple[dict[str, Any], str]:
    """Page ``page`` of the changed-files listing, and a one-line summary for the record."""
    pages = listing_pages(files, policy)
    if page > len(pages):
        raise ToolError(f"page {page} is past the last page ({len(pages)})")
    shown = [patch_entry(files[i], policy) for i in pages[page - 1]]
    view: dict[str, Any] = {
        "page": page,
        "pages": len(pages),
        "next_page": page + 1 if page < len(pages) else None,
        "total_files": len(files),
        "files": shown,
    }
    if page < len(pages):
        view["note"] = (
            f"page {page} of {len(pages)}, read the next with "
            f"{_call('list_pull_files', {'page': page + 1})}"
        )
    names = [str(f["filename"]) for f in shown]
    more = f" and {len(names) - SUMMARY_NAMES} more" if len(names) > SUMMARY_NAMES else ""
    summary = f"page {page}/{len(pages)}, {len(shown)} file(s): "
    return view, summary + ", ".join(names[:SUMMARY_NAMES]) + more


def one_patch(
    files: Sequence[Mapping[str, Any]], path: str, policy: TierPolicy, patch_page: int
) -> tuple[dict[str, Any], str]:
    """Page ``patch_page`` of one changed file's patch."""
    for file in files:
        if file.get("filename") == path:
            entry = patch_entry(file, policy, patch_page)
            total = entry.get("patch_pages", 1)
            return entry, f"{path}: patch page {patch_page}/{total}"
    raise ToolError(f"{path} is not among the files this review covers")


def file_page(text: str, path: str, policy: TierPolicy, page: int) -> tuple[str, str, str]:
    """Page ``page`` of a file's text, a footer naming the page and the next call ("" for a
    file of one page), and a summary for the record."""
    pages = split_pages(text, policy.file_page_chars)
    if page > len(pages):
        raise ToolError(f"{path} has {len(pages)} page(s); there is no page {page}")
    body = pages[page - 1]
    if len(pages) == 1:
        return body, "", f"{path}: {len(text)} chars"
    footer = f"[file page {page} of {len(pages)}"
    if page < len(pages):
        footer += f", read the next with {_call('read_file', {'path': path, 'page': page + 1})}"
    summary = f"{path}: page {page}/{len(pages)} of {len(text)} chars"
    return body, footer + "]", summary


def excerpt(text: str, path: str, reason: str, what: str = "file") -> tuple[str, str, str]:
    """The start of a listed file's text (or patch), a footer saying it is an excerpt and why
    there is no more, and a summary: a listed file is never paged through."""
    if "\0" in text[:8000] or text[:8000].count("\ufffd") > 20:
        body = ""
        shown = f"[{path} is binary: nothing to show"
    else:
        body = text[:EXCERPT_CHARS]
        shown = f"[{what} excerpt: the first {len(body):,} of {len(text):,} characters"
    footer = f"{shown}; {path} is listed, not read in full ({reason}), so there is no next page]"
    return body, footer, f"{path}: {what} excerpt {len(body)}/{len(text)} chars"
