"""Reading tool results the way a reviewer model would: find changed files, patches, findings.

Tool results arrive as text: usually JSON (possibly quoted inside ``<untrusted>`` delimiters),
sometimes a raw unified diff. Findings are the concrete kind a reviewer flags on sight: a hard-coded
credential (quoting its line, as a reviewer would), debug prints, debugger breakpoints,
TODO/FIXME in added lines, and source changes without tests.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_DIFF_FILE = re.compile(r"^\+\+\+ b/(.+)$", re.MULTILINE)
_SOURCE_EXT = (".py", ".js", ".ts", ".go", ".rs", ".java", ".rb", ".c", ".cpp", ".kt", ".cs")
# A finding's message may quote the offending line: "{line}" stands for it.
_CHECKS: tuple[tuple[re.Pattern[str], tuple[str, ...], str], ...] = (
    (
        re.compile(
            r"gh[pousr]_|github_pat_|sk-ant-|\[REDACTED:"
            r"|(?i:\b(?:token|secret|password|api_?key)\s*[:=]\s*[\"'])"
        ),
        (),
        "Hard-coded credential: `{line}`; load it from the environment and rotate it.",
    ),
    (
        re.compile(r"\bpdb\.set_trace\(|\bbreakpoint\(\)|^\s*import i?pdb\b"),
        (".py",),
        "Debugger breakpoint left in the code; remove it before merging.",
    ),
    (
        re.compile(r"(?<![\w.])print\("),
        (".py",),
        "Leftover debug `print(`; use logging or remove it.",
    ),
    (
        re.compile(r"\bconsole\.log\("),
        (".js", ".ts", ".jsx", ".tsx"),
        "Leftover `console.log`; remove it or use the project's logger.",
    ),
    (
        re.compile(r"\b(TODO|FIXME|XXX)\b"),
        (),
        "TODO left in new code; finish it or track it in an issue before merging.",
    ),
)


@dataclass(frozen=True)
class ChangedFile:
    path: str
    status: str = "modified"
    patch: str | None = None


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    body: str
    code: str = ""  # the flagged line's text, when the patch is in view


def parse_json(text: str) -> Any:
    """The JSON value in ``text``, tolerating delimiters or prose around it; None if none."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = text.find(opener), text.rfind(closer)
        if 0 <= start < end:
            try:
                return json.loads(text[start : end + 1])
            except ValueError:
                continue
    return None


def walk(value: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object nested anywhere in ``value``."""
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


def changed_files(text: str) -> list[ChangedFile]:
    data = parse_json(text)
    files: list[ChangedFile] = []
    if data is not None:
        for obj in walk(data):
            path = obj.get("filename") or obj.get("path")
            if isinstance(path, str) and ("patch" in obj or "status" in obj):
                patch = obj.get("patch")
                status = str(obj.get("status") or "modified")
                files.append(ChangedFile(path, status, patch if isinstance(patch, str) else None))
        if files:
            return files
    for chunk in re.split(r"(?m)^(?=diff --git )", text):
        match = _DIFF_FILE.search(chunk)
        if match:
            files.append(ChangedFile(match.group(1).strip(), "modified", chunk))
    return files


def next_page(text: str) -> int | None:
    """The page to ask for next, when a paged tool result says there is one."""
    data = parse_json(text)
    for obj in walk(data):
        for key in ("next_page", "nextPage"):
            value = obj.get(key)
            if isinstance(value, int) and value > 0:
                return value
    return None


def added_lines(patch: str) -> Iterator[tuple[int, str]]:
    """(head line number, text) for each added line of a unified-diff patch."""
    line_no = 0
    in_hunk = False
    for raw in patch.splitlines():
        hunk = _HUNK.match(raw)
        if hunk:
            line_no, in_hunk = int(hunk.group(1)), True
            continue
        if not in_hunk or raw.startswith(("+++", "---")):
            continue
        if raw.startswith("+"):
            yield line_no, raw[1:]
            line_no += 1
        elif raw.startswith(" "):
            line_no += 1
        elif raw.startswith("\\"):
            continue


def is_test(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (
        "/tests/" in f"/{path}" or name.startswith("test_") or "_test." in name or ".test." in name
    )


def findings(files: list[ChangedFile]) -> list[Finding]:
    found: list[Finding] = []
    first_added: dict[str, int] = {}
    first_text: dict[str, str] = {}
    for file in files:
        if file.status == "removed" or not file.patch:
            continue
        for line, text in added_lines(file.patch):
            first_added.setdefault(file.path, line)
            first_text.setdefault(file.path, text)
            for pattern, exts, message in _CHECKS:
                if exts and not file.path.endswith(exts):
                    continue
                if pattern.search(text):
                    found.append(
                        Finding(file.path, line, message.replace("{line}", text.strip()), text)
                    )
                    break
    sources = [f for f in files if f.path.endswith(_SOURCE_EXT) and not is_test(f.path)]
    if sources and not any(is_test(f.path) for f in files):
        target = next((f for f in sources if f.path in first_added), None)
        if target is not None:
            found.append(
                Finding(
                    target.path,
                    first_added[target.path],
                    f"This changes {target.path} but no test changes come with it; "
                    "add or update a test that covers the change.",
                    first_text[target.path],
                )
            )
    return found
