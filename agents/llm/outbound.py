"""What leaves for the model: a ``messages.create`` request with every text passed through the
redaction table.

Tool results carry whatever GitHub holds (a diff that commits a token, a comment quoting one);
the model must not receive it, or it will quote it back. Only text is rewritten: ids,
``cache_control`` marks and the model's own thinking blocks (whose signatures must come back
unchanged) are left as they are. Redaction is deterministic, so the cached prefix stays
byte-stable; a history resent every turn is redacted once per text (:func:`redact_cached`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.json_value import JSONValue
from agents.redact import redact_cached, redact_obj

_UNTOUCHED_BLOCKS = frozenset({"thinking", "redacted_thinking", "image"})


def redact_request(request: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``request`` whose system text, messages and tool inputs are redacted."""
    # Loose values on both ends: the copy goes on as ``messages.create``'s keyword arguments,
    # whose types (the SDK's params) the SDK checks; the walk below is typed as JSON.
    out = dict(request)
    if "system" in out:
        out["system"] = _content(out["system"])
    messages = out.get("messages")
    if isinstance(messages, list):
        out["messages"] = [_message(m) for m in messages]
    return out


def _message(message: JSONValue) -> JSONValue:
    if not isinstance(message, dict):
        return message
    return {**message, "content": _content(message.get("content"))}


def _content(content: JSONValue) -> JSONValue:
    if isinstance(content, str):
        return redact_cached(content)
    if isinstance(content, list):
        return [_block(block) for block in content]
    return content


def _block(block: JSONValue) -> JSONValue:
    if not isinstance(block, dict) or block.get("type") in _UNTOUCHED_BLOCKS:
        return block
    out = dict(block)
    text = out.get("text")
    if isinstance(text, str):
        out["text"] = redact_cached(text)
    if "content" in out:
        out["content"] = _content(out["content"])
    if "input" in out:
        out["input"] = redact_obj(out["input"])
    source = out.get("source")
    if isinstance(source, dict) and source.get("type") == "text":
        out["source"] = {**source, "data": redact_cached(str(source.get("data", "")))}
    return out
