"""docs/architecture.md stays drawn from the code: every package is in its table, every module in
its package's docstring, the imports point the way the page says and form no cycle, and no module
holds more code than one reader holds in mind."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.paths import ROLES_DIR, ROOT

if TYPE_CHECKING:
    from agents.events.routing import Delivery, Routed
    from agents.planning.discover import Discovery
    from agents.wiring import Runtime
    from sandbox.server import SandboxServer

DOC = ROOT / "docs" / "architecture.md"
TOPS = ("agents", "flows", "sandbox")
# The layers below the worker: none imports another (shared modules are below all of them).
LAYERS = ("github", "llm", "store", "memory", "identity")
SHARED = (
    "transport",
    "ratelimit",
    "redact",
    "event_kinds",
    "processes",
    "private_files",
    "permissions",
    "errors",
    "json_value",
    "memory_origin",
)
# The one loose module a program root may hold besides its packages: ``flows/__main__.py``; the
# agents root holds the shared nouns and the composition root.
ROOT_MODULES = {
    "agents": {
        "errors.py",
        "event_kinds.py",
        "json_value.py",
        "memory_origin.py",
        "outcome.py",
        "permissions.py",
        "private_files.py",
        "processes.py",
        "wiring.py",
        "work.py",
    },
    "flows": {"__main__.py"},
}
# Lines of code (not comments, docstrings or blank lines) one module may hold.
CODE_LINES = 400
CODE_LINE_EXCEPTIONS: dict[str, int] = {}


def source_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of ours (Alembic's revisions aside)."""
    found: dict[str, Path] = {}
    for top in TOPS:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if "migrations" in rel.parts and "versions" in rel.parts:
                continue
            parts = rel.with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def packages() -> list[Path]:
    return sorted(
        path.parent
        for top in TOPS
        for path in (ROOT / top).rglob("__init__.py")
        if "migrations" not in path.relative_to(ROOT).parts
    )


def table_rows() -> list[str]:
    return re.findall(r"^\| `([^`]+)` \| \S", DOC.read_text(), flags=re.M)


def runtime_imports(path: Path, modules: Collection[str] = ()) -> set[str]:
    """Every name imported anywhere in the file (function bodies too: a lazy import is still a
    dependency), except under ``if TYPE_CHECKING:``, which never runs. ``from pkg import mod``
    names ``pkg.mod`` when that is one of ``modules``, else ``pkg``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for statement in block.body
        for node in ast.walk(statement)
    }
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                names.add(full if full in modules else node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ours it imports (``from pkg import mod`` is an edge to ``mod``;
    ``from pkg import name`` an edge to ``pkg``)."""
    files = source_files()
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        edges = set()
        for imported in runtime_imports(path, files):
            target = imported
            while target and target not in files:
                target = target.rpartition(".")[0]
            if target and target != name:
                edges.add(target)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def unit(module: str) -> str:
    """``agents.ratelimit.github.throttle`` -> ``ratelimit``; ``flows.cli.app`` -> ``flows``."""
    parts = module.split(".")
    return parts[1] if parts[0] == "agents" and len(parts) > 1 else parts[0]


def code_lines(path: Path) -> int:
    """Lines holding code: comments, docstrings and blank lines do not count."""
    source = path.read_text(encoding="utf-8")
    docstrings = {
        line
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (
            tokenize.COMMENT,
            tokenize.NL,
            tokenize.NEWLINE,
            tokenize.INDENT,
            tokenize.DEDENT,
            tokenize.ENDMARKER,
        ):
            continue
        lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines - docstrings)


def test_every_package_has_one_row_in_the_package_table() -> None:
    rows = table_rows()
    names = [f"{p.relative_to(ROOT).as_posix()}/" for p in packages()]
    assert sorted(set(names) - set(rows)) == [], "add these to docs/architecture.md"
    assert sorted(set(rows) - set(names)) == [], "these rows name no package any more"
    assert len(rows) == len(set(rows)), "a package is listed twice"


