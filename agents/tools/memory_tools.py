"""Memory and history tools: recall, the bounded history search, notes, progress checkpoints."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.llm.turn import ToolResult, render_recall
from agents.memory.history import HistorySearchError, format_hits, history_search
from agents.store.records import NewEvent
from agents.tools.base import OfferedTool, Tool, ToolError
from agents.tools.context import WorkerContext


class _Args(BaseModel):
    model_config = ConfigDict(extra="ignore")


class MemorySearchArgs(_Args):
    query: str = Field(min_length=1, max_length=200)
    limit: int = Field(default=5, ge=1, le=20)


class HistorySearchArgs(_Args):
    query: str | None = Field(default=None, max_length=200)
    limit: int = Field(default=10, ge=1, le=50)
    before_seq: int | None = Field(default=None, ge=1)
    include_tool_events: bool = False
    scope: Literal["session", "run"] = "session"


class MemoryNoteArgs(_Args):
    note: str = Field(min_length=1, max_length=2000, description="what to remember")


class ProgressArgs(_Args):
    note: str = Field(min_length=1, max_length=500, description="checkpoint or decision")
    kind: Literal["checkpoint", "decision", "goal"] = "checkpoint"


def memory_tools(ctx: WorkerContext) -> list[OfferedTool]:
    async def memory_search(args: MemorySearchArgs) -> ToolResult:
        hits = await ctx.store.reader.run(ctx.worker_id, ctx.memory.recall, args.query, args.limit)
        text = render_recall([h.cited for h in hits]) or "No memory matches."
        return ToolResult(text, summary=f"{len(hits)} hit(s)")

    async def history_search_tool(args: HistorySearchArgs) -> ToolResult:
        # Read after this worker's queued writes: the session's own record so far, not only
        # what the writer thread has got to.
        try:
            hits = await ctx.store.reader.run(
                ctx.worker_id,
                history_search,
                ctx.store,
                ctx.worker_id,
                # The tool's arguments are the search's, by name: one list of fields.
                **args.model_dump(),
                allow_run_scope=ctx.history_scope == "run",
            )
        except HistorySearchError as exc:
            raise ToolError(str(exc)) from None
        return ToolResult(format_hits(hits), summary=f"{len(hits)} hit(s)")

    async def memory_note(args: MemoryNoteArgs) -> ToolResult:
        row = await ctx.store.reader.run(ctx.worker_id, ctx.memory.note, args.note)
        return ToolResult(f"noted (note:{row.id})")

    async def record_progress(args: ProgressArgs) -> ToolResult:
        line = f"{args.kind}: {args.note}"
        ctx.progress.append(line)
        # Through the writer: after the tool call it answers in the transcript, never before;
        # in the store by the time the model reads that it was recorded.
        progress = NewEvent("progress", {"kind": args.kind, "text": args.note})
        ctx.store.writer.append(ctx.worker_id, progress)
        await ctx.store.writer.aflush(ctx.worker_id)
        return ToolResult("progress recorded")

    return [
        Tool(
            "memory_search",
            "Search remembered facts and procedures for this repository and role.",
            MemorySearchArgs,
            memory_search,
        ),
        Tool(
            "history_search",
            "Search this worker's own earlier events, cited as worker:<id>#<seq>; page with "
            "before_seq.",
            HistorySearchArgs,
            history_search_tool,
        ),
        Tool(
            "memory_note",
            "Append a note to this worker's operational memory.",
            MemoryNoteArgs,
            memory_note,
        ),
        Tool(
            "record_progress",
            "Record a goal checkpoint or a decision, shown in the run's UI.",
            ProgressArgs,
            record_progress,
        ),
    ]
