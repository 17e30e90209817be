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

from agents.redact import redact_cached, redact_obj

_UNTOUCHED_BLOCKS = frozenset({"thinking", "redacted_thinking", "image"})


def redact_request(request: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``request`` whose system text, messages and tool inputs are redacted."""
    out = dict(request)
    if "system" in out:
        out["system"] = _content(out["system"])
    if isinstance(out.get("messages"), list):
        out["messages"] = [_message(m) for m in out["messages"]]
    return out


def _message(message: Any) -> Any:
    if not isinstance(message, Mapping):
        return message
    return {**message, "content": _content(message.get("content"))}


def _content(content: Any) -> Any:
    if isinstance(content, str):
        return redact_cached(content)
    if isinstance(content, list):
        return [_block(block) for block in content]
    return content


def _block(block: Any) -> Any:
    if not isinstance(block, Mapping) or block.get("type") in _UNTOUCHED_BLOCKS:
        return block
    out = dict(block)
    if isinstance(out.get("text"), str):
        out["text"] = redact_cached(out["text"])
    if "content" in out:
        out["content"] = _content(out["content"])
    if "input" in out:
        out["input"] = redact_obj(out["input"])
    source = out.get("source")
    if isinstance(source, Mapping) and source.get("type") == "text":
        out["source"] = {**source, "data": redact_cached(str(source.get("data", "")))}
    return out
