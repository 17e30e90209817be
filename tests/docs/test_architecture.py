"""docs/architecture.md stays drawn from the code: every package is in its table, every module in
its package's docstring, the imports point the way the page says and form no cycle, and no module
holds more code than one reader holds in mind."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Collection
from pathlib import Path

from tests.paths import ROOT

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
)
# The one loose module a program root may hold besides its packages: ``flows/__main__.py``; the
# agents root holds the shared nouns and the composition root.
ROOT_MODULES = {
    "agents": {
        "errors.py",
        "event_kinds.py",
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
