"""Benchmark: webhook received -> review posted, and what the receiver costs per delivery.

Part 1 (no Prefect): the signature check over bodies of several sizes, and the receiver's whole
answer (ASGI, in process: size cap, signature, routing, store insert) for a delivery it ignores,
one it refuses as forged, and one it accepts.

Part 2: ``--pushes`` pushes (default 50) to pull requests on the sandbox GitHub, one after the
other; each push's signed ``synchronize`` delivery goes to the real receiver, which runs the
``swarm-run`` flow in process against a real local Prefect server with the scripted model. Per
push, from the moment the delivery is posted:

- answer: the receiver's 202;
- queueing: until the flow run is asked for (the in-process runner starts it);
- flow-run start: until Prefect has the flow run Running (its ``start_time``);
- review: until the sandbox has the review (its creation time).

Run: ``uv run python bench/events.py [--pushes 50] [--skip-flow]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REPO = "acme/widgets"
SECRET = "bench-webhook-secret-0123456789"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def signature_costs() -> list[tuple[str, float]]:
    from agents.events.signature import sign, signature_ok

    rows = []
    for size in (2_000, 64_000, 1_000_000):
        body = b"x" * size
        good = sign(SECRET, body)
        signature_ok(SECRET, body, good)  # first call imports githubkit.webhooks
        n = 2000 if size < 100_000 else 200
        started = time.perf_counter()
        for _ in range(n):
            signature_ok(SECRET, body, good)
        rows.append((f"{size:,} B", 1e6 * (time.perf_counter() - started) / n))
    return rows


async def receiver_costs(
    server: Any, data_dir: Path, n: int = 200
) -> list[tuple[str, float, float]]:
    import httpx

    from agents.store import Store
    from flows.run.request import RunRequest
    from flows.webhook.app import WebhookReceiver, create_webhook_app
    from flows.webhook.enqueue import InProcessEnqueuer
    from flows.webhook.queue import DeliveryQueue
    from flows.webhook.sink import EventSink
    from sandbox.github.webhooks import SandboxWebhooks

    class NoGitHub:
        async def permission(self, repo: str, login: str) -> str:
            return "none"

        async def react(self, repo: str, comment_id: int, content: str) -> None: ...

        async def reply(self, repo: str, number: int, body: str) -> None: ...

    async def nothing(request: RunRequest) -> None: ...

    hooks = SandboxWebhooks(server.state, SECRET, api_url=server.url)
    rows = []
    with Store.open(None, data_dir / "receiver") as store:
        # Wired as `swarm webhook serve` wires it: the row is the queue, the runner moves it.
        enqueuer = InProcessEnqueuer(4, runner=nothing, deliveries=store)
        sink = EventSink(enqueuer, NoGitHub())
        receiver = WebhookReceiver(SECRET, store, sink, 1 << 20, queue=DeliveryQueue(store))
        app = create_webhook_app(receiver)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app)) as client:
            for name in ("ignored (star)", "forged (401)", "accepted (202)"):
                times = []
                for i in range(n):
                    if name.startswith("accepted"):
                        server.state.add_pull(REPO, f"b{i}", {f"src/b{i}.py": "B = 1\n"})
                        [d] = hooks.take()
                    else:
                        d = hooks.make("star", {"action": "created", "n": i})
                    headers = dict(d.headers)
                    if name.startswith("forged"):
                        headers["X-Hub-Signature-256"] = "sha256=" + "0" * 64
                    started = time.perf_counter()
                    await client.post(
                        "http://bench/github/webhook", content=d.body, headers=headers
                    )
                    times.append(1000 * (time.perf_counter() - started))
                rows.append((name, statistics.median(times), pct(times, 0.95)))
        await enqueuer.drain()
    hooks.close()
    return rows


async def flow_latency(server: Any, data_dir: Path, pushes: int) -> list[dict[str, float]]:
    import httpx
    from prefect.client.orchestration import get_client

    from agents.roles.files import load_roles
    from agents.settings.model import load_settings
    from agents.store import Store
    from flows.run.bot import BotCommands
    from flows.run.request import RunRequest
    from flows.webhook.app import WebhookReceiver, create_webhook_app
    from flows.webhook.enqueue import InProcessEnqueuer, run_flow_here
    from flows.webhook.queue import DeliveryQueue
    from flows.webhook.sink import EventSink
    from sandbox.github.webhooks import SandboxWebhooks

    settings = load_settings()
    # One more than measured: the first flow run in a process pays for first-use imports.
    numbers = [
        server.state.add_pull(REPO, f"Push {i}", {f"src/widgets/p{i}.py": "P = 0\n"}).number
        for i in range(pushes + 1)
    ]
    hooks = SandboxWebhooks(server.state, SECRET, api_url=server.url)
    marks: dict[str, float] = {}
    states: list[Any] = []

    async def runner(request: RunRequest) -> object:
        marks["run"] = time.time()
        states.append(await run_flow_here(request.model_copy(update={"model": "scripted"})))
        return states[-1]

    rows = []
    commands = BotCommands(settings, load_roles(settings.roles_dir), "default")
    with Store.open(None, data_dir) as store:
        enqueuer = InProcessEnqueuer(1, runner=runner, deliveries=store)
        sink = EventSink(enqueuer, commands)
        receiver = WebhookReceiver(SECRET, store, sink, 1 << 20, queue=DeliveryQueue(store))
        app = create_webhook_app(receiver)
        async with (
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app)) as client,
            get_client() as prefect,
        ):
            for i, number in enumerate(numbers):
                server.state.push_commit(REPO, number, {f"src/widgets/p{i}.py": "P = 1\n"})
                # The push's delivery; the bot's own comments of the run before are deliveries
                # too (issue_comment), which the receiver ignores.
                [delivery] = [d for d in hooks.take() if d.event == "pull_request"]
                sent = time.time()
                answer = await client.post(
                    "http://bench/github/webhook", content=delivery.body, headers=delivery.headers
                )
                answered = time.time()
                await enqueuer.drain()
                run = await prefect.read_flow_run(states[-1].state_details.flow_run_id)
                pull = server.state.pull(REPO, number).pull
                reviews = [r for r in pull.reviews if r.user_login.endswith("[bot]")]
                if answer.status_code != 202 or len(reviews) != 1 or run.start_time is None:
                    raise SystemExit(f"push {i}: {answer.status_code}, {len(reviews)} reviews")
                flow_start = run.start_time.timestamp()
                if i == 0:
                    continue
                rows.append(
                    {
                        "answer": answered - sent,
                        "queueing": marks["run"] - sent,
                        "flow-run start": flow_start - marks["run"],
                        "review": reviews[0].at - flow_start,
                        "total": reviews[0].at - sent,
                    }
                )
    hooks.close()
    await commands.aclose()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pushes", type=int, default=50)
    parser.add_argument("--skip-flow", action="store_true", help="only part 1")
    args = parser.parse_args(argv)

    from bench.swarm_passes import configure
    from flows.local.env import prepare_prefect_env
    from flows.local.prefect_server import prefect_home, stop, use_local_prefect
    from sandbox.server import SandboxServer

    print("signature check (githubkit verify, sha256):")
    for size, us in signature_costs():
        print(f"  {size:>12}: {us:8.1f} us")
    data_dir = Path(tempfile.mkdtemp(prefix="swarm-bench-events-"))
    with SandboxServer() as server:
        configure(server, data_dir, ROOT, REPO)
        print("receiver answer, in process (median / p95 ms over 200):")
        for name, p50, p95 in asyncio.run(receiver_costs(server, data_dir)):
            print(f"  {name:<16} {p50:7.2f} / {p95:7.2f}")
        if args.skip_flow:
            return 0
        import os

        os.environ["SWARM_REPOS"] = REPO
        prepare_prefect_env()
        use_local_prefect(data_dir, force=True)
        try:
            rows = asyncio.run(flow_latency(server, data_dir, args.pushes))
        finally:
            stop(prefect_home(data_dir))
    print(f"webhook -> review posted, {len(rows)} pushes one after the other (p50 / p95 s):")
    for key in ("answer", "queueing", "flow-run start", "review", "total"):
        values = [r[key] for r in rows]
        print(f"  {key:<15} {statistics.median(values):7.3f} / {pct(values, 0.95):7.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
