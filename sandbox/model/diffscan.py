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
SOURCE_EXT = (".py", ".js", ".ts", ".go", ".rs", ".java", ".rb", ".c", ".cpp", ".kt", ".cs")


@dataclass(frozen=True)
class Check:
    """One kind of finding: what it matches, in which files, what it says (``{line}`` stands
    for the flagged line), how severe, which category, and whether the fix deletes the line."""

    pattern: re.Pattern[str]
    exts: tuple[str, ...]
    message: str
    severity: str
    category: str
    deletes: bool = False


_CHECKS: tuple[Check, ...] = (
    Check(
        re.compile(
            r"gh[pousr]_|github_pat_|sk-ant-|\[REDACTED:"
            r"|(?i:\b(?:token|secret|password|api_?key)\s*[:=]\s*[\"'])"
        ),
        (),
        "Hard-coded credential: `{line}`; load it from the environment and rotate it.",
        "critical",
        "security",
    ),
    Check(
        re.compile(r"\bpdb\.set_trace\(|\bbreakpoint\(\)|^\s*import i?pdb\b"),
        (".py",),
        "Debugger breakpoint left in the code; remove it before merging.",
        "major",
        "bug",
        deletes=True,
    ),
    Check(
        re.compile(r"(?<![\w.])print\("),
        (".py",),
        "Leftover debug `print(`; use logging or remove it.",
        "minor",
        "maintainability",
        deletes=True,
    ),
    Check(
        re.compile(r"\bconsole\.log\("),
        (".js", ".ts", ".jsx", ".tsx"),
        "Leftover `console.log`; remove it or use the project's logger.",
        "minor",
        "maintainability",
        deletes=True,
    ),
    # The kinds of defect the labelled set of ``swarm eval`` plants (sandbox/eval/default),
    # each as a reviewer spots it on sight; logic and concurrency bugs are left to a real model.
    Check(
        re.compile(r"f[\"'](?:SELECT|INSERT|UPDATE|DELETE)\b|\bQuery\(fmt\.Sprintf\("),
        (".py", ".go"),
        "SQL built from formatted text: `{line}`; pass values as query parameters.",
        "critical",
        "security",
    ),
    Check(
        re.compile(r"\bshell=True\b"),
        (".py",),
        "A shell command line built from data: `{line}`; pass an argument list without shell=True.",
        "critical",
        "security",
    ),
    Check(
        re.compile(r"(?<![\w.])eval\("),
        (".py", ".js", ".ts", ".jsx", ".tsx"),
        "eval runs whatever text it is given as code: `{line}`; parse the input instead.",
        "critical",
        "security",
    ),
    Check(
        re.compile(r"\byaml\.load\((?!.*SafeLoader)|\bpickle\.loads?\("),
        (".py",),
        "Deserialising untrusted data builds arbitrary objects: `{line}`; use a safe format.",
        "major",
        "security",
    ),
    Check(
        re.compile(r"\bhashlib\.md5\("),
        (".py",),
        "MD5 is broken for anything secret: `{line}`; use a salted slow hash for passwords.",
        "major",
        "security",
    ),
    Check(
        re.compile(r"\bverify=False\b|InsecureSkipVerify:\s*true"),
        (".py", ".go"),
        "Certificate checks turned off: `{line}`; trust the right CA instead.",
        "major",
        "security",
    ),
    Check(
        re.compile(r"\.innerHTML\s*="),
        (".js", ".ts", ".jsx", ".tsx"),
        "Text written as HTML: `{line}`; set textContent so data cannot become markup (XSS).",
        "major",
        "security",
    ),
    Check(
        re.compile(r"^\s*\w+\s*=\s*open\("),
        (".py",),
        "A file opened outside a with block is never closed: `{line}`.",
        "minor",
        "bug",
    ),
    Check(
        re.compile(r"^\s*except(?:\s+Exception)?\s*:\s*$"),
        (".py",),
        "Every error is caught here: `{line}`; catch what you expect, log it, or re-raise.",
        "major",
        "bug",
    ),
    Check(
        re.compile(r"^\s*def \w+\(.*=\s*(?:\[\]|\{\})\s*[,)]"),
        (".py",),
        "A mutable default is shared by every call: `{line}`; default to None.",
        "major",
        "bug",
    ),
    Check(
        re.compile(r"\brequests\.(?:get|post|put|patch|delete)\((?!.*\btimeout=)|\bhttp\.Get\("),
        (".py", ".go"),
        "An HTTP call without a timeout can hang forever: `{line}`.",
        "minor",
        "bug",
    ),
    Check(
        re.compile(r"^\s*assert True\b"),
        (".py",),
        "This assertion checks nothing: `{line}`; assert the expected value.",
        "major",
        "tests",
    ),
    Check(
        re.compile(r"[^=!<>]==[^=]"),
        (".js", ".jsx"),
        "Loose equality coerces its operands: `{line}`; use ===.",
        "minor",
        "style",
    ),
    Check(
        re.compile(r"\bas any\b"),
        (".ts", ".tsx"),
        "A cast to any turns type checking off: `{line}`.",
        "nit",
        "maintainability",
    ),
    Check(
        re.compile(r"\breadFileSync\("),
        (".js", ".ts"),
        "A synchronous read blocks the event loop: `{line}`; read once at start-up or await it.",
        "minor",
        "performance",
    ),
    Check(
        re.compile(r",\s*_\s*:?=\s*\w"),
        (".go",),
        "An error is dropped: `{line}`; handle it.",
        "major",
        "bug",
    ),
    Check(
        re.compile(r"\bpanic\("),
        (".go",),
        "A panic in library code crashes the caller: `{line}`; return an error.",
        "major",
        "maintainability",
    ),
    Check(
        re.compile(r"\b(TODO|FIXME|XXX)\b"),
        (),
        "TODO left in new code; finish it or track it in an issue before merging.",
        "minor",
        "maintainability",
    ),
)
_TEST_GAP = Check(re.compile(r"$^"), (), "This changes ", "minor", "tests")


def check_of(message: str) -> Check | None:
    """The check that writes ``message`` (read back from notes or a shard's brief)."""
    for check in (*_CHECKS, _TEST_GAP):
        head = check.message.split("{line}", 1)[0]
        if message.startswith(head):
            return check
    return None


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
    severity: str = ""
    category: str = ""
    start_line: int | None = None
    replacement: str | None = None

    def as_report(self) -> dict[str, Any]:
        """The finding in the shape of swarm's report schema (``findings`` of submit_review);
        severity, category and a deleting fix come from the check that wrote the message."""
        check = check_of(self.body)
        severity = self.severity or (check.severity if check else "minor")
        category = self.category or (check.category if check else "maintainability")
        report: dict[str, Any] = {
            "path": self.path,
            "line": self.line,
            "severity": severity,
            "category": category,
            "message": self.body,
        }
        if self.start_line is not None:
            report["start_line"] = self.start_line
        replacement = self.replacement
        if replacement is None and check is not None and check.deletes:
            replacement = ""
        if replacement is not None:
            report["replacement"] = replacement
        return report


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
            for check in _CHECKS:
                if check.exts and not file.path.endswith(check.exts):
                    continue
                if check.pattern.search(text):
                    message = check.message.replace("{line}", text.strip())
                    found.append(Finding(file.path, line, message, text))
                    break
    sources = [f for f in files if f.path.endswith(SOURCE_EXT) and not is_test(f.path)]
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
