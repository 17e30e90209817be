"""The writer's tools on its working copy: read, list and search the repository's files, write,
edit and delete them. Nothing here reaches GitHub: the copy was fetched by code, and what
changed is committed by code (:mod:`agents.workspace`).

File text is the repository's, anyone's: it reaches the model redacted and inside untrusted
delimiters. A refused path, a protected file or a cap is an error result the model reads
(DESIGN rule 12), never an exception that ends the worker.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

from agents.llm.turn import ToolResult
from agents.llm.untrusted import wrap_untrusted
from agents.redact import redact
from agents.tools.base import OfferedTool, Tool, ToolError
from agents.workspace.copy import PathRefused, Workspace
from agents.workspace.policy import ChangeRefused
from agents.workspace.search import MAX_QUERY_CHARS

MAX_LINES = 400
PATH = Field(min_length=1, max_length=1024, description="path from the repository root")
ArgsT = TypeVar("ArgsT", bound=BaseModel)


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PathArgs(_Args):
    path: str = PATH


class ReadArgs(PathArgs):
    start_line: int = Field(default=1, ge=1)
    max_lines: int = Field(default=200, ge=1, le=MAX_LINES)


class ListArgs(_Args):
    path: str = Field(default="", max_length=1024, description="directory; '' for the root")


class SearchArgs(_Args):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="literal text")
    under: str = Field(default="", max_length=1024, description="directory to search in")
    ignore_case: bool = False


class WriteArgs(PathArgs):
    text: str


class EditArgs(PathArgs):
    old_text: str = Field(min_length=1, description="exact text occurring once in the file")
    new_text: str


def _guarded(
    handler: Callable[[ArgsT], Awaitable[ToolResult]],
) -> Callable[[ArgsT], Awaitable[ToolResult]]:
    """The copy's refusals as tool errors the model reads (and redacted: they quote paths)."""

    async def run(args: ArgsT) -> ToolResult:
        try:
            return await handler(args)
        except (PathRefused, ChangeRefused, ValueError) as exc:
            raise ToolError(redact(str(exc))) from None
        except OSError as exc:  # the filesystem's refusal (a directory named as a file...)
            raise ToolError(f"{exc.strerror or 'cannot be used'}") from None

    return run


def _numbered(text: str, start: int, count: int) -> tuple[str, str]:
    lines = text.split("\n")
    chosen = lines[start - 1 : start - 1 + count]
    body = "\n".join(f"{start + i:>6}\t{line}" for i, line in enumerate(chosen))
    last = start - 1 + len(chosen)
    footer = f"lines {start}-{last} of {len(lines)}"
    if last < len(lines):
        footer += f"; more: start_line={last + 1}"
    return body, footer


def workspace_tools(ws: Workspace) -> list[OfferedTool]:
    """The tools on ``ws``; their permissions are declared in :mod:`agents.tools.catalog`."""

    async def read(args: ReadArgs) -> ToolResult:
        text = ws.read(args.path)
        body, footer = _numbered(text, args.start_line, args.max_lines)
        wrapped = wrap_untrusted("file", redact(body), source=args.path)
        return ToolResult(f"{wrapped}\n{footer}", summary=f"read {args.path} ({footer})")

    async def listing(args: ListArgs) -> ToolResult:
        entries, more = ws.listing(args.path)
        lines = [
            f"{e.name}/" if e.kind == "dir" else f"{e.name} ({e.kind}, {e.size} bytes)"
            for e in entries
        ]
        wrapped = wrap_untrusted("listing", redact("\n".join(lines)), source=args.path or ".")
        note = f"\n(the first {len(entries)} entries only)" if more else ""
        return ToolResult(wrapped + note, summary=f"listed {args.path or '.'}: {len(entries)}")

    async def find(args: SearchArgs) -> ToolResult:
        hits, more = ws.search(args.query, args.under, ignore_case=args.ignore_case)
        text = "\n".join(f"{h.path}:{h.line}: {h.text}" for h in hits)
        wrapped = wrap_untrusted("search", redact(text), source=args.under or ".")
        note = f"\n{len(hits)} hits" + (" (more left out: narrow the search)" if more else "")
        return ToolResult(wrapped + note, summary=f"{len(hits)} hits")

    async def write(args: WriteArgs) -> ToolResult:
        ws.write(args.path, args.text)
        return ToolResult(f"wrote {args.path}", summary=f"wrote {args.path}")

    async def edit(args: EditArgs) -> ToolResult:
        ws.replace(args.path, args.old_text, args.new_text)
        return ToolResult(f"edited {args.path}", summary=f"edited {args.path}")

    async def delete(args: PathArgs) -> ToolResult:
        ws.delete(args.path)
        return ToolResult(f"deleted {args.path}", summary=f"deleted {args.path}")

    return [
        Tool(
            "workspace_read",
            "Read a text file of the working copy, numbered lines from start_line.",
            ReadArgs,
            _guarded(read),
        ),
        Tool(
            "workspace_list",
            "List a directory of the working copy.",
            ListArgs,
            _guarded(listing),
        ),
        Tool(
            "workspace_search",
            "Find lines holding a literal text (not a pattern) in the working copy's files.",
            SearchArgs,
            _guarded(find),
        ),
        Tool(
            "workspace_write",
            "Create or overwrite a file of the working copy with the whole new text.",
            WriteArgs,
            _guarded(write),
        ),
        Tool(
            "workspace_edit",
            "Replace old_text, which must occur exactly once in the file, with new_text.",
            EditArgs,
            _guarded(edit),
        ),
        Tool(
            "workspace_delete",
            "Delete a file of the working copy.",
            PathArgs,
            _guarded(delete),
        ),
    ]
