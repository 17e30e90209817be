"""The passes of ``bench/swarm.py``, in one process over one code tree (this checkout, or
another one put first on ``sys.path`` by ``--code``).

Each pass reviews the same PRs in dry-run mode (nothing is posted, so the PRs can be reviewed
again) with the scripted model at zero latency, and is measured in wall time and in CPU time of
this process minus the sandbox GitHub's thread (the fake GitHub is not ours to count):

- a *flow* pass runs the ``swarm-run`` flow: every worker a Prefect task run, with dispatch,
  artifacts and events, as shipped;
- a *bare* pass runs the same workers with no Prefect at all: envelopes dispatched before the
  clock starts, then ``run_worker`` under the same concurrency cap.

Per-worker overhead (Prefect's task run plus ours: dispatch, artifacts, events, progress) is the
flow's fan-out phase (from the moment it builds its ``Fanout`` to the flow's end) minus the bare
pass, over the number of workers, in wall and in CPU time.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

BENCH_REPO = "acme/bench"
PROBE_REPO = "acme/probe"
PROBE_PRS = 20


def _files(n: int) -> dict[str, str]:
    body = "def f{n}(x):\n    print('debug', x)  # TODO remove\n    return x * {n}\n"
    return {f"src/bench/mod_{n:03d}.py": body.format(n=n)}


UNPACED_POINTS = 10**7


def unpace() -> None:
    """Point limits far above what a pass spends, for GitHub and the throttle alike.

    Per-worker overhead is Prefect's and ours; with GitHub's 900 REST points a minute the throttle
    spreads a pass's calls over seconds, and the flow and bare passes spend different points
    (the flow mints, verifies and revokes per scope), so pacing would be counted as overhead.
    The throttle's defaults are raised in this process only (both code trees have them; the
    ``SWARM_GITHUB_LIMITS__*`` settings are newer than some trees compared).
    """
    from agents.ratelimit.github.limits import ThrottleLimits

    for name in ("rest_points_per_minute", "graphql_points_per_minute"):
        ThrottleLimits.model_fields[name].default = UNPACED_POINTS
    ThrottleLimits.model_rebuild(force=True)


def build_sandbox(repos: dict[str, int], *, unpaced: bool = False) -> Any:
    from sandbox.github.limits import RateLimits
    from sandbox.github.state import SandboxState

    # GitHub's primary budget is far above what the benchmark needs; the secondary limits keep
    # their defaults so the throttle has real limits to respect (unless ``unpaced``).
    # Unpaced, the primary budget too: the throttle reads it from GitHub's headers and spreads what
    # is left over the hour, and every pass inherits what the passes before it spent.
    core = UNPACED_POINTS if unpaced else 15_000 + 20 * sum(repos.values())
    points = {"rest_points_per_window": UNPACED_POINTS, "graphql_points_per_window": UNPACED_POINTS}
    state = SandboxState(limits=RateLimits(core=core, **(points if unpaced else {})))
    for repo, count in repos.items():
        state.add_repo(repo, {"README.md": "# bench\n", "src/bench/__init__.py": ""})
        for n in range(count):
            state.add_pull(repo, f"Bench change {n}", _files(n), author="alice-dev")
    return state


def configure(server: Any, data_dir: Path, code: Path, repos: str = BENCH_REPO) -> None:
    from sandbox.github.seed import credentials_env

    os.environ.update(credentials_env(server.state, data_dir / "keys", server.url))
    os.environ["SWARM_DATA_DIR"] = str(data_dir)
    os.environ["SWARM_ROLES_DIR"] = str(code / "roles")
    os.environ["SWARM_REPOS"] = repos
    os.environ.pop("ANTHROPIC_API_KEY", None)


def group_cpu_s(pgid: int | None) -> float:
    """CPU seconds of every live process in process group ``pgid`` (the Prefect server)."""
    if not pgid:
        return 0.0
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields from "state": pgrp is the third
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


class Clocks:
    """Wall time, and CPU time of this process without the sandbox GitHub's thread."""

    def __init__(self, sandbox: Any, server_pgid: int | None) -> None:
        thread = sandbox._thread
        self._sandbox_clock = time.pthread_getcpuclockid(thread.ident)
        self._server_pgid = server_pgid

    def now(self) -> tuple[float, float]:
        ours = time.process_time() - time.clock_gettime(self._sandbox_clock)
        return time.perf_counter(), ours

    def server_cpu(self) -> float:
        return group_cpu_s(self._server_pgid)


