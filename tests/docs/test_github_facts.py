"""docs/github-facts.md stays true to the tree: every sandbox code it names exists (the file,
and the function, class or constant in it), every test it names is a test function in that
file, and every row names a source or says it is a belief."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.paths import ROOT

DOC = ROOT / "docs" / "github-facts.md"
_SANDBOX = re.compile(r"`(sandbox/[\w/]+\.py):([\w.]+)`")
_TEST = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def _rows() -> list[list[str]]:
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0].isdigit():
            rows.append(cells)
    return rows


def _names(path: Path) -> set[str]:
    """Dotted names a file defines: functions, classes, their methods and fields, constants."""
    found: set[str] = set()

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found.add(prefix + node.name)
            elif isinstance(node, ast.ClassDef):
                found.add(prefix + node.name)
                walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.Assign):
                found.update(prefix + t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                found.add(prefix + node.target.id)

    walk(ast.parse(path.read_text(encoding="utf-8")).body, "")
    return found


def test_the_table_has_the_facts_issue_36_starts_it_with() -> None:
    rows = _rows()
    assert len(rows) >= 20
    text = DOC.read_text(encoding="utf-8")
    for must in ("resolveReviewThread", "hook/deliveries", "10,000", "createCommitOnBranch"):
        assert must in text


def test_every_row_names_a_source_or_says_it_is_a_belief() -> None:
    for cells in _rows():
        source = cells[2]
        assert re.search(r"docs|[\w.-]+/[\w.-]+#\d+|\*\*belief\*\*|schema", source), cells[0]


def test_every_sandbox_code_the_table_names_exists() -> None:
    named = [m for cells in _rows() for m in _SANDBOX.findall(cells[3])]
    assert named
    for path, name in named:
        file = ROOT / path
        assert file.is_file(), path
        assert name in _names(file), f"{path}:{name}"


def test_every_test_the_table_names_is_a_test_function_in_its_file() -> None:
    named = [m for cells in _rows() for m in _TEST.findall(cells[4])]
    assert named
    for path, name in named:
        file = ROOT / path
        assert file.is_file(), path
        assert name.startswith("test_") and name in _names(file), f"{path}::{name}"


def test_a_row_without_code_or_test_says_whose_it_is() -> None:
    for cells in _rows():
        for cell in cells[3:5]:
            assert _SANDBOX.search(cell) or _TEST.search(cell) or cell.startswith("("), cells[0]