def test_every_package_docstring_lists_each_of_its_modules_once() -> None:
    missing: list[str] = []
    stale: list[str] = []
    for package in packages():
        doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
        listed = re.findall(r"^- ``([^`]+)``:", doc, flags=re.M)
        present = [
            p.name if p.is_file() else f"{p.name}/"
            for p in sorted(package.iterdir())
            if (p.suffix == ".py" and p.name != "__init__.py")
            or (p.is_dir() and ((p / "__init__.py").exists() or p.name == "migrations"))
        ]
        where = package.relative_to(ROOT).as_posix()
        missing += [f"{where}/{n}" for n in present if n not in listed]
        # Data files and folders (a prompt, a set) may be listed too; a listed name must exist.
        stale += [f"{where}/{n}" for n in listed if not (package / n.rstrip("/")).exists()]
    assert missing == [], "list these in their package's __init__ docstring"
    assert stale == [], "these docstring lines name no module any more"


def test_program_roots_hold_only_the_shared_nouns() -> None:
    loose = {
        top: sorted(p.name for p in (ROOT / top).glob("*.py") if p.name != "__init__.py")
        for top in ROOT_MODULES
    }
    assert {top: set(names) for top, names in loose.items()} == ROOT_MODULES


def test_no_import_cycles_among_our_modules() -> None:
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_imports_point_the_way_the_architecture_page_says() -> None:
    wrong: list[str] = []
    for name, path in source_files().items():
        here = unit(name)
        for imported in runtime_imports(path):
            if name.startswith(("agents", "sandbox")) and imported.split(".")[0] == "prefect":
                wrong.append(f"{name} imports {imported}: Prefect stays in flows/")
            if imported.split(".")[0] not in TOPS:
                continue
            there = unit(imported)
            if name.startswith("agents") and imported.split(".")[0] in ("flows", "sandbox"):
                wrong.append(f"{name} imports {imported}: agents/ never imports flows or sandbox")
            if name.startswith("sandbox") and imported.split(".")[0] != "sandbox":
                wrong.append(f"{name} imports {imported}: sandbox/ imports nothing of ours")
            if here in LAYERS and there in LAYERS and here != there:
                wrong.append(f"{name} imports {imported}: layers never import each other")
            if here in SHARED and there in LAYERS:
                wrong.append(f"{name} imports {imported}: shared modules import no layer")
    assert wrong == []


def test_no_module_holds_more_code_than_one_reader_holds() -> None:
    too_long = {
        rel: lines
        for path in sorted(p for top in ("agents", "flows") for p in (ROOT / top).rglob("*.py"))
        if (lines := code_lines(path))
        > CODE_LINE_EXCEPTIONS.get(rel := path.relative_to(ROOT).as_posix(), CODE_LINES)
    }
    assert not too_long, f"over {CODE_LINES} lines of code (comments not counted): {too_long}"


def test_code_lines_do_not_count_comments_or_docstrings(tmp_path: Path) -> None:
    path = tmp_path / "probe.py"
    path.write_text(
        '"""Doc\nstring."""\n\n# a comment\nx = 1  # trailing\n\n\n'
        'def f() -> None:\n    """Doc."""\n    return None\n'
    )
    assert code_lines(path) == 3


# -- a kind of work is one module ---------------------------------------------------------------

# The role names code may still hold: the role a CLI command and a run take when none is named,
# and the default App's name (an App label, not a role). Everything else asks the role book.
ROLE_LITERALS_LEFT = {
    ("flows/cli/options.py", "reviewer"),
    ("flows/run/request.py", "reviewer"),
    ("flows/cli/app_manifest.py", "reviewer"),
}


