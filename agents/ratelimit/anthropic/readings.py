"""What the provider's answer says about the key's budget: rate-limit headers and retry-after."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

_RESOURCES = ("requests", "input-tokens", "output-tokens")


@dataclass(frozen=True)
class Reading:
    """Per resource (``requests``, ``input-tokens``, ``output-tokens``) what the headers said."""

    limit: dict[str, int] = field(default_factory=dict)
    remaining: dict[str, int] = field(default_factory=dict)
    reset: dict[str, float] = field(default_factory=dict)  # epoch seconds
    retry_after: float | None = None  # seconds


NO_READING = Reading()


def read_headers(headers: Mapping[str, str]) -> Reading:
    """``anthropic-ratelimit-*-{limit,remaining,reset}`` and ``retry-after(-ms)``; unreadable
    values are skipped, never guessed."""
    reading = Reading(retry_after=retry_after(headers))
    for resource in _RESOURCES:
        prefix = f"anthropic-ratelimit-{resource}"
        limit = _int(headers.get(f"{prefix}-limit"))
        remaining = _int(headers.get(f"{prefix}-remaining"))
        reset = _time(headers.get(f"{prefix}-reset"))
        if limit is not None:
            reading.limit[resource] = limit
        if remaining is not None:
            reading.remaining[resource] = remaining
        if reset is not None:
            reading.reset[resource] = reset
    return reading


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the provider asked us to wait, from ``retry-after-ms`` or ``retry-after``."""
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(header)
        if raw is None:
            continue
        try:
            return max(0.0, float(raw) * scale)
        except ValueError:
            continue
    return None


def _int(raw: str | None) -> int | None:
    if raw is None:
        return None
    try:
        return int(float(raw))
    except ValueError:
        return None


def _time(raw: str | None) -> float | None:
    if not raw:
        return None
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
