"""docs/architecture.md stays drawn from the code: every module is in its table, and the imports
point the way it says."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
TOPS = ("agents", "flows", "sandbox")
# The layers below the worker: none imports another (shared modules are below all of them).
LAYERS = ("github", "llm", "store", "memory", "identity")
SHARED = ("transport", "ratelimit", "redact", "event_kinds", "processes", "permissions")


def modules() -> dict[str, Path]:
    """Table names of every module: ``pkg/`` for a package's ``__init__.py``."""
    found: dict[str, Path] = {}
    for top in TOPS:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if "/migrations/versions/" in rel:
                continue
            found[rel.removesuffix("__init__.py")] = path
    return found


def table_rows() -> list[str]:
    return re.findall(r"^\| `([^`]+)` \| \S", DOC.read_text(), flags=re.M)


def imports_of(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def unit(module: str) -> str:
    """``agents.github.throttle`` -> ``github``; ``flows.cli`` -> ``flows``."""
    parts = module.split(".")
    return parts[1] if parts[0] == "agents" and len(parts) > 1 else parts[0]


def test_every_module_has_one_row_in_the_module_table() -> None:
    rows = table_rows()
    assert sorted(set(modules()) - set(rows)) == [], "add these to docs/architecture.md"
    assert sorted(set(rows) - set(modules())) == [], "these rows name no module any more"
    assert len(rows) == len(set(rows)), "a module is listed twice"


def test_imports_point_the_way_the_architecture_page_says() -> None:
    wrong: list[str] = []
    for name, path in modules().items():
        here = unit(".".join(Path(name.rstrip("/")).with_suffix("").parts))
        for imported in imports_of(path):
            if name.startswith(("agents/", "sandbox/")) and imported.split(".")[0] == "prefect":
                wrong.append(f"{name} imports {imported}: Prefect stays in flows/")
            if imported.split(".")[0] not in TOPS:
                continue
            there = unit(imported)
            if name.startswith("agents/") and imported.split(".")[0] in ("flows", "sandbox"):
                wrong.append(f"{name} imports {imported}: agents/ never imports flows or sandbox")
            if name.startswith("sandbox/") and imported.split(".")[0] != "sandbox":
                wrong.append(f"{name} imports {imported}: sandbox/ imports nothing of ours")
            if here in LAYERS and there in LAYERS and here != there:
                wrong.append(f"{name} imports {imported}: layers never import each other")
            if here in SHARED and there in LAYERS:
                wrong.append(f"{name} imports {imported}: shared modules import no layer")
    assert wrong == []


def test_no_module_under_agents_or_flows_is_longer_than_one_reader_holds() -> None:
    longest = 300
    too_long = {
        str(path.relative_to(ROOT)): lines
        for folder in ("agents", "flows")
        for path in (ROOT / folder).rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > longest
    }
    assert not too_long, f"split these (over {longest} lines): {too_long}"
