"""The scripted model as the fixer: read the blocking findings, fix the ones it knows how to,
run the tests, push one commit with an answer for every thread.

It knows how to fix the findings it can fix on sight, the way the scripted reviewer knows the
findings it reports: a catch-all ``except`` whose ``try`` body shows the error it expects
(``int(`` or ``float(``: a ``ValueError``), narrowed to that error; a bare ``except:`` whose
body shows none, narrowed only as far as ``except Exception:`` (which the reviewer still flags:
the seeded never-fixed scenario); a leftover debug ``print(`` or breakpoint, deleted. Anything
else, a person's words included, is answered as not fixed, with the reason.

Each step is decided from the conversation alone (the calls made so far and their results).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sandbox.model.conversation import Action, Conversation, Reply
from sandbox.model.implement import _lines, _read_of

_CATCH_ALL = "Every error is caught here"
_DELETES = ("Leftover debug `print(`", "Debugger breakpoint left")
# Calls whose failure the scripted fixer recognises, and the error each raises.
_EXPECTED = (("int(", "ValueError"), ("float(", "ValueError"))


@dataclass(frozen=True)
class Edit:
    thread: int
    path: str
    old_text: str
    new_text: str
    answer: str


def fix(conv: Conversation) -> Action:
    if not conv.called("get_findings"):
        return conv.call("get_findings", {})
    pushed = conv.called("push_fix")
    if pushed and not pushed[-1].is_error:
        return Reply(f"Pushed this round's fix. {pushed[-1].result or ''}")
    if len(pushed) >= 2:
        # Refused twice: a third try would be the same call; say so and stop.
        return Reply(f"push_fix failed twice; I stop here. {pushed[-1].result or ''}")
    findings = _findings(conv)
    answers: dict[int, str] = {}
    for finding in findings:
        thread = int(finding.get("thread") or 0)
        if not thread:
            continue
        decided = _decide(conv, finding)
        if isinstance(decided, str):
            answers[thread] = decided
            continue
        if decided is None or not isinstance(decided, Edit):
            return decided if decided is not None else Reply("I could not read the findings.")
        done = [
            c
            for c in conv.called("workspace_edit")
            if c.input.get("path") == decided.path and c.input.get("old_text") == decided.old_text
        ]
        if not done:
            return conv.call(
                "workspace_edit",
                {"path": decided.path, "old_text": decided.old_text, "new_text": decided.new_text},
            )
        answers[thread] = (
            decided.answer
            if not done[-1].is_error
            else (f"Not fixed: my edit was refused ({(done[-1].result or '')[:200]}).")
        )
    edited = [c for c in conv.called("workspace_edit") if not c.is_error]
    if edited and not conv.called("run_tests"):
        return conv.call("run_tests", {})
    runs = conv.called("run_tests")
    tested = (runs[-1].result or "").split("\n", 1)[0] if runs else "no change to test"
    answers = {t: f"{a} {tested}." if edited else a for t, a in answers.items()}
    return conv.call(
        "push_fix",
        {
            "title": "Answer the review's blocking findings",
            "answers": [{"thread": t, "answer": a} for t, a in sorted(answers.items())],
        },
    )


def _findings(conv: Conversation) -> list[dict[str, Any]]:
    """The findings from get_findings' result (the JSON list inside its delimiters)."""
    for call in conv.called("get_findings"):
        text = call.result or ""
        start, end = text.find("["), text.rfind("]")
        if start < 0 or end < start:
            continue
        try:
            found = json.loads(text[start : end + 1])
        except ValueError:
            continue
        if isinstance(found, list):
            return [f for f in found if isinstance(f, dict)]
    return []


def _decide(conv: Conversation, finding: dict[str, Any]) -> Edit | Action | str | None:
    """The edit for ``finding``, the read to make first, or the answer when it is not fixed."""
    message = str(finding.get("message") or "")
    path = str(finding.get("path") or "")
    line = int(finding.get("line") or 0)
    if finding.get("from", "").startswith("a person"):
        return "Read. The scripted writer makes no change it cannot recognise; a person decides."
    known = message.startswith(_CATCH_ALL) or message.startswith(_DELETES)
    if not known or not path or not line:
        return "Not fixed: I do not know a safe fix for this finding."
    read = _read_of(conv, path)
    if read is None:
        return conv.call("workspace_read", {"path": path, "max_lines": 400})
    lines = _lines(read.result or "")
    if line > len(lines) or line < 2:
        return "Not fixed: the finding's line is not in the file any more."
    at, before = lines[line - 1], lines[line - 2]
    if message.startswith(_DELETES):
        return Edit(int(finding["thread"]), path, f"{before}\n{at}", before, "Removed the line.")
    return _narrowed(int(finding["thread"]), path, lines, line)


def _narrowed(thread: int, path: str, lines: list[str], line: int) -> Edit | str:
    at = lines[line - 1]
    pad = at[: len(at) - len(at.lstrip())]
    start = next((i for i in range(line - 2, -1, -1) if lines[i].strip() == "try:"), None)
    body = "\n".join(lines[start + 1 : line - 1]) if start is not None else ""
    expected = next((error for call, error in _EXPECTED if call in body), None)
    old = f"{lines[line - 2]}\n{at}"
    if expected is not None:
        new = f"{lines[line - 2]}\n{pad}except {expected}:"
        return Edit(thread, path, old, new, f"Catch only {expected}, what the try body raises.")
    if at.strip() == "except:":
        new = f"{lines[line - 2]}\n{pad}except Exception:"
        return Edit(
            thread,
            path,
            old,
            new,
            "Narrowed the bare except to Exception; nothing in the code says which error to "
            "expect.",
        )
    return "Not fixed: nothing in the code tells which error to expect here; a person decides."
