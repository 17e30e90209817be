"""What every benchmark's command line shares: the first line of its docstring as the description,
``--json`` for the figures alone, and for the benchmarks that measure code trees side by side
the hidden arguments of their child processes and the local Prefect server they share."""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def bench_parser(
    doc: str | None, json_help: str = "print the figures as JSON only"
) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    parser.add_argument("--json", action="store_true", help=json_help)
    return parser


def add_child_arguments(parser: argparse.ArgumentParser, root: Path) -> None:
    """``--child --code DIR --out FILE``: the run of one code tree in a process of its own."""
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--code", default=str(root), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)


@contextmanager
def local_prefect(database_url: str | None = None) -> Iterator[Path]:
    """A local Prefect server in a fresh home for the benchmark's child processes, stopped
    afterwards; ``database_url`` is the server's database (default: its SQLite)."""
    from flows.local.env import prepare_prefect_env
    from flows.local.prefect_server import prefect_home, stop, use_local_prefect

    home = Path(tempfile.mkdtemp(prefix="swarm-bench-prefect-"))
    if database_url:
        os.environ["PREFECT_API_DATABASE_CONNECTION_URL"] = database_url  # the server's only
    prepare_prefect_env()
    use_local_prefect(home, force=True)
    try:
        yield home
    finally:
        stop(prefect_home(home))
