"""Benchmark: GitHub REST points per reviewed PR, and PRs per hour per installation.

What a review costs the installation's budgets, counted by the sandbox GitHub that serves the run
(its own accounting, the one that answers 403 when a budget is spent): the primary budget (one
point per request that GitHub counts; GitHub does not count a 304 to a conditional request, nor
``GET /rate_limit``), the secondary REST points (1 per read, 5 per write, per minute) and the
content-creating requests (reviews and comments). The App's own calls (minting a token with the
App's JWT) draw on the App's budget, not the installation's: they are shown apart.

Two scenarios, each a posting run of the ``swarm-run`` flow (real Prefect engine against a local
Prefect server, scripted model, store on SQLite) and then a second run over the unchanged
repository (the polling case: every PR already reviewed at its head):

- ``small``: ``--prs`` pull requests of one or two files each;
- ``sharded``: one 40-file pull request cut into shards and merged by the summarizer.

The repository carries ``AGENTS.md``, ``CONTRIBUTING.md`` and ``.github/swarm.yaml`` on its base
branch, as a repository set up for review does. From the points per reviewed PR follow the PRs
an installation can review per hour at GitHub's limits (5,000 primary points an hour, 900
secondary points a minute, 500 content creations an hour), and which limit binds first.

Run: ``uv run python bench/github_calls.py [--prs 8] [--compare DIR] [--json]``

``--compare DIR`` runs the same scenarios over the code tree in DIR (say a worktree of main
before a change) in a fresh process, beside this checkout's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parents[1]
REPO = "acme/calls"
LARGE_FILES = 40
# GitHub's documented limits for one installation (github.com, not Enterprise Cloud).
PRIMARY_PER_HOUR = 5000
SECONDARY_POINTS_PER_MINUTE = 900
CONTENT_PER_HOUR = 500

GUIDANCE = {
    "AGENTS.md": "# Agents\n\nKeep functions small; every change comes with a test.\n",
    "CONTRIBUTING.md": "# Contributing\n\nRun `make check` before you push.\n",
    ".github/swarm.yaml": "language: English\n",
}


def _module(n: int) -> str:
    return f"def f{n}(x):\n    print('debug', x)  # TODO remove\n    return x * {n}\n"


def build_state(scenario: str, prs: int) -> Any:
    from sandbox.github.limits import RateLimits
    from sandbox.github.state import SandboxState

    state = SandboxState(limits=RateLimits(core=50_000))
    files = {"README.md": "# calls\n", "src/calls/__init__.py": "", **GUIDANCE}
    state.add_repo(REPO, files)
    if scenario == "small":
        for n in range(prs):
            changes = {f"src/calls/mod_{n:03d}.py": _module(n)}
            if n % 2:
                changes[f"tests/test_mod_{n:03d}.py"] = f"def test_f{n}():\n    assert True\n"
            state.add_pull(REPO, f"Change {n}", changes, author="alice-dev")
    else:
        changes = {f"src/calls/plugin_{n:02d}.py": _module(n) for n in range(LARGE_FILES)}
        state.add_pull(REPO, "Forty plugins", changes, author="alice-dev")
    return state


def _budget(state: Any) -> dict[str, dict[str, int]]:
    """Primary points used so far, per login and resource, from the sandbox's own accounting."""
    with state.lock:
        now = state.clock.now()
        return {
            login: {res: state.limiter.status(login, res, now).used for res in ("core", "graphql")}
            for login in state.limiter.identities
        }


def _count(state: Any, before_log: int, before: dict[str, dict[str, int]]) -> dict[str, Any]:
    after = _budget(state)
    log = state.requests[before_log:]
    installations = {r.login for r in log if (r.login or "").endswith("[bot]")}

    def used(login: str, resource: str) -> int:
        return after.get(login, {}).get(resource, 0) - before.get(login, {}).get(resource, 0)

    inst = [r for r in log if r.login in installations]
    routes: dict[str, int] = {}
    for r in inst:
        if r.resource != "graphql" and r.status != 304:
            key = f"{r.method} {r.route}"
            routes[key] = routes.get(key, 0) + 1
    return {
        "primary": sum(used(login, "core") for login in installations),
        "graphql": sum(used(login, "graphql") for login in installations),
        "not_modified": sum(1 for r in inst if r.status == 304),
        "secondary": sum(
            (5 if r.is_write else 1) for r in inst if r.resource != "graphql" and r.limited is None
        ),
        "content": sum(1 for r in inst if r.is_content_creation and r.status < 400),
        "app_jwt": sum(1 for r in log if (r.login or "").startswith("app/")),
        "routes": dict(sorted(routes.items(), key=lambda kv: -kv[1])),
    }


def _run_flow(parameters: dict[str, Any]) -> Any:
    from flows.run.flow import swarm_run
    from flows.run.request import RunRequest

    request = RunRequest(repos=[REPO], model="scripted", **parameters)
    pending = swarm_run(request, return_state=True)
    state = asyncio.run(cast("Coroutine[Any, Any, Any]", pending))
    return state.result(raise_on_failure=False)


