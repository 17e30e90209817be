"""Test doubles at the edges only: a manual clock and GitHub-shaped responses for respx."""

from __future__ import annotations

import asyncio

import httpx

BASE = "https://ghe.test/api/v3"
GRAPHQL = "https://ghe.test/api/graphql"  # GitHub Enterprise puts GraphQL beside the REST base
BOT = "swarm-reviewer[bot]"


class ManualClock:
    """Time moves only when someone sleeps: sleeping jumps the clock, so tests never wait."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.t = start
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += max(0.0, seconds)
        await asyncio.sleep(0)


def rl_headers(
    remaining: int, *, limit: int = 5000, reset: float, resource: str = "core"
) -> dict[str, str]:
    return {
        "x-ratelimit-limit": str(limit),
        "x-ratelimit-remaining": str(remaining),
        "x-ratelimit-used": str(limit - remaining),
        "x-ratelimit-reset": str(int(reset)),
        "x-ratelimit-resource": resource,
    }


def ok(json: object, *, remaining: int = 4000, reset: float = 1_800_003_600.0) -> httpx.Response:
    return httpx.Response(200, json=json, headers=rl_headers(remaining, reset=reset))
