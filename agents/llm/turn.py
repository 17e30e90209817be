"""The ephemeral layer: the per-turn user message (tool results, ``<turn_context>``, ``<recall>``).

Rebuilt every call and appended to the history, never written into the system prompt, so the
cached prefix stays byte-identical while budgets, time and recalled memory change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from agents.json_value import JSONObject, JSONValue
from agents.llm.untrusted import neutralise


@dataclass(frozen=True)
class TurnContext:
    """What the model needs to know this turn. ``task`` is trusted dispatcher text; quote any
    untrusted material inside it with ``wrap_untrusted`` first."""

    task: str
    budgets_left: Mapping[str, int | float | str]
    now: datetime
    turn: int | None = None

    def render(self) -> str:
        now = self.now.astimezone(UTC).replace(microsecond=0).isoformat()
        budgets = ", ".join(f"{k}={_fmt(v)}" for k, v in self.budgets_left.items())
        lines = ["<turn_context>"]
        if self.turn is not None:
            lines.append(f"turn: {self.turn}")
        lines += [f"time: {now}", f"budgets_left: {budgets or 'n/a'}", f"task: {self.task}"]
        lines.append("</turn_context>")
        return "\n".join(lines)


def _fmt(value: int | float | str) -> str:
    return f"{value:.4f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


def render_recall(items: Sequence[str]) -> str:
    """Memory recalled after the session started; empty when there is none."""
    if not items:
        return ""
    body = "\n".join(f"- {neutralise(item.strip())}" for item in items if item.strip())
    return f"<recall>\n{body}\n</recall>" if body else ""


@dataclass(frozen=True)
class ToolResult:
    """What one tool call returns: text for the model, and a short summary for the record."""

    content: str
    is_error: bool = False
    summary: str = ""
    # The task's one write is done (a review posted or recorded): the session ends after this
    # turn's tools, with these words as the worker's last (its continuity), instead of asking
    # the model once more. That last call changed nothing on GitHub and cost a full prompt, and
    # it made the worker's cost differ from the cost the posted summary already stated.
    closing: str | None = None

    def block(self, tool_use_id: str) -> JSONObject:
        block: JSONObject = {
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": self.content,
        }
        if self.is_error:
            block["is_error"] = True
        return block


def user_message(
    context: TurnContext,
    *,
    tool_results: Sequence[tuple[str, ToolResult]] = (),
    recall: Sequence[str] = (),
    briefing: str = "",
) -> JSONObject:
    """One user turn: tool results (by tool use id) first, as the API requires, then turn
    context, recall, and a briefing the caller has already delimited (``wrap_untrusted``)."""
    text = context.render()
    recalled = render_recall(recall)
    if recalled:
        text += "\n" + recalled
    if briefing.strip():
        text += "\n" + briefing.strip()
    content: list[JSONValue] = [result.block(use_id) for use_id, result in tool_results]
    content.append({"type": "text", "text": text})
    return {"role": "user", "content": content}


def assistant_message(content: Sequence[Mapping[str, JSONValue]]) -> JSONObject:
    """The model's reply as it goes back into the history (blocks copied, unchanged)."""
    blocks: list[JSONValue] = [dict(block) for block in content]
    return {"role": "assistant", "content": blocks}
