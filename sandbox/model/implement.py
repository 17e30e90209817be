"""The scripted model as the writer: read the issue, find the function it names, fix a bug it
recognises, run the tests, open one draft pull request.

It knows a handful of bug shapes (the catalogue below), the way the scripted reviewer knows a
handful of findings: enough for the demo's seeded bug and the implement evaluation's issues,
and honest about the rest. An issue naming no function it can find, or a function with no bug
it recognises, ends the session with a sentence and no pull request; tests that still fail
after its change end it the same way, so it never opens a pull request it believes is broken.

Each step is decided from the conversation alone (the calls made so far and their results),
like every scripted behaviour: a re-sent request gets the same answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from sandbox.model.conversation import Action, Call, Conversation, Reply, ref_values

# A name the issue calls or quotes: `name(` inside backticks, or a quoted bare name.
_QUOTED = re.compile(r"`([^`\n]{1,200})`")
_CALLED = re.compile(r"([A-Za-z_][A-Za-z0-9_]{0,80})\s*\(")
_BARE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]{0,80}$")
_NUMBERED = re.compile(r"^\s*(\d+)\t(.*)$")
_HIT = re.compile(r"^([^\n:]+):(\d+): ")
# Names that are the language's, not the repository's: searching for their definition finds
# nothing worth reading.
_BUILTINS = frozenset(
    {"print", "len", "range", "max", "min", "sum", "int", "str", "list", "dict", "set", "type"}
)
MAX_SEARCHES = 4
# The worker's briefing on a branch an earlier session committed to (agents/writer/bench.py).
_EARLIER = "already holds an earlier session's commits"


@dataclass(frozen=True)
class Shape:
    """One bug shape the scripted writer recognises on a line of a function: ``fix`` returns
    the corrected line, or None when the line is not of this shape (``params`` are the
    function's parameter names)."""

    name: str
    why: str
    fix: Callable[[str, tuple[str, ...]], str | None]


def _off_by_one(line: str, params: tuple[str, ...]) -> str | None:
    fixed = re.sub(r"range\(len\((\w+)\)\s*-\s*1\)", r"range(len(\1))", line)
    return fixed if fixed != line else None


def _unbounded_clamp(line: str, params: tuple[str, ...]) -> str | None:
    if len(params) != 3:
        return None
    value, low, high = params
    if high in line:
        return None
    fixed = line.replace(f"max({low}, {value})", f"max({low}, min({value}, {high}))")
    return fixed if fixed != line else None


def _zero_allowed(line: str, params: tuple[str, ...]) -> str | None:
    fixed = re.sub(r"\bif (\w+) < 0:", r"if \1 <= 0:", line)
    return fixed if fixed != line else None


def _mean_of_none(line: str, params: tuple[str, ...]) -> str | None:
    found = re.search(r"return sum\((\w+)\) / len\(\1\)\s*$", line)
    if found is None:
        return None
    name = found.group(1)
    return line[: found.start()] + f"return sum({name}) / len({name}) if {name} else 0.0"


def _unguarded_list(line: str, params: tuple[str, ...]) -> str | None:
    """A list built from input that may not fit (an empty field, an unknown name). The
    scripted writer's first attempt guards it with a bare ``except:``, the hasty fix a writer
    makes and a reviewer flags: the seeded fix rounds start from it (tests/run/
    test_fix_rounds.py)."""
    text = line.strip()
    if not (text.startswith("return [") and text.endswith("]") and " for " in text):
        return None
    pad, built = line[: len(line) - len(line.lstrip())], text[len("return ") :]
    return f"{pad}try:\n{pad}    return {built}\n{pad}except:\n{pad}    return []"


SHAPES: tuple[Shape, ...] = (
    Shape("off-by-one", "the loop stopped one short of the last item", _off_by_one),
    Shape("clamp", "the value was bounded below but never above", _unbounded_clamp),
    Shape("zero", "zero passed the check that should refuse it", _zero_allowed),
    Shape("empty mean", "an empty list divided by zero", _mean_of_none),
    Shape(
        "unguarded list", "an input that did not fit raised instead of giving none", _unguarded_list
    ),
)


@dataclass(frozen=True)
class Fix:
    path: str
    function: str
    old_text: str
    new_text: str
    shape: Shape


def implement(conv: Conversation) -> Action:
    ref = ref_values(conv)
    if conv.offers("get_issue") and not conv.called("get_issue"):
        return conv.call("get_issue", ref)
    title, body = _issue(conv)
    opened = conv.called("open_pull_request")
    if opened:
        return Reply(f"Opened the draft pull request for {title!r}. {opened[-1].result or ''}")
    if _EARLIER in conv.opening and not conv.called("workspace_edit"):
        return _continue(conv, title)
    fix = _fix(conv)
    if fix is None:
        return _next_search(conv, title, body)
    if not isinstance(fix, Fix):
        return fix  # the file to read first, or the sentence that ends the session
    if not any(c.input.get("path") == fix.path for c in conv.called("workspace_edit")):
        return conv.call(
            "workspace_edit",
            {"path": fix.path, "old_text": fix.old_text, "new_text": fix.new_text},
            note=f"{fix.function}: {fix.shape.why}",
        )
    edit = conv.called("workspace_edit")[-1]
    if edit.is_error:
        return Reply(f"My edit of {fix.path} was refused: {edit.result}")
    runs = conv.called("run_tests")
    if not runs:
        return conv.call("run_tests", {})
    said = runs[-1].result or ""
    if said.startswith("tests failed"):
        return Reply(
            f"The tests fail after my change to {fix.function} in {fix.path}; I do not open a "
            "pull request for a change I cannot show works."
        )
    tested = said.split("\n", 1)[0]
    return conv.call(
        "open_pull_request",
        {
            "title": f"Fix {fix.function}: {title}"[:120],
            "plan": (
                f"Find `{fix.function}` in `{fix.path}`, the function the issue names, and make "
                f"the smallest change that resolves it: {fix.shape.why}."
            ),
            "summary": (
                f"Changed one line of `{fix.function}` in `{fix.path}` ({fix.shape.name}): "
                f"{fix.shape.why}, now fixed. {tested}."
            ),
        },
    )


# The planning session's briefing when a maintainer rejected the earlier plan (agents/writer/
# bench.py): the scripted writer says its new plan heeds the note.
_REJECTED = "rejected your earlier plan"


def plan(conv: Conversation) -> Action:
    """A planning session (plan approval): read the issue, find the fix as a writing session
    would, and propose it as the plan; nothing is changed."""
    ref = ref_values(conv)
    if conv.offers("get_issue") and not conv.called("get_issue"):
        return conv.call("get_issue", ref)
    if conv.called("propose_plan"):
        return Reply("Plan proposed; a maintainer decides before anything is written.")
    title, body = _issue(conv)
    fix = _fix(conv)
    if fix is None:
        return _next_search(conv, title, body)
    if not isinstance(fix, Fix):
        return fix
    text = (
        f"Change `{fix.function}` in `{fix.path}`, the function the issue names: "
        f"{fix.shape.why}. One line changes; the repository's tests are run after it."
    )
    if _REJECTED in conv.opening:
        text += " Revised after the maintainer's note on the earlier plan."
    return conv.call("propose_plan", {"plan": text})


def _continue(conv: Conversation, title: str) -> Action:
    """A re-run on the branch an earlier session committed to: the fix is in the copy, so the
    tests decide, and a passing change gets its pull request."""
    runs = conv.called("run_tests")
    if not runs:
        return conv.call("run_tests", {})
    said = runs[-1].result or ""
    if said.startswith("tests failed"):
        return Reply("The earlier session's change fails the tests; I open no pull request.")
    return conv.call(
        "open_pull_request",
        {
            "title": f"Fix: {title}"[:120],
            "plan": "Finish the earlier session's change on this branch: it resolves the issue.",
            "summary": (
                "The earlier session's commit on this branch holds the fix; this session ran "
                f"the tests on it. {said.split(chr(10), 1)[0]}."
            ),
        },
    )


def _issue(conv: Conversation) -> tuple[str, str]:
    """The issue's title and body from get_issue's result (the JSON inside its delimiters)."""
    for call in conv.called("get_issue"):
        text = call.result or ""
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end < start:
            continue
        try:
            view = json.loads(text[start : end + 1])
        except ValueError:
            continue
        if isinstance(view, dict):
            return str(view.get("title") or ""), str(view.get("body") or "")
    return "", ""


def names_in(text: str) -> list[str]:
    """The names an issue points at, in the order it mentions them: a call or a quoted name."""
    found: list[str] = []
    for quoted in _QUOTED.findall(text):
        called = _CALLED.findall(quoted)
        if called:
            found.extend(called)
        elif _BARE.match(quoted):
            found.append(quoted.rsplit(".", 1)[-1])
    found.extend(_CALLED.findall(text))
    unique: list[str] = []
    for name in found:
        if name not in unique and name not in _BUILTINS and not name[0].isupper():
            unique.append(name)
    return unique


def _query(name: str) -> str:
    return f"def {name}("


def _next_search(conv: Conversation, title: str, body: str) -> Action:
    searched = {c.input.get("query") for c in conv.called("workspace_search")}
    names = names_in(f"{title}\n{body}")
    for name in names[:MAX_SEARCHES]:
        if _query(name) not in searched:
            return conv.call("workspace_search", {"query": _query(name)})
    named = ", ".join(names[:MAX_SEARCHES]) or "no function"
    return Reply(
        f"The issue names {named}; I found no function with a bug I recognise, so I open no "
        "pull request. A person who knows the code should take it."
    )


def _fix(conv: Conversation) -> Fix | Action | None:
    """The fix for the first function found, once its file is read: the read to make first, a
    Reply when the read file holds no recognisable bug, None while no search has found one."""
    for search in conv.called("workspace_search"):
        query = str(search.input.get("query", ""))
        hit = _first_hit(search)
        if hit is None or not query.startswith("def "):
            continue
        path, _line = hit
        function = query[4:].rstrip("(")
        read = _read_of(conv, path)
        if read is None:
            return conv.call("workspace_read", {"path": path, "max_lines": 400})
        lines = _lines(read.result or "")
        fix = _fix_in(lines, path, function)
        if fix is None:
            return Reply(
                f"I read `{function}` in `{path}` and found no bug I recognise; I open no pull "
                "request rather than guess."
            )
        return fix
    return None


def _first_hit(search: Call) -> tuple[str, int] | None:
    for line in (search.result or "").splitlines():
        found = _HIT.match(line)
        if found:
            return found.group(1), int(found.group(2))
    return None


def _read_of(conv: Conversation, path: str) -> Call | None:
    for call in conv.called("workspace_read"):
        if call.input.get("path") == path and not call.is_error:
            return call
    return None


def _lines(result: str) -> list[str]:
    """The file's lines back from workspace_read's numbered listing."""
    lines: list[str] = []
    for raw in result.splitlines():
        found = _NUMBERED.match(raw)
        if found:
            lines.append(found.group(2))
    return lines


def _fix_in(lines: list[str], path: str, function: str) -> Fix | None:
    """The first recognised bug in ``function``'s body; the edit spans from its ``def`` line to
    the buggy line, so its old text occurs once in the file."""
    start = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith(_query(function))), -1)
    if start < 0:
        return None
    indent = len(lines[start]) - len(lines[start].lstrip())
    signature = re.search(r"\((.*?)\)", lines[start])
    params = tuple(
        p.split(":")[0].split("=")[0].strip()
        for p in (signature.group(1).split(",") if signature else [])
        if p.strip() and p.strip() not in ("self", "cls")
    )
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        for shape in SHAPES:
            fixed = shape.fix(line, params)
            if fixed is not None:
                old = "\n".join(lines[start : i + 1])
                new = "\n".join([*lines[start:i], fixed])
                return Fix(path, function, old, new, shape)
    return None
