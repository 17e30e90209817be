"""What every benchmark's command line shares: the first line of its docstring as the description,
and ``--json`` for the figures alone."""

from __future__ import annotations

import argparse


def bench_parser(
    doc: str | None, json_help: str = "print the figures as JSON only"
) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    parser.add_argument("--json", action="store_true", help=json_help)
    return parser
