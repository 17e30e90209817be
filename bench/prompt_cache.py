"""Prompt-cache benchmark: a 10-turn review session on the scripted model, cached vs not.

Runs the same review through the worker's own loop and the real SDK (AsyncAnthropic over
httpx2.MockTransport): as swarm sends it (cached prefix + rolling history breakpoint), with only
the prefix breakpoint, and with every ``cache_control`` removed. Billed input cost comes from
the provider's usage fields priced by ``agents.llm.usage``; a turn "hits" the cached prefix
when it reads at least the prefix's tokens from the cache. Targets: input cost ratio <= 0.35x,
prefix hit rate 100% after turn 1.

    uv run python bench/prompt_cache.py [--json]
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.dispatch.envelope import Budgets  # noqa: E402
from agents.llm.client import LLMClient, LLMResult  # noqa: E402
from agents.llm.prompt import CachedPrefix, PrefixBuilder  # noqa: E402
from agents.llm.turn import ToolResult  # noqa: E402
from agents.llm.untrusted import wrap_untrusted  # noqa: E402
from agents.llm.usage import Usage, cost, input_cost  # noqa: E402
from agents.roles import RoleChain  # noqa: E402
from agents.roles.files import load_roles  # noqa: E402
from agents.worker.budget import Meter  # noqa: E402
from agents.worker.loop import Session, run_session  # noqa: E402
from agents.worker.ports import ModelTurn, ToolUse  # noqa: E402
from bench.cli import bench_parser  # noqa: E402
from sandbox.model import ScriptedModel  # noqa: E402
from sandbox.model.cache import request_blocks  # noqa: E402

MODEL = "claude-sonnet-4-6"
TASK = "Review pull request acme/shop#42"
T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
STRING = {"type": "string"}
INT = {"type": "integer"}

TOOLS = {
    "get_pull": (
        "Read a pull request's metadata: title, body, author, base and head commits.",
        {"repo": STRING, "number": INT},
    ),
    "list_pull_files": (
        "List the changed files of a pull request with their unified-diff "
        "patches, 30 per page; large patches are split.",
        {"repo": STRING, "number": INT, "page": INT},
    ),
    "read_file": (
        "Read one repository file at a commit (the pull request head by default).",
        {"repo": STRING, "path": STRING, "ref": STRING},
    ),
    "memory_search": ("Search memory (facts and procedures with provenance).", {"query": STRING}),
    "history_search": ("Search earlier sessions' redacted history.", {"query": STRING}),
    "memory_note": (
        "Record a memory note (a fact or procedure) for later sessions.",
        {"text": STRING},
    ),
    "record_progress": (
        "Record a goal checkpoint or a decision; shown in the UI.",
        {"note": STRING},
    ),
    "submit_review": (
        "Submit exactly one review with inline comments anchored to changed lines (event COMMENT).",
        {
            "repo": STRING,
            "number": INT,
            "event": STRING,
            "body": STRING,
            "comments": {"type": "array", "items": {"type": "object"}},
        },
    ),
}

CONTRIBUTING = "\n".join(
    f"{i}. " + line
    for i, line in enumerate(
        [
            "Every change comes with tests; bug fixes start with a failing test.",
            "Use the logging module; never print() in library code.",
            "Public functions have type hints and a docstring that says why.",
            "Keep pull requests small: one concern per pull request.",
            "Run `make check` (ruff, mypy --strict, pytest) before pushing.",
            "Database migrations are reviewed by two maintainers.",
            "Never commit secrets; use the settings module and environment variables.",
            "Prefer composition over inheritance; avoid global state.",
        ]
        * 6,
        start=1,
    )
)
MEMORY = "\n".join(
    [
        "- acme/shop uses pytest with fixtures in tests/conftest.py",
        "- maintainers ask for logging instead of print",
        "- payment code lives in shop/payments and needs extra care",
        "- the CI runs on Python 3.11 and 3.12",
    ]
)


def _patch(name: str, n: int) -> str:
    added = "".join(f"+    value_{i} = compute_{name}({i})\n" for i in range(n))
    return (
        f"@@ -10,3 +10,{n + 4} @@ def {name}(order):\n     total = 0\n{added}"
        "+    print(total)\n+    # TODO: handle refunds\n     return total\n"
    )


FILES = [
    {"filename": f"shop/{name}.py", "status": "modified", "patch": _patch(name, 12)}
    for name in ("cart", "checkout", "payments", "pricing", "shipping")
]


def execute(name: str, args: dict[str, Any]) -> str:
    if name == "get_pull":
        return json.dumps(
            {
                "number": 42,
                "title": wrap_untrusted("pr_title", "Refactor order totals"),
                "body": wrap_untrusted("pr_body", "Moves total computation into helpers. " * 8),
                "head": {"sha": "f00dfeed"},
            }
        )
    if name == "list_pull_files":
        files = [{**f, "patch": wrap_untrusted("diff", f["patch"])} for f in FILES]
        return json.dumps({"files": files, "next_page": None})
    if name == "read_file":
        code = "".join(f"def helper_{i}(x):\n    return x * {i}\n\n" for i in range(60))
        return wrap_untrusted("file", code, source=str(args.get("path")))
    return json.dumps({"ok": True})


def build_prefix() -> tuple[CachedPrefix, RoleChain]:
    roles = load_roles(ROOT / "roles")
    role = roles["reviewer"]
    tools = [
        {
            "name": n,
            "description": d,
            "input_schema": {"type": "object", "properties": p, "required": sorted(p)},
        }
        for n, (d, p) in TOOLS.items()
    ]
    prefix = (
        PrefixBuilder(role.render("agent", with_skills=False))
        .tools(tools)
        .memory_snapshot(MEMORY)
        .skills([(s.name, s.description) for s in role.skills])
        .context_file("CONTRIBUTING.md", CONTRIBUTING)
        .session_timestamp(T0)
        .build()
    )
    return prefix, RoleChain(role)


def strip_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value


class Tools:
    """The worker loop's tools port over the canned pull request above."""

    async def call(self, name: str, raw_args: Any) -> ToolResult:
        return ToolResult(execute(name, dict(raw_args)))


