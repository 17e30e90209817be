"""Context-budget benchmark: a 300-file PR and a 5,000-line file reviewed on a small window.

The real worker (envelope, identity check, tools with paging, the session loop) reviews each PR
of the sandbox GitHub through the real anthropic SDK against the scripted model over loopback
HTTP. The model is ``small-16k``, a registry override (``SWARM_MODELS``) with a 16,000-token
window that the scripted provider enforces like the real one (400 "prompt is too long").
Three modes per case, each on its own copy of the PR:

- ``stubbed``: as shipped (older results stubbed behind a cache breakpoint near the budget);
- ``unstubbed``: the worker's compaction and budget check turned off, same window: shows
  where the history outgrows it (the LLM client's own window check then refuses to send);
- ``unstubbed, 200k provider``: the same, with the client and the provider told a
  200,000-token window (the worker still pages for 16k), so the unstubbed run finishes and
  its cost can be compared.

Figures come from the provider's side: the largest request (input tokens as the scripted model
counts them, plus ``max_tokens``) against the window, the cache hit rate (cache reads over all
input tokens) and the billed input cost at the model's prices (Sonnet's).

    uv run python bench/context.py [--json]
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SMALL = "small-16k"
WINDOW = 16_000
SPEC = {
    "context_window": WINDOW,
    "max_output_tokens": 2048,
    "input_per_mtok": 3.0,
    "output_per_mtok": 15.0,
}
MODES = ("stubbed", "unstubbed", "unstubbed, 200k provider")


@dataclass
class Row:
    case: str
    mode: str
    outcome: str
    calls: int
    largest_request: int
    window: int
    cache_hit_rate: float
    billed_input_usd: float
    stubbed_results: int


def configure(server: Any, data_dir: Path) -> None:
    from sandbox.github.seed import credentials_env

    os.environ.update(credentials_env(server.state, data_dir / "keys", server.url))
    os.environ["SWARM_DATA_DIR"] = str(data_dir)
    os.environ["SWARM_ROLES_DIR"] = str(ROOT / "roles")
    os.environ["SWARM_MODELS"] = json.dumps({SMALL: SPEC})
    os.environ.pop("SWARM_STORE_URL", None)
    os.environ.pop("ANTHROPIC_API_KEY", None)


def unstubbed() -> Callable[[], None]:
    """Turn compaction and the window check off (what the worker did before the budget)."""
    from agents.worker import window

    original = window.ContextWindow.request

    def send_as_is(self: Any, messages: Sequence[Mapping[str, Any]], build: Any) -> Any:
        return build(messages, None)

    window.ContextWindow.request = send_as_is  # type: ignore[method-assign]

    def restore() -> None:
        window.ContextWindow.request = original  # type: ignore[method-assign]

    return restore


async def review(server: Any, case: str, mode: str, read_files: bool) -> Row:
    from agents.llm.client import LLMClient
    from agents.llm.models import ModelRegistry
    from agents.llm.usage import Usage, input_cost
    from agents.roles import RoleRefs
    from agents.settings.model import load_settings
    from agents.wiring import build_runtime
    from agents.work import Task
    from agents.worker.run import run_worker
    from sandbox.github.seed import WIDGETS
    from sandbox.github.seed_large import add_long_file_pull, add_wide_pull
    from sandbox.model import ScriptedModel
    from sandbox.model.cache import request_blocks
    from sandbox.model.server import ScriptedServer

    state = server.state
    pull = (
        add_wide_pull(state, WIDGETS, 300)
        if case.startswith("300")
        else add_long_file_pull(state, WIDGETS, 5000)
    )
    assert pull.pull is not None
    provider_window = 200_000 if "200k" in mode else WINDOW
    scripted = ScriptedModel(context_windows={SMALL: provider_window}, read_files=read_files)
    settings = load_settings()
    restore = unstubbed() if mode != "stubbed" else None
    small = settings.model_registry()
    # The client checks the window too: in the 200k mode it (and only it) is told the larger one.
    client_registry = ModelRegistry({SMALL: {**SPEC, "context_window": provider_window}})
    with ScriptedServer(scripted) as model_server:
        client = LLMClient(
            api_key="sk-bench-context", base_url=model_server.url, registry=client_registry
        )
        runtime = build_runtime(settings, client, SMALL)
        runtime.worker = replace(runtime.worker, registry=small)
        role = runtime.roles["reviewer"]
        limits = role.limits.model_copy(update={"max_turns": 80, "max_tokens": 5_000_000})
        runtime.roles["reviewer"] = role.model_copy(update={"limits": limits})
        try:
            run_id = runtime.store.create_run("bench-context")
            task = Task(
                kind="review_pr", repo=WIDGETS, number=pull.number, head_sha=pull.pull.head_sha
            )
            sealed = await runtime.dispatcher.dispatch(run_id, task, RoleRefs(agent="reviewer"))
            outcome = await run_worker(sealed, runtime.worker)
            used = runtime.store.get_worker(outcome.worker_id).budgets_used
        finally:
            await runtime.aclose()
            if restore:
                restore()
    usage = Usage()
    for response in scripted.responses:
        u = response["usage"]
        usage = usage + Usage(
            input_tokens=u["input_tokens"],
            cache_creation_input_tokens=u["cache_creation_input_tokens"],
            cache_read_input_tokens=u["cache_read_input_tokens"],
        )
    spec = settings.model_registry().spec(SMALL)
    sizes = [
        sum(b.tokens for b in request_blocks(r)) + int(r["max_tokens"]) for r in scripted.requests
    ]
    status = outcome.status
    if outcome.reason:
        status += f": {outcome.reason[:150]}"
    total_in = usage.total_input_tokens
    return Row(
        case=case,
        mode=mode,
        outcome=status,
        calls=len(scripted.requests),
        largest_request=max(sizes, default=0),
        window=WINDOW,
        cache_hit_rate=usage.cache_read_input_tokens / total_in if total_in else 0.0,
        billed_input_usd=input_cost(usage, spec),
        stubbed_results=int(used.get("stubbed_results", 0)),
    )


async def bench() -> list[Row]:
    from sandbox.server import SandboxServer

    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp, SandboxServer() as server:
        configure(server, Path(tmp))
        for case, read_files in (("300-file PR", False), ("5,000-line file", True)):
            for mode in MODES:
                rows.append(await review(server, case, mode, read_files))
    return rows


def main(argv: list[str] | None = None) -> int:
    from bench.cli import bench_parser

    parser = bench_parser(__doc__, json_help="print the rows as JSON")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    rows = asyncio.run(bench())
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=2))
        return 0
    print(f"small-window model {SMALL}: {WINDOW:,}-token window, max output 2,048")
    print("| case | mode | calls | largest request / window | cache hit | billed input | outcome |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r.case} | {r.mode} | {r.calls} | {r.largest_request:,} / {r.window:,} | "
            f"{r.cache_hit_rate:.0%} | ${r.billed_input_usd:.4f} | {r.outcome} |"
        )
    shipped = [r for r in rows if r.mode == "stubbed"]
    over = [r for r in shipped if r.largest_request > WINDOW]
    print(f"stubbed runs over the window: {len(over)} (must be 0)")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