@contextmanager
def fanout_starts(clocks: Clocks) -> Iterator[list[tuple[float, float]]]:
    """The clocks at the moment each flow run builds its ``Fanout`` (after discovery)."""
    from flows.run import fanout

    starts: list[tuple[float, float]] = []
    original = fanout.Fanout.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        starts.append(clocks.now())
        original(self, *args, **kwargs)

    fanout.Fanout.__init__ = init  # type: ignore[method-assign]
    try:
        yield starts
    finally:
        fanout.Fanout.__init__ = original  # type: ignore[method-assign]


def next_minute(server: Any) -> None:
    """Start the sandbox's secondary windows afresh, as if a minute had passed since the last pass.

    Every pass is a separate run with its own in-memory throttle (the store is SQLite), which
    knows nothing of the points the pass before it spent; on an idle machine the passes follow
    each other within GitHub's one-minute window and their sum would pass its 900 REST points.
    """
    with server.state.lock:
        for buckets in server.state.limiter.identities.values():
            buckets.rest_points = type(buckets.rest_points)()
            buckets.graphql_points = type(buckets.graphql_points)()
            buckets.content_minute = type(buckets.content_minute)()


def flow_pass(
    server: Any, clocks: Clocks, *, repo: str, max_workers: int, name: str, dry_run: bool = True
) -> dict[str, Any]:
    from flows.run.flow import swarm_run
    from flows.run.request import RunRequest

    next_minute(server)
    before = len(server.state.requests)
    server_before = clocks.server_cpu()
    with fanout_starts(clocks) as starts:
        wall0, cpu0 = clocks.now()
        pending = swarm_run(
            RunRequest(repos=[repo], max_workers=max_workers, dry_run=dry_run, model="scripted"),
            return_state=True,
        )
        state = asyncio.run(cast("Coroutine[Any, Any, Any]", pending))
        wall1, cpu1 = clocks.now()
    report = state.result(raise_on_failure=False)
    calls = [r for r in server.state.requests[before:] if (r.login or "").endswith("[bot]")]
    kinds = Counter("graphql" if r.resource == "graphql" else "rest" for r in calls)
    n = max(len(report.outcomes), 1)
    reviewed = sum(1 for o in report.outcomes if o.status == "succeeded")
    t = report.timings
    fan_wall, fan_cpu = starts[-1] if starts else (wall0, cpu0)
    return {
        "pass": name,
        "workers": len(report.outcomes),
        "succeeded": reviewed,
        "posted": report.new_reviews,
        "wall_s": wall1 - wall0,
        "cpu_s": cpu1 - cpu0,
        "fan_wall_s": wall1 - fan_wall,
        "fan_cpu_s": cpu1 - fan_cpu,
        "server_cpu_s": clocks.server_cpu() - server_before,
        "setup_and_discovery_s": t.setup_and_discovery_s,
        "task_beyond_worker_ms": 1000 * t.orchestration_s / n,
        "dispatch_ms": 1000 * t.dispatch_s / n,
        "worker_ms": 1000 * t.worker_s / n,
        "cpu_per_pr_s": (cpu1 - cpu0) / max(reviewed, 1),
        "cpu_per_worker_ms": 1000 * (cpu1 - cpu0) / n,
        "rest_per_pr": kinds["rest"] / max(reviewed, 1),
        "graphql_per_pr": kinds["graphql"] / max(reviewed, 1),
    }


def bare_pass(
    server: Any, clocks: Clocks, *, repo: str, max_workers: int, name: str
) -> dict[str, Any]:
    """The same workers with no Prefect: dispatched before the clock starts, then run."""
    next_minute(server)
    return asyncio.run(_bare(server, clocks, repo, max_workers, name))


