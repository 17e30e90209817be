"""Workspace search benchmark: the writer's literal search on hostile text grows linearly.

The text is a run of ``a``s (no newline) searched for ``(a+)+$`` and for a 199-character needle
that almost matches at every position, at 1 to 16 MB; the same pattern as a regular expression
(what the search refuses to be) is timed on 16 to 24 characters, where each two more double it.

    uv run python bench/workspace_search.py
    uv run python bench/workspace_search.py --quick   # 1 MB and 16-18 characters only
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.workspace.search import MAX_QUERY_CHARS, search  # noqa: E402


def timed(run: object) -> float:
    assert callable(run)
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the smallest sizes only")
    quick = parser.parse_args().quick
    print("| text | `(a+)+$` as text | 199-char near-miss | ms per MB |")
    print("|---|---|---|---|")
    for mb in (1,) if quick else (1, 2, 4, 8, 16):
        text = "a" * (mb * 1_000_000) + "!"
        files = [("x.txt", text)]
        pattern = timed(lambda files=files: search(files, "(a+)+$"))
        near = "a" * (MAX_QUERY_CHARS - 1) + "b"
        needle = timed(lambda files=files, near=near: search(files, near))
        cells = [f"{mb} MB", f"{pattern * 1000:.1f} ms", f"{needle * 1000:.1f} ms"]
        print("| " + " | ".join([*cells, f"{needle * 1000 / mb:.1f}"]) + " |")
    print()
    print("| text | `(a+)+$` as a regular expression |")
    print("|---|---|")
    for n in (16, 18) if quick else (16, 18, 20, 22, 24):
        text = "a" * n + "!"
        took = timed(lambda text=text: re.search(r"(a+)+$", text))
        print(f"| {n} characters | {took * 1000:.1f} ms |")


if __name__ == "__main__":
    main()
