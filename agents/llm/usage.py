"""Token usage and cost: one price table, cost per call, cache hit ratio, cache-miss warning.

Prices are USD per million tokens. Cache writes (5-minute TTL) cost 1.25x the input price and
cache reads 0.1x; those multipliers live here and nowhere else.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

log = logging.getLogger(__name__)

CACHE_WRITE_5M: Final = 1.25
CACHE_WRITE_1H: Final = 2.0
CACHE_READ: Final = 0.1
MIN_CACHEABLE_TOKENS: Final = 1024


@dataclass(frozen=True)
class ModelPrice:
    input_per_mtok: float
    output_per_mtok: float

    @property
    def cache_write_per_mtok(self) -> float:
        return self.input_per_mtok * CACHE_WRITE_5M

    @property
    def cache_read_per_mtok(self) -> float:
        return self.input_per_mtok * CACHE_READ


PRICES: Final[Mapping[str, ModelPrice]] = {
    "claude-opus-4-8": ModelPrice(5.0, 25.0),
    "claude-opus-4-7": ModelPrice(5.0, 25.0),
    "claude-opus-4-6": ModelPrice(5.0, 25.0),
    "claude-opus-4-5": ModelPrice(5.0, 25.0),
    "claude-opus-5": ModelPrice(5.0, 25.0),
    "claude-sonnet-4-6": ModelPrice(3.0, 15.0),
    "claude-sonnet-4-5": ModelPrice(3.0, 15.0),
    "claude-haiku-4-5": ModelPrice(1.0, 5.0),
    # The offline scripted model is billed like Sonnet so demo and bench numbers read true.
    "scripted": ModelPrice(3.0, 15.0),
}


class UnknownModelPrice(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def price_for(model: str) -> ModelPrice:
    """The price of ``model``; dated snapshots (``claude-haiku-4-5-20251001``) use their alias."""
    if model in PRICES:
        return PRICES[model]
    for alias in sorted(PRICES, key=len, reverse=True):
        if model.startswith(alias + "-") and model[len(alias) + 1 :].isdigit():
            return PRICES[alias]
    known = ", ".join(sorted(PRICES))
    raise UnknownModelPrice(f"no price for model {model!r}; add it to PRICES (known: {known})")


@dataclass(frozen=True)
class Usage:
    """The provider's usage fields for one call. Total input = the three input counters."""

    input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 0

    @classmethod
    def from_api(cls, raw: Mapping[str, Any] | Any) -> Usage:
        """From a response's ``usage`` (SDK object or dict); missing counters count as zero."""

        def get(name: str) -> int:
            value = raw.get(name) if isinstance(raw, Mapping) else getattr(raw, name, None)
            return int(value or 0)

        return cls(
            get("input_tokens"),
            get("cache_creation_input_tokens"),
            get("cache_read_input_tokens"),
            get("output_tokens"),
        )

    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def total_tokens(self) -> int:
        return self.total_input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
            self.output_tokens + other.output_tokens,
        )

    def as_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "output_tokens": self.output_tokens,
        }


def input_cost(usage: Usage, model: str) -> float:
    """USD billed for the input side (plain, cache write, cache read)."""
    price = price_for(model)
    return (
        usage.input_tokens * price.input_per_mtok
        + usage.cache_creation_input_tokens * price.cache_write_per_mtok
        + usage.cache_read_input_tokens * price.cache_read_per_mtok
    ) / 1_000_000


def cost(usage: Usage, model: str) -> float:
    """USD billed for one call (or a sum of calls on one model)."""
    return input_cost(usage, model) + usage.output_tokens * price_for(model).output_per_mtok / 1e6


def cache_hit_ratio(usage: Usage) -> float:
    """Share of input tokens served from the cache (0.0 when there was no input)."""
    total = usage.total_input_tokens
    return usage.cache_read_input_tokens / total if total else 0.0


def is_cache_miss(
    usage: Usage, prefix_len_tokens: int, *, min_cacheable: int = MIN_CACHEABLE_TOKENS
) -> bool:
    """True (and a logged warning) when a cacheable prompt neither wrote nor read the cache."""
    missed = (
        prefix_len_tokens >= min_cacheable
        and usage.cache_creation_input_tokens == 0
        and usage.cache_read_input_tokens == 0
    )
    if missed:
        log.warning(
            "prompt cache miss: a %d-token prefix neither wrote nor read the cache "
            "(check that the prefix is byte-identical and carries cache_control)",
            prefix_len_tokens,
        )
    return missed
