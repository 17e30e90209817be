"""The provider's request checks that catch real bugs in prompt assembly, and its window check."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class BadRequest(Exception):
    pass


def validate(body: Mapping[str, Any]) -> None:
    """The provider's request checks that catch real bugs in prompt assembly."""
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            raise BadRequest(f"{key}: Field required")
    if not isinstance(body["max_tokens"], int) or body["max_tokens"] < 1:
        raise BadRequest("max_tokens: must be a positive integer")
    names = [t.get("name") for t in body.get("tools") or []]
    if len(names) != len(set(names)):
        raise BadRequest("tools: Tool names must be unique.")
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages: at least one message is required")
    pending: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise BadRequest(f"messages.{index}.role: must be 'user' or 'assistant'")
        if index == 0 and role != "user":
            raise BadRequest("messages.0.role: the first message must use the 'user' role")
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        results = {str(b.get("tool_use_id")) for b in blocks if b.get("type") == "tool_result"}
        if role == "user":
            if pending - results:
                raise BadRequest(
                    f"messages.{index}: tool_use ids were found without tool_result blocks "
                    f"immediately after: {', '.join(sorted(pending - results))}"
                )
            if results - pending:
                raise BadRequest(f"messages.{index}: unexpected tool_use_id in tool_result")
            pending = set()
        else:
            pending = {str(b.get("id")) for b in blocks if b.get("type") == "tool_use"}
    marked = sum(
        1
        for block in _all_blocks(body)
        if isinstance(block, Mapping) and block.get("cache_control") is not None
    )
    if marked > 4:
        raise BadRequest(
            f"A maximum of 4 blocks with cache_control may be provided. Found {marked}."
        )


def _all_blocks(body: Mapping[str, Any]) -> list[Any]:
    blocks: list[Any] = list(body.get("tools") or [])
    if isinstance(body.get("system"), list):
        blocks.extend(body["system"])
    for message in body.get("messages") or []:
        if isinstance(message.get("content"), list):
            blocks.extend(message["content"])
    return blocks


def check_window(total_input: int, max_tokens: int, window: int) -> None:
    """Input alone, and input plus ``max_tokens``, must fit the model's context window."""
    if total_input > window:
        raise BadRequest(f"prompt is too long: {total_input} tokens > {window} maximum")
    if total_input + max_tokens > window:
        raise BadRequest(
            f"input length and `max_tokens` exceed context limit: {total_input} + "
            f"{max_tokens} > {window}, decrease input length or `max_tokens` and try again"
        )
