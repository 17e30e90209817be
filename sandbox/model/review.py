"""The scripted reviewer: read the PR, every page of its changed files, submit one review.

It follows paged tool output the way swarm's tools page it: the changed-files listing
(``page`` of ``pages``), patches split over several pages (an entry's ``patch_page`` of
``patch_pages``, the rest fetched with ``list_pull_files(path=..., patch_page=N)``) and files
split over several pages (a ``[file page N of M`` footer, the rest fetched with
``read_file(path=..., page=N)``). Like a real model it writes down beside each call what it
learned (page counts, findings), so a tool result later stubbed out of the history costs it
nothing it still needs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sandbox.model.conversation import (
    Action,
    Conversation,
    Reply,
    ToolCall,
    head_sha,
    outline,
    ref_values,
    shard_findings,
)
from sandbox.model.diffscan import (
    ChangedFile,
    Finding,
    changed_files,
    findings,
    is_test,
    next_page,
    parse_json,
    walk,
)
from sandbox.model.learnings import dismissals, not_dismissed

_LISTING = re.compile(r"the changed-files listing has (\d+) page")
_PAGE_FILES = re.compile(r"listing page (\d+) has (\d+) file")
_PATCH = re.compile(r"the patch of (\S+) has (\d+) page")
_FILE = re.compile(r"file (\S+) has (\d+) page")
_FILE_FOOTER = re.compile(r"\[file page (\d+) of (\d+)")
_TESTS_NOTE = "Noted: tests change in this pull request."
# How the task line names a shard's part (agents.worker.prompt.describe_task).
SHARD = "This worker covers part"
_TEST_GAP = "This changes "


@dataclass
class _Seen:
    """What the conversation shows so far: in tool results still in view, or in the notes."""

    listing_pages: int | None = None
    page_files: dict[int, int] = field(default_factory=dict)
    patch_pages: dict[str, int] = field(default_factory=dict)
    file_pages: dict[str, int] = field(default_factory=dict)
    files: dict[str, ChangedFile] = field(default_factory=dict)  # first sight of each path
    patches: list[ChangedFile] = field(default_factory=list)  # every patch page in view

    tests_seen: bool = False
    # A shard: whether the PR as a whole lacks tests is not its call.
    judged_elsewhere: bool = False

    def found(self, noted: list[Finding]) -> list[Finding]:
        """Findings in the patches still in view, in reading order, then noted earlier ones."""
        merged: dict[tuple[str, int, str], Finding] = {}
        for f in findings(self.patches):
            if (self.tests_seen or self.judged_elsewhere) and f.body.startswith(_TEST_GAP):
                continue  # tests came with the change, on a page no longer in view
            merged.setdefault((f.path, f.line, " ".join(f.body.lower().split())), f)
        for f in noted:
            merged.setdefault((f.path, f.line, " ".join(f.body.lower().split())), f)
        # Missing tests is said of the pull request once, not once per page that showed it.
        gaps = [f for f in merged.values() if f.body.startswith(_TEST_GAP)]
        return [f for f in merged.values() if not f.body.startswith(_TEST_GAP) or f is gaps[0]]


def _from_notes(notes: str) -> _Seen:
    seen = _Seen()
    for match in _LISTING.finditer(notes):
        seen.listing_pages = int(match.group(1))
    seen.page_files = {int(m.group(1)): int(m.group(2)) for m in _PAGE_FILES.finditer(notes)}
    seen.patch_pages = {m.group(1): int(m.group(2)) for m in _PATCH.finditer(notes)}
    seen.file_pages = {m.group(1): int(m.group(2)) for m in _FILE.finditer(notes)}
    seen.tests_seen = _TESTS_NOTE in notes
    return seen


def _observe(conv: Conversation, seen: _Seen) -> None:
    for call in conv.called("list_pull_files"):
        data = parse_json(call.result or "")
        if isinstance(data, Mapping) and not call.input.get("path"):
            if isinstance(data.get("pages"), int):
                seen.listing_pages = int(data["pages"])
            if isinstance(data.get("files"), list):
                seen.page_files[int(call.input.get("page") or 1)] = len(data["files"])
        for obj in walk(data):
            path, pages = obj.get("filename"), obj.get("patch_pages")
            if isinstance(path, str) and isinstance(pages, int) and pages > 1:
                seen.patch_pages[path] = pages
        for file in changed_files(call.result or ""):
            seen.files.setdefault(file.path, file)
            seen.tests_seen = seen.tests_seen or is_test(file.path)
            if file.patch:
                seen.patches.append(file)
    for call in conv.called("read_file"):
        footer = _FILE_FOOTER.search(call.result or "")
        if footer and isinstance(call.input.get("path"), str):
            seen.file_pages[str(call.input["path"])] = int(footer.group(2))


def _notes_to_add(conv: Conversation, seen: _Seen, found: list[Finding]) -> str:
    """What this reply writes down that the model has not written before."""
    said = conv.notes
    lines: list[str] = []
    if seen.tests_seen and _TESTS_NOTE not in said:
        lines.append(_TESTS_NOTE)
    if seen.listing_pages and not _LISTING.search(said):
        lines.append(f"Noted: the changed-files listing has {seen.listing_pages} page(s).")
    for page, count in sorted(seen.page_files.items()):
        if f"listing page {page} has" not in said:
            lines.append(f"Noted: listing page {page} has {count} file(s).")
    for path, pages in sorted(seen.patch_pages.items()):
        if f"the patch of {path} has" not in said:
            lines.append(f"Noted: the patch of {path} has {pages} page(s).")
    for path, pages in sorted(seen.file_pages.items()):
        if f"file {path} has" not in said:
            lines.append(f"Noted: file {path} has {pages} page(s).")
    known = {(f.path, f.line) for f in shard_findings(said)}
    new = [f for f in found if (f.path, f.line) not in known]
    if new:
        lines.append("Noted findings:")
        lines += [f"- {f.path}:{f.line}: {f.body}" for f in new]
    return "\n".join(lines)


def _next_read(conv: Conversation, seen: _Seen, ref: dict[str, Any], read_files: bool) -> Any:
    """The next page or file to read, as (tool, arguments), or None when all is read."""
    listings = [c for c in conv.called("list_pull_files") if not c.input.get("path")]
    if conv.offers("list_pull_files"):
        if not listings:
            return "list_pull_files", {**ref, "page": 1}
        asked = {c.input.get("page") or 1 for c in listings}
        total = seen.listing_pages
        if total is None:
            page = next_page(listings[-1].result or "")
            total = page if page is not None else 1
        for page in range(2, total + 1):
            if page not in asked:
                return "list_pull_files", {**ref, "page": page}
        if conv.accepts("list_pull_files", "patch_page"):
            for path, pages in sorted(seen.patch_pages.items()):
                got = {1} | {
                    c.input.get("patch_page")
                    for c in conv.called("list_pull_files")
                    if c.input.get("path") == path
                }
                for part in range(2, pages + 1):
                    if part not in got:
                        return "list_pull_files", {**ref, "path": path, "patch_page": part}
    if conv.offers("read_file"):
        reads = conv.called("read_file")
        at = {k: v for k, v in (("ref", head_sha(conv)), ("sha", head_sha(conv))) if v}
        already = {c.input.get("path") for c in reads}
        for file in seen.files.values():
            wanted = read_files or file.patch is None
            if wanted and file.status != "removed" and file.path not in already:
                return "read_file", {**ref, "path": file.path, **at}
        if conv.accepts("read_file", "page"):
            for path, pages in sorted(seen.file_pages.items()):
                got = {c.input.get("page") or 1 for c in reads if c.input.get("path") == path}
                for part in range(2, pages + 1):
                    if part not in got:
                        return "read_file", {**ref, "path": path, "page": part, **at}
    return None


def review(conv: Conversation, *, read_files: bool) -> Action:
    ref = ref_values(conv)
    if conv.offers("get_pull") and not conv.called("get_pull"):
        return conv.call("get_pull", ref)
    seen = _from_notes(conv.notes)
    _observe(conv, seen)
    # The outline shows the whole PR: tests another worker reads are tests all the same. A
    # shard judges only its own files, so it never says the PR lacks tests: the summarizer does.
    files = outline(conv)
    seen.tests_seen = seen.tests_seen or any(f.test for f in files)
    seen.judged_elsewhere = SHARD in conv.task
    noted = shard_findings(conv.notes)
    found = not_dismissed(seen.found(noted), dismissals(conv.opening))
    note = _notes_to_add(conv, seen, found)
    wanted = _next_read(conv, seen, ref, read_files)
    if wanted is not None:
        return conv.call(wanted[0], wanted[1], note)
    nfiles = max(sum(seen.page_files.values()), len(seen.files))
    if conv.offers("record_progress") and not conv.called("record_progress"):
        text = f"Read {nfiles} changed file(s); {len(found)} finding(s) to post."
        values = {"note": text, "summary": text, "text": text, "message": text}
        return conv.call(
            "record_progress",
            {**ref, **values, "kind": "checkpoint", "goal": "review posted"},
            note,
        )
    if conv.offers("submit_review") and should_submit(conv):
        values = review_values(ref, found, nfiles)
        return conv.call("submit_review", without_inline(values, conv), note)
    return Reply(summary(found, nfiles))


def should_submit(conv: Conversation) -> bool:
    """Submit once; after a refused first attempt, try once more without inline comments."""
    attempts = conv.called("submit_review")
    return not attempts or (len(attempts) == 1 and attempts[0].is_error)


def without_inline(values: dict[str, Any], conv: Conversation) -> dict[str, Any]:
    """The retry of a refused review: an older schema's free-text comments are dropped (they
    stay listed in the body); swarm's findings are data the product places, so they stay."""
    if not conv.called("submit_review"):
        return values
    return {**values, "comments": []}


def review_values(ref: Mapping[str, Any], found: list[Finding], nfiles: int) -> dict[str, Any]:
    """Both shapes a review tool may ask for (only those its schema names are sent): swarm's
    (``summary`` in plain text, ``findings`` as data) and an older one (``body``, free-text
    inline ``comments``)."""
    comments = [{"path": f.path, "line": f.line, "side": "RIGHT", "body": f.body} for f in found]
    return {
        **ref,
        "event": "COMMENT",
        "body": summary(found, nfiles),
        "comments": comments,
        "summary": f"Reviewed {nfiles} changed file(s); {len(found)} finding(s) reported.",
        "findings": [f.as_report() for f in found],
    }


def summary(found: list[Finding], nfiles: int) -> str:
    if not found:
        return f"Reviewed {nfiles} changed file(s): no concrete problems found."
    lines = [f"Reviewed {nfiles} changed file(s): {len(found)} finding(s)."]
    lines += [f"- {f.path}:{f.line}: {f.body}" for f in found]
    return "\n".join(lines)


__all__ = ["ToolCall", "review", "review_values", "should_submit", "summary", "without_inline"]