def test_no_role_is_named_in_agents_or_flows() -> None:
    names = {p.stem for p in (ROOT / "roles").glob("*.yaml")}
    named = {
        (path.relative_to(ROOT).as_posix(), node.value)
        for top in ("agents", "flows")
        for path in sorted((ROOT / top).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value in names
    }
    assert named == ROLE_LITERALS_LEFT, "ask agents.kinds.book which role does the work"


# A kind of work defined here and nowhere else: "greet" a new issue (a comment, as the triage
# bot), found by its own discovery, started by the issue events and by `/swarm greet` on an issue.
GREETER = (ROLES_DIR / "triager.yaml").read_text().replace("id: triager", "id: greeter")
GREETER = GREETER.replace("kind: triage", "kind: greet\ncommand: greet")


async def _greetings(runtime: Runtime, ask: object) -> Discovery:
    """The greet kind's discovery: open issues its bot has not commented on."""
    from agents.kinds.kind import Ask
    from agents.planning.discover import Discovery
    from agents.planning.sources import GatewayIssueSource, repos_by_owner, role_identity
    from agents.planning.triage import discover_triage

    assert isinstance(ask, Ask)
    found = Discovery(items=[], skipped=[])
    for owned in repos_by_owner(ask.repos).values():
        reads = {"metadata": "read", "issues": "read"}
        identity = role_identity(runtime, ask.role)
        async with runtime.discovery(identity, owned, reads) as (gateway, login):
            part = await discover_triage(
                GatewayIssueSource(gateway), owned, bot_login=login, targets=ask.targets
            )
        found.items += part.items
    return found


def _labelled(d: Delivery) -> Routed:
    """The greet kind's own event: an issue labelled ``greet`` (no built-in handler takes it)."""
    raw = d.raw if isinstance(d.raw, dict) else {}
    number = int(raw.get("issue", {}).get("number", 0))
    if raw.get("label", {}).get("name") != "greet":
        return d.ignored("not the greet label", number)
    role = d.answering("greet", number)
    if not isinstance(role, str):
        return role
    return d.work(d.asks("greet", number, role), f"greet #{number}")


@pytest.fixture
def greet_kind() -> Iterator[None]:
    from agents.events.routing import Route
    from agents.kinds.kind import Kind, register, unregister

    register(
        Kind(
            name="greet",
            summary="Greet a new issue",
            on="issues",
            answers=frozenset({"triage", "greet"}),
            discover=_greetings,
            routes=(Route("issues", frozenset({"labeled"}), _labelled),),
            writers_only=True,
        )
    )
    yield
    unregister("greet")


def test_a_role_of_an_unregistered_kind_is_refused(tmp_path: Path) -> None:
    from agents.roles.files import RoleLoadError, load_roles

    (tmp_path / "greeter.yaml").write_text(GREETER)
    with pytest.raises(RoleLoadError, match="kind: unknown kind of work 'greet'"):
        load_roles(tmp_path)


@pytest.mark.anyio
async def test_a_kind_defined_only_in_tests_is_routed_discovered_planned_and_run(
    greet_kind: None, sandbox: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One module (here, this file) and one role file make a kind: the real routing, command
    dispatch, discovery, planning, dispatcher and worker take it through, no product file told."""
    import shutil

    from agents.events.routing import route_event
    from agents.kinds.book import RoleBook
    from agents.planning.shards import plan_assignments
    from agents.roles import RoleRefs
    from agents.roles.files import load_roles
    from agents.settings.model import load_settings
    from agents.wiring import build_runtime
    from agents.worker.run import run_worker
    from flows.run.bot import BotCommands
    from flows.run.discovery import discover
    from flows.run.models import scripted_model
    from flows.webhook.enqueue import InProcessEnqueuer
    from flows.webhook.sink import EventSink, flow_request
    from sandbox.github.seed import COLLABORATORS, MAINTAINER, READER, TRIAGE_BOT, WIDGETS
    from sandbox.github.webhooks import SandboxWebhooks
    from tests.events.harness import Started
    from tests.worker.conftest import settings_env

    roles = tmp_path / "roles"
    roles.mkdir()
    for name in ("reviewer", "summarizer"):
        shutil.copy(ROLES_DIR / f"{name}.yaml", roles)
    (roles / "greeter.yaml").write_text(GREETER)
    book = RoleBook(load_roles(roles))

    hooks = SandboxWebhooks(sandbox.state, "kind-secret")
    issue = sandbox.state.add_issue(WIDGETS, "Hello", "A new issue.")
    [opened] = hooks.take()
    routed = route_event(opened.event, opened.body, book)
    assert routed.work is not None and routed.work.role == "greeter"
    sandbox.state.add_comment(WIDGETS, issue.number, "/swarm greet", author=MAINTAINER)
    [asked] = hooks.take()
    command = route_event(asked.event, asked.body, book).work
    assert command is not None and (command.kind, command.role) == ("command", "greeter")
    assert flow_request(command, "d-1").role == "greeter"
    payload = {
        "action": "labeled",
        "label": {"name": "greet"},
        "issue": {"number": issue.number},
        "repository": {"full_name": WIDGETS},
        "sender": {"login": MAINTAINER, "type": "User"},
    }
    labelled = route_event("issues", hooks.make("issues", payload).body, book).work
    assert labelled is not None and (labelled.kind, labelled.role) == ("greet", "greeter")
    # Without a role of the kind configured, its event is what it was: not acted on.
    shipped = route_event("issues", hooks.make("issues", payload).body)
    assert shipped.work is None and shipped.reason.endswith("not the swarm:implement label")

    settings_env(sandbox, tmp_path, monkeypatch)
    monkeypatch.setenv("SWARM_ROLES_DIR", str(roles))
    model = scripted_model()
    runtime = build_runtime(load_settings(), model.client, model.model_id)
    # The kind says its route's work counts only from a writer: the sink asks GitHub, as the bot.
    sandbox.state.repo(WIDGETS).collaborators.update(COLLABORATORS)
    commands = BotCommands(load_settings(), load_roles(roles), "default")
    started = Started()
    enqueuer = InProcessEnqueuer(1, runner=started)
    sink = EventSink(enqueuer, commands, None, book)
    try:
        by_reader = labelled.model_copy(update={"sender": READER})
        assert (await sink.submit(by_reader, "d-2")).outcome == "refused"
        assert (await sink.submit(labelled, "d-3")).outcome == "enqueued"
        await enqueuer.aclose()
    finally:
        await commands.aclose()
    assert [(r.role, r.targets) for r in started.requests] == [
        ("greeter", (f"{WIDGETS}#{issue.number}",))
    ]
    try:
        found = await discover(runtime, [WIDGETS], "greeter", None, [(WIDGETS, issue.number)], None)
        [planned] = plan_assignments(found.items, "greeter")
        [assignment] = planned.assignments
        assert (assignment.role, assignment.task.number) == ("greeter", issue.number)
        run_id = runtime.store.create_run("test")
        sealed = await runtime.dispatcher.dispatch(
            run_id, assignment.task, RoleRefs(agent="greeter")
        )
        outcome = await run_worker(sealed, runtime.worker)
    finally:
        await runtime.aclose()
    assert outcome.status == "succeeded", outcome
    assert [c.user_login for c in issue.comments] == [MAINTAINER, TRIAGE_BOT]


# A read tool declared only here: how many words the task's issue holds.
COUNTER = (ROLES_DIR / "triager.yaml").read_text().replace("id: triager", "id: counter")
COUNTER = COUNTER.replace("  - get_issue\n", "  - get_issue\n  - issue_word_count\n")
WORD_COUNT_VERB = "counted the issue's words"


@pytest.fixture
def word_count_tool() -> Iterator[None]:
    from pydantic import BaseModel, ConfigDict

    from agents.llm.turn import ToolResult
    from agents.tools import Tool, ToolSpec, WorkerContext, register_tool, unregister_tool
    from sandbox.model.conversation import Action, Conversation
    from sandbox.model.scripts import call_in_turn, register_script, unregister_script

    class NoArgs(BaseModel):
        model_config = ConfigDict(extra="forbid")

    def offer(ctx: WorkerContext) -> list[Tool[NoArgs]]:
        async def count(_: NoArgs) -> ToolResult:
            assert ctx.task.number is not None
            issue = await ctx.gateway.get_issue(ctx.task.repo, ctx.task.number)
            words = len(f"{issue.get('title') or ''} {issue.get('body') or ''}".split())
            return ToolResult(f"{words} words", summary=f"{words} words")

        return [Tool("issue_word_count", "How many words the issue holds.", NoArgs, count)]

    def step(conv: Conversation) -> Action:
        return call_in_turn(conv, [("issue_word_count", {})], "Counted:")

    register_tool(ToolSpec("issue_word_count", {"issues": "read"}, verb=WORD_COUNT_VERB), offer)
    register_script("word count", lambda conv: conv.offers("issue_word_count"), step)
    yield
    unregister_script("word count")
    unregister_tool("issue_word_count")


def test_a_role_naming_a_tool_nobody_declared_is_refused(tmp_path: Path) -> None:
    from agents.roles.files import RoleLoadError, load_roles

    (tmp_path / "counter.yaml").write_text(COUNTER)
    with pytest.raises(RoleLoadError, match="unknown tool 'issue_word_count'"):
        load_roles(tmp_path)


def test_a_role_listing_a_registered_tool_must_grant_what_it_needs(
    word_count_tool: None, tmp_path: Path
) -> None:
    from agents.roles.files import RoleLoadError, load_roles

    (tmp_path / "counter.yaml").write_text(COUNTER.replace("  issues: write\n", ""))
    with pytest.raises(RoleLoadError, match="'issue_word_count' needs issues:read"):
        load_roles(tmp_path)


@pytest.mark.anyio
async def test_a_tool_defined_only_in_tests_is_listed_offered_called_and_told(
    word_count_tool: None,
    sandbox: SandboxServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One declaration (here, this file's fixture), one role file and one script make a tool: the
    real role loader, dispatcher, toolbox, worker loop and story take it, no product file told."""
    import json
    import logging

    from agents.roles import RoleRefs
    from agents.settings.model import load_settings
    from agents.wiring import build_runtime
    from agents.work import Task
    from agents.worker.run import run_worker
    from flows.run.models import scripted_model
    from sandbox.github.seed import WIDGETS, WIDGETS_ISSUE_DOCS
    from tests.worker.conftest import settings_env

    roles = tmp_path / "roles"
    roles.mkdir()
    (roles / "counter.yaml").write_text(COUNTER)
    settings_env(sandbox, tmp_path, monkeypatch)
    monkeypatch.setenv("SWARM_ROLES_DIR", str(roles))
    model = scripted_model()
    assert model.scripted is not None
    runtime = build_runtime(load_settings(), model.client, model.model_id)
    caplog.set_level(logging.INFO, logger="agents.worker")
    try:
        task = Task(kind="triage_issue", repo=WIDGETS, number=WIDGETS_ISSUE_DOCS)
        run_id = runtime.store.create_run("test")
        sealed = await runtime.dispatcher.dispatch(run_id, task, RoleRefs(agent="counter"))
        outcome = await run_worker(sealed, runtime.worker)
        events = runtime.store.get_transcript(outcome.worker_id)
        transcript = json.dumps([e.content for e in events])
    finally:
        await runtime.aclose()
    assert outcome.status == "succeeded", outcome
    issue = sandbox.state.repo(WIDGETS).issues[WIDGETS_ISSUE_DOCS]
    words = len(f"{issue.title} {issue.body}".split())
    offered = {t["name"] for t in model.scripted.requests[0]["tools"]}
    assert "issue_word_count" in offered
    assert f"{words} words" in transcript
    assert f"{WORD_COUNT_VERB}: {words} words" in caplog.text
