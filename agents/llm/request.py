"""``build_request``: cached prefix + role overlays + history -> ``messages.create`` kwargs.

System blocks: the cached prefix (``cache_control`` on its last block), then the session
overlay, then the call overlay last. The history carries a second, rolling cache breakpoint on
its last block so each turn pays full price only for what it added, and optionally one more at
the end of the stubbed part of the history (``history_breakpoints``), which stays byte-stable
after a compaction. The provider allows four breakpoints; this uses at most three.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Protocol

from agents.json_value import JSONObject, JSONValue
from agents.llm.prompt import TRUST_POLICY, CachedPrefix, normalise_tools


class PromptAssemblyError(ValueError):
    """The request would break a prompt rule (role text in messages, tools off the prefix...)."""


class OverlayChain(Protocol):
    """What the LLM layer needs from a role chain (``agents.roles.RoleChain`` provides it)."""

    def system_overlays(self) -> list[str]: ...

    def resolved_chain(self) -> list[str]: ...


def _texts(content: object) -> list[str]:
    if isinstance(content, str):
        return [content]
    found: list[str] = []
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, Mapping):
                continue
            for key in ("text", "content"):
                found.extend(_texts(block.get(key)))
            arguments = block.get("input")
            if isinstance(arguments, Mapping):
                found.extend(str(v) for v in arguments.values())
    return found


def check_messages(messages: Sequence[Mapping[str, JSONValue]], role_texts: Sequence[str]) -> None:
    """Refuse histories that put role text in a user/assistant turn or start badly.

    Consecutive turns of one role are allowed (the provider merges them): resuming after
    ``pause_turn`` sends the paused assistant turn back as the last message.
    """
    if not messages:
        raise PromptAssemblyError("messages is empty: the first turn must be a user message")
    for index, message in enumerate(messages):
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise PromptAssemblyError(
                f"messages[{index}] has role {role!r}: only user and assistant turns belong "
                "in messages (system text goes in the system prompt)"
            )
        if index == 0 and role != "user":
            raise PromptAssemblyError("messages[0] must be a user message")
        for text in _texts(message.get("content")):
            for role_text in role_texts:
                if role_text and role_text in text:
                    raise PromptAssemblyError(
                        f"messages[{index}] contains role text: roles belong in the system prompt"
                    )


def _content_blocks(message: JSONObject) -> list[JSONValue]:
    """The message's content as a list of blocks (a plain string becomes one text block)."""
    content = message["content"]
    if isinstance(content, str):
        content = message["content"] = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise TypeError(f"a message's content is text or a list of blocks, not {content!r}")
    return content


def _append_guidance(first: JSONObject, guidance: str) -> None:
    """Repository guidance rides in the first user message as data, after its turn context."""
    first["content"] = [*_content_blocks(first), {"type": "text", "text": guidance}]


def _mark_last_block(message: JSONObject) -> None:
    content = message["content"]
    blocks = _content_blocks(message) if isinstance(content, str) else content
    if blocks and isinstance(blocks, list) and isinstance(blocks[-1], dict):
        blocks[-1]["cache_control"] = {"type": "ephemeral"}


def build_request(
    prefix: CachedPrefix,
    chain: OverlayChain,
    messages: Sequence[Mapping[str, JSONValue]],
    *,
    model: str,
    max_tokens: int,
    tools: Sequence[Mapping[str, object]] | None = None,
    cache_history: bool = True,
    history_breakpoint: int | None = None,
) -> JSONObject:
    """Keyword arguments for ``client.messages.create``; inputs are copied, never mutated."""
    if tools is not None and normalise_tools(tools) != prefix.tool_specs:
        raise PromptAssemblyError(
            "tools differ from the cached prefix's tools; changing tools mid-session breaks "
            "the prompt cache: build a new prefix instead"
        )
    overlays = chain.system_overlays()
    identity = prefix.fragments[0].text.removesuffix(f"\n\n{TRUST_POLICY}")
    check_messages(messages, [*overlays, identity])
    overlay_blocks: list[JSONValue] = [{"type": "text", "text": text} for text in overlays]
    system: list[JSONValue] = [*prefix.system_blocks(), *overlay_blocks]
    history = copy.deepcopy([dict(m) for m in messages])
    if prefix.guidance:
        _append_guidance(history[0], prefix.guidance)
    if cache_history:
        marks = {len(history) - 1}
        if history_breakpoint is not None and 0 <= history_breakpoint < len(history):
            marks.add(history_breakpoint)
        for index in sorted(marks):
            _mark_last_block(history[index])
    request: JSONObject = {
        "model": model,
        "max_tokens": max_tokens,
        "system": system,
        "messages": [*history],
    }
    if prefix.tool_specs:
        request["tools"] = [*prefix.tools()]
    return request
