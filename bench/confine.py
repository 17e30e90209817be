"""The sandbox's start-up cost per test run: a command started plainly, under ``bwrap`` through
the runner's own launcher (namespaces, mounts, made-up /etc, prlimit), and through the whole
runner (the throwaway copy of a small working copy made and deleted around the launch).

Each mode runs the same command ``--runs`` times, interleaved (plain, bwrap, runner, plain, ...)
so the machine's load falls on all of them alike; the figures are wall-clock milliseconds per
run (median and 90th percentile) and the median's extra over the plain start.

    uv run python bench/confine.py [--runs 50] [--files 40] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.confine import Limits, run_confined  # noqa: E402
from agents.confine.launch import give_to_sandbox, launch  # noqa: E402
from agents.confine.probe import require_sandbox  # noqa: E402

# Absolute paths: the same program in and out of the sandbox (no shim on the host PATH).
COMMANDS = {
    "true": ["/usr/bin/true"],
    "python3 -c pass": ["/usr/bin/python3", "-c", "pass"],
}


def working_copy(folder: Path, files: int) -> Path:
    """A small repository like the demo's: a package, its tests, a README (~2 KB a file)."""
    root = folder / "working-copy"
    for n in range(files):
        path = root / ("tests" if n % 2 else "src") / f"module_{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# module {n}\n" + "VALUE = 1\n" * 200)
    (root / "README.md").write_text("# demo\n")
    return root


def timed(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return (time.perf_counter() - started) * 1000


def measure(command: list[str], runs: int, copy: Path, bare: Path, bwrap: str) -> dict[str, Any]:
    limits = Limits()
    modes: dict[str, Callable[[], object]] = {
        "plain subprocess": lambda: subprocess.run(command, check=True),
        "bwrap (launch only)": lambda: launch(bwrap, bare, command, limits),
        "runner (copy + bwrap + delete)": lambda: run_confined(copy, command, limits),
    }
    samples: dict[str, list[float]] = {name: [] for name in modes}
    for _ in range(runs):
        for name, mode in modes.items():
            samples[name].append(timed(mode))
    plain = statistics.median(samples["plain subprocess"])
    return {
        name: {
            "median_ms": round(statistics.median(values), 2),
            "p90_ms": round(sorted(values)[int(0.9 * (len(values) - 1))], 2),
            "extra_ms": round(statistics.median(values) - plain, 2),
        }
        for name, values in samples.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--files", type=int, default=40, help="files in the working copy")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    bwrap = require_sandbox()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-confine-") as folder:
        copy = working_copy(Path(folder), args.files)
        bare = Path(folder) / "bare" / "repo"
        bare.mkdir(parents=True)
        give_to_sandbox(bare)
        for label, command in COMMANDS.items():
            results[label] = measure(command, args.runs, copy, bare, bwrap)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{args.runs} runs per mode, a working copy of {args.files + 1} files")
    print("| command | mode | median ms | p90 ms | extra over plain (median) |")
    print("|---|---|---|---|---|")
    for label, modes in results.items():
        for mode, figures in modes.items():
            print(
                f"| `{label}` | {mode} | {figures['median_ms']} | {figures['p90_ms']} "
                f"| {figures['extra_ms']} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
