"""Hand-written model replies for tests the scripted model is too well-behaved to cover."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx2

from agents.llm.client import LLMClient


def message(content: list[dict[str, Any]], stop: str = "tool_use") -> dict[str, Any]:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 100,
            "output_tokens": 20,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def tool_use(name: str, args: dict[str, Any], n: int = 1) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{name}_{n}", "name": name, "input": args}


class ReplayModel:
    """Answers each request with the next reply; records every request body it saw."""

    def __init__(self, replies: list[dict[str, Any]] | Iterator[dict[str, Any]]) -> None:
        self._replies = iter(replies)
        self.requests: list[dict[str, Any]] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content))
        try:
            reply = next(self._replies)
        except StopIteration:
            reply = message([{"type": "text", "text": "done"}], stop="end_turn")
        return httpx2.Response(200, json=reply)

    def client(self) -> LLMClient:
        transport = httpx2.MockTransport(self.handler)
        return LLMClient(
            api_key="test-model-key", http_client=httpx2.AsyncClient(transport=transport)
        )


def forever(make: Callable[[int], dict[str, Any]]) -> Iterator[dict[str, Any]]:
    return (make(i) for i in itertools.count(1))