async def _bare(
    server: Any, clocks: Clocks, repo: str, max_workers: int, name: str
) -> dict[str, Any]:
    from agents.roles import RoleRefs
    from agents.settings.model import load_settings
    from agents.wiring import build_runtime
    from agents.work import Task
    from agents.worker.run import run_worker
    from flows.run.models import scripted_model

    model = scripted_model()
    runtime = build_runtime(load_settings(), model.client, model.model_id, dry_run=True)
    try:
        run_id = runtime.store.create_run("bench")
        pulls = [i.pull for i in server.state.repo(repo).issues.values() if i.pull is not None]
        tasks = [
            Task(kind="review_pr", repo=repo, number=p.number, head_sha=p.head_sha)
            for p in sorted(pulls, key=lambda p: p.number)
        ]
        reviewer = RoleRefs(agent="reviewer")
        sealed = [await runtime.dispatcher.dispatch(run_id, t, reviewer) for t in tasks]
        limit = asyncio.Semaphore(max_workers)
        spent: list[float] = []

        async def one(envelope: Any) -> Any:
            async with limit:
                started = time.perf_counter()
                outcome = await run_worker(envelope, runtime.worker)
                spent.append(time.perf_counter() - started)
                return outcome

        wall0, cpu0 = clocks.now()
        outcomes = await asyncio.gather(*(one(s) for s in sealed))
        wall1, cpu1 = clocks.now()
        for s in sealed:
            await runtime.dispatcher.release(s)
    finally:
        await runtime.aclose()
    n = max(len(outcomes), 1)
    return {
        "pass": name,
        "workers": len(outcomes),
        "succeeded": sum(1 for o in outcomes if o.status == "succeeded"),
        "wall_s": wall1 - wall0,
        "cpu_s": cpu1 - cpu0,
        "fan_wall_s": wall1 - wall0,
        "fan_cpu_s": cpu1 - cpu0,
        "worker_ms": 1000 * sum(spent) / n,
        "cpu_per_worker_ms": 1000 * (cpu1 - cpu0) / n,
    }


def overheads(flow: dict[str, Any], bare: dict[str, Any]) -> dict[str, float]:
    """Per worker: what the flow's fan-out costs beyond the same workers without Prefect."""
    n = max(flow["workers"], 1)
    return {
        "overhead_wall_ms": 1000 * (flow["fan_wall_s"] - bare["fan_wall_s"]) / n,
        "overhead_cpu_ms": 1000 * (flow["fan_cpu_s"] - bare["fan_cpu_s"]) / n,
        "server_cpu_ms": 1000 * flow.get("server_cpu_s", 0.0) / n,
    }


def run_passes(
    prs: int,
    max_workers: int,
    data_dir: Path,
    code: Path,
    server_pgid: int | None,
    post: bool = False,
    probe_prs: int = PROBE_PRS,
    unpaced: bool = False,
) -> dict[str, Any]:
    """Warm-up, then one worker at a time (flow, bare), then ``max_workers`` at a time."""
    from sandbox.server import SandboxServer

    if unpaced:
        unpace()
    passes: dict[str, dict[str, Any]] = {}
    sandbox = build_sandbox({PROBE_REPO: probe_prs, BENCH_REPO: prs}, unpaced=unpaced)
    with SandboxServer(sandbox) as server:
        configure(server, data_dir, code)
        clocks = Clocks(server, server_pgid)
        # The first flow run and the first runtime of a process pay for first-use imports.
        flow_pass(server, clocks, repo=PROBE_REPO, max_workers=1, name="warm-up")
        bare_pass(server, clocks, repo=PROBE_REPO, max_workers=1, name="warm-up bare")
        for repo, width, label in ((PROBE_REPO, 1, "alone"), (BENCH_REPO, max_workers, "wide")):
            passes[label] = flow_pass(server, clocks, repo=repo, max_workers=width, name=label)
            passes[f"{label} bare"] = bare_pass(
                server, clocks, repo=repo, max_workers=width, name=f"{label} bare"
            )
        if post:
            passes["post"] = flow_pass(
                server, clocks, repo=BENCH_REPO, max_workers=max_workers, name="post", dry_run=False
            )
    return {
        "passes": passes,
        "alone": overheads(passes["alone"], passes["alone bare"]),
        "wide": overheads(passes["wide"], passes["wide bare"]),
    }