class Mode:
    """The model port as each mode sends requests: as shipped, or with breakpoints removed."""

    def __init__(self, client: LLMClient, mode: str) -> None:
        self.client, self.mode = client, mode

    async def create(self, request: Mapping[str, Any]) -> LLMResult:
        if self.mode == "uncached":
            request = strip_cache_control(request)
        elif self.mode == "prefix-only":
            request = {**request, "messages": strip_cache_control(request["messages"])}
        return await self.client.create(request)


class Turns:
    """The recorder port: keeps each model turn."""

    def __init__(self) -> None:
        self.turns: list[ModelTurn] = []

    def user_turn(self, message: Mapping[str, Any]) -> None:
        pass

    def model_turn(self, turn: ModelTurn) -> None:
        self.turns.append(turn)

    def tool_call(self, use: ToolUse) -> None:
        pass

    def tool_result(self, use: ToolUse, result: ToolResult) -> None:
        pass


async def session(mode: str) -> list[dict[str, Any]]:
    """One review through the worker's loop; mode is 'cached' (as shipped), 'prefix-only' or
    'uncached'."""
    prefix, chain = build_prefix()
    model = ScriptedModel(read_files=True)
    client = LLMClient(api_key="sk-bench-not-a-key", http_client=model.async_client())
    prefix_tokens = sum(
        b.tokens
        for b in request_blocks({"tools": prefix.tools(), "system": prefix.system_blocks()})
    )
    spec = Session(prefix, chain, MODEL, max_tokens=2048, task=TASK, clock=lambda: T0)
    record = Turns()
    await run_session(Mode(client, mode), Tools(), record, spec, Meter(Budgets(turns=20)))
    await client.aclose()
    rows: list[dict[str, Any]] = []
    for number, turn in enumerate(record.turns, 1):
        result, usage = turn.result, turn.result.usage
        rows.append(
            {
                "turn": number,
                "tool": ",".join(t["name"] for t in result.tool_uses) or result.stop_reason,
                **usage.as_dict(),
                "prefix_hit": usage.cache_read_input_tokens >= prefix_tokens,
                "input_cost": input_cost(usage, MODEL),
                "cost": cost(usage, MODEL),
                "ms": result.latency_s * 1000,
                "prefix_tokens": prefix_tokens,
            }
        )
    return rows


def main() -> None:
    parser = bench_parser(__doc__, json_help="print one JSON summary line only")
    args = parser.parse_args()

    # The loop warns of every cache miss; the uncached mode misses on purpose.
    logging.getLogger("agents.llm.usage").setLevel(logging.ERROR)
    runs = {mode: asyncio.run(session(mode)) for mode in ("cached", "prefix-only", "uncached")}
    cached, uncached = runs["cached"], runs["uncached"]
    totals = {mode: sum(r["input_cost"] for r in rows) for mode, rows in runs.items()}
    later = [r["prefix_hit"] for r in cached[1:]]
    summary = {
        "turns": len(cached),
        "prefix_tokens": cached[0]["prefix_tokens"],
        "input_cost_cached_usd": round(totals["cached"], 6),
        "input_cost_prefix_only_usd": round(totals["prefix-only"], 6),
        "input_cost_uncached_usd": round(totals["uncached"], 6),
        "ratio_cached_vs_uncached": round(totals["cached"] / totals["uncached"], 3),
        "ratio_prefix_only_vs_uncached": round(totals["prefix-only"] / totals["uncached"], 3),
        "prefix_hit_rate_after_first": round(sum(later) / len(later), 3) if later else 0.0,
        "input_tokens_total": sum(Usage.from_api(r).total_input_tokens for r in uncached),
        "mean_call_ms": round(sum(r["ms"] for r in cached) / len(cached), 2),
        "targets_met": (
            totals["cached"] / totals["uncached"] <= 0.35 and all(later) and len(cached) == 10
        ),
    }
    if args.json:
        print(json.dumps(summary))
        return
    print(
        f"10-turn review on the scripted model ({MODEL} prices), prefix "
        f"{summary['prefix_tokens']} tokens\n"
    )
    head = (
        f"{'turn':>4} {'call':<16} {'input':>6} {'c.write':>7} {'c.read':>7} {'out':>5} "
        f"{'prefix hit':>10} {'input $':>10} {'uncached $':>10}"
    )
    print(head)
    print("-" * len(head))
    for row, plain in zip(cached, uncached, strict=False):
        print(
            f"{row['turn']:>4} {row['tool']:<16} {row['input_tokens']:>6} "
            f"{row['cache_creation_input_tokens']:>7} {row['cache_read_input_tokens']:>7} "
            f"{row['output_tokens']:>5} {'yes' if row['prefix_hit'] else 'no':>10} "
            f"{row['input_cost']:>10.6f} {plain['input_cost']:>10.6f}"
        )
    print()
    for key, value in summary.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
