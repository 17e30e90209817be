"""Prompt-cache accounting done the way the provider does it, for the scripted model.

The request is read as one sequence of blocks in cache order (tools -> system -> messages).
Every block boundary has a cumulative hash; a block with ``cache_control`` is a breakpoint.
A request reads the longest previously written prefix it repeats (looking back up to 20
blocks from each breakpoint) and writes everything up to its last breakpoint, provided that
prefix reaches the minimum cacheable length. Tokens are counted as ~4 characters each.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

LOOKBACK_BLOCKS = 20
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


def count_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4)) if text else 0


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Block:
    key: str  # canonical text of the block without its cache_control, tagged with its place
    tokens: int
    ttl: str | None  # set when the block carries cache_control


def _block(place: str, raw: Mapping[str, Any]) -> Block:
    body = {k: v for k, v in raw.items() if k != "cache_control"}
    marker = raw.get("cache_control")
    ttl = str(marker.get("ttl", "5m")) if isinstance(marker, Mapping) else None
    text = _canonical(body)
    return Block(f"{place}|{text}", count_tokens(text), ttl)


def request_blocks(body: Mapping[str, Any]) -> list[Block]:
    """The request flattened into blocks, in the order the provider caches them."""
    blocks = [_block("tool", tool) for tool in body.get("tools") or []]
    system = body.get("system")
    if isinstance(system, str):
        blocks.append(_block("system", {"type": "text", "text": system}))
    elif isinstance(system, list):
        blocks.extend(_block("system", b) for b in system)
    for message in body.get("messages") or []:
        role = str(message.get("role"))
        content = message.get("content")
        if isinstance(content, str):
            blocks.append(_block(role, {"type": "text", "text": content}))
        elif isinstance(content, list):
            blocks.extend(_block(role, b) for b in content if isinstance(b, Mapping))
    return blocks


@dataclass(frozen=True)
class CacheUsage:
    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int


class PromptCache:
    """Written prefixes by cumulative hash, each with its expiry time."""

    def __init__(self, clock: Callable[[], float], min_tokens: int = 1024) -> None:
        self._clock = clock
        self._min = min_tokens
        self._entries: dict[str, float] = {}

    def clear(self) -> None:
        self._entries.clear()

    def account(self, body: Mapping[str, Any], *, commit: bool = True) -> CacheUsage:
        """Usage of ``body``; with ``commit=False`` the cache is left as it was (a refused
        request writes and refreshes nothing)."""
        blocks = request_blocks(body)
        now = self._clock()
        hashes: list[str] = []
        cumulative: list[int] = []
        digest = hashlib.sha256()
        total = 0
        for block in blocks:
            digest.update(block.key.encode())
            digest.update(b"\x00")
            hashes.append(digest.copy().hexdigest())
            total += block.tokens
            cumulative.append(total)
        breakpoints = [i for i, b in enumerate(blocks) if b.ttl is not None]

        read_upto = -1
        for bp in breakpoints:
            for j in range(bp, max(-1, bp - LOOKBACK_BLOCKS), -1):
                if self._entries.get(hashes[j], -1.0) > now and j > read_upto:
                    read_upto = j
                    break
        read = cumulative[read_upto] if read_upto >= 0 else 0
        written = 0
        updates: dict[str, float] = {}
        for bp in breakpoints:
            if cumulative[bp] < self._min:
                continue  # below the minimum nothing is cached, silently
            updates[hashes[bp]] = now + TTL_SECONDS.get(blocks[bp].ttl or "5m", 300.0)
            written = max(written, cumulative[bp] - read)
        if read_upto >= 0:  # a hit refreshes the entry's lifetime
            ttl_name = blocks[read_upto].ttl or "5m"
            updates[hashes[read_upto]] = now + TTL_SECONDS.get(ttl_name, 300.0)
        if commit:
            self._entries.update(updates)
        return CacheUsage(total - read - written, written, read)
