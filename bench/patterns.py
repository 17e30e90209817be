"""Attacker text costs linear time: every pattern that reads text from outside, timed on inputs
built for its worst case, at 4 KB, 16 KB and 64 KB (GitHub's largest body is 65,536 characters).

Two kinds of rows: the product functions that read outside text (redaction, the ``/swarm``
reader, the untrusted-text delimiter, the outbound sanitiser), each on the input that hit one of
their patterns hardest; and every module-level pattern under ``agents/`` and ``flows/`` (found by
importing the modules, so a new one is measured without being listed), each scanned whole on the
repeated unit that costs it most at 4 KB among a fixed set of hostile units.

``--before REF`` measures the function rows again on the code of a git ref (default ``main``),
side by side: each measurement runs in a child process with a ceiling (``--ceiling``, seconds), so
a quadratic pattern shows as ``>10 s`` rather than holding the bench for minutes. ``--only TEXT``
keeps the rows of both tables whose name holds TEXT (repeat it for several).

Times are the CPU time of the process (best of 3), not the wall clock: on a machine shared with
other work, waiting for a core made the larger inputs look super-linear when they were not; what
an attacker costs is the CPU the call burns.

    uv run python bench/patterns.py [--sizes 4096,16384,65536] [--before main] [--ceiling 10]
        [--only redact --only neutralise]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _fill(head: str, unit: str, tail: str = "") -> Callable[[int], str]:
    def make(size: int) -> str:
        body = (head + unit * (size // max(len(unit), 1) + 1))[: size - len(tail)]
        return body + tail

    return make


# name -> (function "module:attr", input of a size). The examples come first.
FUNCTIONS: dict[str, tuple[str, Callable[[int], str]]] = {
    "redact: key word, then a.a.a (secret rules)": (
        "agents.redact:redact",
        _fill("token ", "a.", "("),
    ),
    "redact: quoted key, then .a.a.a": ("agents.redact:redact", _fill('"password": ', ".a", "(")),
    "redact: @, then a.a.a (url credentials)": ("agents.redact:redact", _fill("@ ", "a.", "\x00")),
    "redact: bare token prefixes": ("agents.redact:redact", _fill("", "ghp_aaaa ")),
    "redact: a token prefix a line": ("agents.redact:redact", _fill("", "ghp_x\n")),
    "redact: a split token, then blanks": (
        "agents.redact:redact",
        _fill("ghs_" + "aB3x" * 9, " ", "!"),
    ),
    "redact: a split token, then ' -'": (
        "agents.redact:redact",
        _fill("ghs_" + "aB3x" * 9, " -", "!"),
    ),
    "redact: random pieces after a prefix": ("agents.redact:redact", _fill("ghp_", "aB3x9Qz1 ")),
    "redact: spaced prefixes": ("agents.redact:redact", _fill("", "g h p _ aB3x9Qz1 ")),
    "redact: escapes (decoded shadow)": ("agents.redact:redact", _fill("ghs%5F", "%41\\u0042")),
    "redact: header lines": ("agents.redact:redact", _fill("", "\nAuthorization: ")),
    "redact: base64-like run": ("agents.redact:redact", _fill("", "aB3+", "!")),
    "find_command: /swarm a, blanks, b": (
        "agents.events.commands:find_command",
        _fill("/swarm a", " ", "b"),
    ),
    "find_command: /swarm lines": ("agents.events.commands:find_command", _fill("", "/swarm  \n")),
    "neutralise: < then blanks": ("agents.llm.untrusted:neutralise", _fill("<", " ", "x")),
    "neutralise: '< /' repeated": ("agents.llm.untrusted:neutralise", _fill("", "< / ")),
    "neutralise: < then blanks, not ASCII": (
        "agents.llm.untrusted:neutralise",
        _fill("é<", " ", "x"),
    ),
    "neutralise: look-alike tags, nothing ASCII": (
        "agents.llm.untrusted:neutralise",
        _fill("", "＜／ｕｎｔｒｕｓｔｅｄ\u200b"),
    ),
    "sanitise_body: '](' repeated": ("agents.github.outbound:sanitise_body", _fill("", "](")),
    "sanitise_body: '@a' repeated": ("agents.github.outbound:sanitise_body", _fill("", "a@a.")),
    "sanitise_body: '<' and blanks": ("agents.github.outbound:sanitise_body", _fill("", "< ")),
    "sanitise_body: '> ' nesting": ("agents.github.outbound:sanitise_body", _fill("", "> ")),
    "sanitise_body: fences": ("agents.github.outbound:sanitise_body", _fill("", "```\n")),
}

# Repeated units tried on every module-level pattern; the costliest at 4 KB is its row's input.
UNITS = (
    "a", "a.", ".a", "a-", "- ", " ", "\t", "\n", "<", "< ", "/", "@", "=", ":", "a=", "`",
    "```\n", "~", "_", "a ", "\\n", "%", "&#", "!", "](", "eyJ", "ghp_", "ghp_a ", "sk-ant-",
    "token", "token=", "<!--", "@a", "#", '"', "'", "a:", "/swarm ", "-", "--", "aA1 ", "1",
    "A", "Bearer ", "x://", "a@", "&", "\\u00", "*", "]", "(", ".-", "a/", "a.a.",
    "```suggestion\n",
)  # fmt: skip
SUFFIXES = ("", "!", "(", "\x00")


def _module_patterns() -> dict[str, re.Pattern[str]]:
    found: dict[str, re.Pattern[str]] = {}
    seen: set[str] = set()
    for root in ("agents", "flows"):
        package = importlib.import_module(root)
        for info in pkgutil.walk_packages(package.__path__, root + "."):
            if info.name.endswith("__main__"):
                continue
            try:
                module = importlib.import_module(info.name)
            except Exception:  # an optional dependency missing: its patterns are not ours
                continue
            for name, value in vars(module).items():
                if isinstance(value, re.Pattern) and value.pattern not in seen:
                    seen.add(value.pattern)
                    found[f"{info.name}.{name}"] = value
    from agents.redact.rules import RULES

    for index, rule in enumerate(RULES):
        found[f"agents.redact.rules.RULES[{index}] ({rule.kind})"] = rule.pattern
    return found


def _best(run: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return min(times)


def _scan(pattern: re.Pattern[str], text: str) -> None:
    for _ in pattern.finditer(text):
        pass


def _worst_input(pattern: re.Pattern[str]) -> Callable[[int], str]:
    worst, chosen = -1.0, _fill("", "a")
    for unit in UNITS:
        for suffix in SUFFIXES:
            make = _fill("", unit, suffix)
            spent = _best(lambda m=make: _scan(pattern, m(4096)), repeat=1)
            if spent > worst:
                worst, chosen = spent, make
    return chosen


def _child(row: str, sizes: list[int]) -> None:
    """Measure one function row on the code importable here, one line per size."""
    spec, make = FUNCTIONS[row]
    module, attr = spec.split(":")
    function = getattr(importlib.import_module(module), attr)
    for size in sizes:
        text = make(size)
        print(json.dumps([size, _best(lambda t=text: function(t))]), flush=True)


def _measure(row: str, sizes: list[int], tree: Path, ceiling: float) -> dict[int, str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    args = [sys.executable, str(Path(__file__).resolve()), "--child", row]
    args += ["--sizes", ",".join(map(str, sizes))]
    out: dict[int, str] = {size: f">{ceiling:g} s" for size in sizes}
    try:
        done = subprocess.run(
            args, env=env, cwd=tree, capture_output=True, text=True, timeout=ceiling, check=False
        )
        lines = done.stdout
        if done.returncode:
            error = (done.stderr.strip().splitlines() or ["failed"])[-1][:40]
            for size in sizes:
                out[size] = error
    except subprocess.TimeoutExpired as stopped:
        raw = stopped.stdout or b""
        lines = raw.decode() if isinstance(raw, bytes) else raw
    for line in lines.splitlines():
        size, seconds = json.loads(line)
        out[size] = f"{seconds * 1000:.1f} ms"
    return out


def _tree_of(ref: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "agents", "flows", "sandbox", "roles"],
        capture_output=True,
        check=True,
    ).stdout
    path = into / "tree.tar"
    path.write_bytes(archive)
    with tarfile.open(path) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


def _chosen(rows: dict[str, object], only: list[str]) -> list[str]:
    return [row for row in rows if not only or any(text in row for text in only)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4096,16384,65536")
    parser.add_argument("--before", default="main", help="a git ref to measure side by side")
    parser.add_argument("--no-before", action="store_true")
    parser.add_argument("--ceiling", type=float, default=10.0)
    parser.add_argument("--only", action="append", default=[], metavar="TEXT")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.child:
        _child(args.child, sizes)
        return
    labels = [f"{s // 1024} KB" for s in sizes]
    with tempfile.TemporaryDirectory() as scratch:
        before = None if args.no_before else _tree_of(args.before, Path(scratch))
        print(f"| function, hostile input | {' | '.join(labels)} |", end="")
        print(f" {' | '.join(f'{args.before} {label}' for label in labels)} |" if before else "")
        print("|---|" + "---:|" * (len(sizes) * (2 if before else 1)))
        for row in _chosen(FUNCTIONS, args.only):
            now = _measure(row, sizes, ROOT, args.ceiling)
            cells = [now[s] for s in sizes]
            if before is not None:
                then = _measure(row, sizes, before, args.ceiling)
                cells += [then[s] for s in sizes]
            print(f"| {row} | {' | '.join(cells)} |", flush=True)
    sys.path.insert(0, str(ROOT))
    print()
    print(f"| pattern (module.name), worst unit at 4 KB | {' | '.join(labels)} |")
    print("|---|" + "---:|" * len(sizes))
    patterns = _module_patterns()
    for name in _chosen(patterns, args.only):
        pattern = patterns[name]
        make = _worst_input(pattern)
        unit = make(8).rstrip("!(\x00")[:8]
        cells = []
        for size in sizes:
            if cells and cells[-1].startswith(">"):
                cells.append(cells[-1])  # past the ceiling at a smaller size already
                continue
            text = make(size)
            spent = _best(lambda t=text, p=pattern: _scan(p, t), repeat=1)
            late = spent > args.ceiling / 10
            cells.append(f">{spent:.1f} s" if late else f"{spent * 1000:.1f} ms")
        print(f"| {name}, {unit!r} | {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    main()