def scenario(name: str, prs: int, data_dir: Path, code: Path) -> dict[str, Any]:
    from sandbox.github.seed import credentials_env
    from sandbox.server import SandboxServer

    state = build_state(name, prs)
    parameters = {"shard_threshold_files": 30, "shard_size": 15} if name == "sharded" else {}
    result: dict[str, Any] = {}
    with SandboxServer(state) as server:
        os.environ.update(credentials_env(state, data_dir / "keys", server.url))
        os.environ["SWARM_DATA_DIR"] = str(data_dir / name)
        os.environ["SWARM_ROLES_DIR"] = str(code / "roles")
        os.environ["SWARM_REPOS"] = REPO
        os.environ.pop("ANTHROPIC_API_KEY", None)
        for label in ("first", "again"):
            before_log, before = len(state.requests), _budget(state)
            report = _run_flow(parameters)
            counted = _count(state, before_log, before)
            counted["reviews"] = report.new_reviews
            counted["workers"] = len(report.outcomes)
            result[label] = counted
    return result


def _child(args: argparse.Namespace) -> int:
    code = Path(args.code).resolve()
    sys.path.insert(0, str(code))
    data_dir = Path(tempfile.mkdtemp(prefix="swarm-bench-calls-"))
    results = {name: scenario(name, args.prs, data_dir, code) for name in ("small", "sharded")}
    Path(args.out).write_text(json.dumps(results), encoding="utf-8")
    return 0


def per_hour(
    points_per_pr: float, secondary_per_pr: float, content_per_pr: float
) -> tuple[float, str]:
    """PRs an installation can review in an hour at GitHub's limits, and the limit that binds."""
    bounds = {
        "primary points": PRIMARY_PER_HOUR / points_per_pr if points_per_pr else float("inf"),
        "secondary points": 60 * SECONDARY_POINTS_PER_MINUTE / secondary_per_pr
        if secondary_per_pr
        else float("inf"),
        "content creation": CONTENT_PER_HOUR / content_per_pr if content_per_pr else float("inf"),
    }
    binding = min(bounds, key=lambda k: bounds[k])
    return bounds[binding], binding


def summary(results: dict[str, Any]) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for name, runs in results.items():
        first, again = runs["first"], runs["again"]
        reviews = max(first["reviews"], 1)
        points = first["primary"] / reviews
        secondary = first["secondary"] / reviews
        content = first["content"] / reviews
        hourly, binding = per_hour(points, secondary, content)
        rows[name] = {
            "reviews": first["reviews"],
            "points_per_pr": points,
            "secondary_per_pr": secondary,
            "graphql_per_pr": first["graphql"] / reviews,
            "app_jwt_per_pr": first["app_jwt"] / reviews,
            "repoll_points": again["primary"],
            "repoll_not_modified": again["not_modified"],
            "repoll_reviews": again["reviews"],
            "prs_per_hour_primary": PRIMARY_PER_HOUR / points if points else float("inf"),
            "prs_per_hour": hourly,
            "binding_limit": binding,
        }
    return rows


ROWS = (
    ("reviews posted (first run)", "reviews", "{:.0f}"),
    ("primary REST points per reviewed PR", "points_per_pr", "{:.2f}"),
    ("secondary REST points per reviewed PR", "secondary_per_pr", "{:.2f}"),
    ("GraphQL points per reviewed PR", "graphql_per_pr", "{:.2f}"),
    ("App JWT calls per reviewed PR (App's budget)", "app_jwt_per_pr", "{:.2f}"),
    ("re-poll, unchanged: primary points", "repoll_points", "{:.0f}"),
    ("re-poll, unchanged: 304 answers", "repoll_not_modified", "{:.0f}"),
    ("re-poll, unchanged: reviews posted", "repoll_reviews", "{:.0f}"),
    ("PRs per hour, primary budget alone", "prs_per_hour_primary", "{:.0f}"),
    ("PRs per hour at GitHub's limits", "prs_per_hour", "{:.0f}"),
)


def _print(results: dict[str, dict[str, Any]], prs: int) -> None:
    labels = list(results)
    rows = {label: summary(results[label]) for label in labels}
    for name in ("small", "sharded"):
        what = f"{prs} small PRs" if name == "small" else f"one {LARGE_FILES}-file PR in shards"
        print(f"\n{name}: {what}")
        print(f"  {'':46}" + "".join(f"{label:>12}" for label in labels))
        for title, key, fmt in ROWS:
            cells = "".join(f"{fmt.format(rows[label][name][key]):>12}" for label in labels)
            print(f"  {title:46}{cells}")
        binding = "".join(f"{rows[label][name]['binding_limit']:>20}" for label in labels)
        print(f"  {'binding limit':38}{binding}")
    for label in labels:
        for name in ("small", "sharded"):
            for run in ("first", "again"):
                routes = results[label][name][run]["routes"]
                shown = ", ".join(f"{k} x{v}" for k, v in routes.items())
                print(f"  {label} {name} {run}: {shown}")


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT))
    from bench.cli import add_child_arguments, bench_parser, local_prefect

    parser = bench_parser(__doc__, json_help="print every count of every run as JSON")
    parser.add_argument("--prs", type=int, default=8, help="PRs of the 'small' scenario")
    parser.add_argument("--compare", help="another code tree to run beside this one")
    add_child_arguments(parser, ROOT)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args)

    trees = [("this", ROOT)]
    if args.compare:
        trees.insert(0, ("base", Path(args.compare).resolve()))
    results: dict[str, dict[str, Any]] = {}
    with local_prefect() as home:
        for label, code in trees:
            out = home / f"{label}.json"
            cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--code", str(code)]
            cmd += ["--prs", str(args.prs), "--out", str(out)]
            subprocess.run(cmd, env=dict(os.environ), check=True, cwd=code)
            results[label] = json.loads(out.read_text(encoding="utf-8"))
    if args.json:
        print(json.dumps({k: {"runs": v, "summary": summary(v)} for k, v in results.items()}))
    else:
        _print(results, args.prs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
