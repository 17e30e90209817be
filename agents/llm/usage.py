"""Token usage and cost: cost and billed tokens per call from the model registry, cache hit
ratio, cache misses.

Prices come from :mod:`agents.llm.models` (USD per million tokens, cache write and read prices
included); this module only multiplies.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from agents.llm.models import DEFAULT_REGISTRY, ModelSpec

log = logging.getLogger(__name__)

MIN_CACHEABLE_TOKENS: Final = 1024


@dataclass(frozen=True)
class Usage:
    """The provider's usage fields for one call. Total input = the three input counters.

    ``cache_creation_1h_input_tokens`` is the part of the cache writes made with the 1-hour
    lifetime (billed higher); the rest of ``cache_creation_input_tokens`` is 5-minute writes.
    """

    input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_1h_input_tokens: int = 0

    @classmethod
    def from_api(cls, raw: object) -> Usage:
        """From a response's ``usage`` (SDK object or dict); missing counters count as zero."""

        def get(source: object, name: str) -> object:
            return source.get(name) if isinstance(source, Mapping) else getattr(source, name, None)

        def number(value: object) -> int:
            if not value:
                return 0
            if isinstance(value, (int, float, str)):
                return int(value)
            raise TypeError(f"a token count is a number, not {type(value).__name__}")

        def count(name: str) -> int:
            return number(get(raw, name))

        split = get(raw, "cache_creation")
        hour = number(get(split, "ephemeral_1h_input_tokens")) if split is not None else 0
        return cls(
            count("input_tokens"),
            count("cache_creation_input_tokens"),
            count("cache_read_input_tokens"),
            count("output_tokens"),
            hour,
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
            self.cache_creation_1h_input_tokens + other.cache_creation_1h_input_tokens,
        )

    def as_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


def _spec(model: str | ModelSpec) -> ModelSpec:
    return model if isinstance(model, ModelSpec) else DEFAULT_REGISTRY.spec(model)


def input_cost(usage: Usage, model: str | ModelSpec) -> float:
    """USD billed for the input side (plain, cache writes by lifetime, cache reads)."""
    spec = _spec(model)
    hour = min(usage.cache_creation_1h_input_tokens, usage.cache_creation_input_tokens)
    return (
        usage.input_tokens * spec.input_per_mtok
        + (usage.cache_creation_input_tokens - hour) * spec.write_5m
        + hour * spec.write_1h
        + usage.cache_read_input_tokens * spec.read
    ) / 1_000_000


def billed_tokens(usage: Usage, model: str | ModelSpec) -> int:
    """The call's tokens weighed as the provider bills them: input and output as they are,
    cache writes and reads at their price over the input price (on Claude 1.25x for a 5-minute
    write, 2x for a 1-hour one, 0.1x for a read). What token budgets count: a long session that
    rereads its cached history costs a tenth of what the raw counters say."""
    spec = _spec(model)
    if spec.input_per_mtok <= 0:  # a free model: the raw counters are all there is
        return usage.total_tokens
    hour = min(usage.cache_creation_1h_input_tokens, usage.cache_creation_input_tokens)
    weighed = (
        (usage.cache_creation_input_tokens - hour) * spec.write_5m
        + hour * spec.write_1h
        + usage.cache_read_input_tokens * spec.read
    ) / spec.input_per_mtok
    return usage.input_tokens + usage.output_tokens + round(weighed)


def cost(usage: Usage, model: str | ModelSpec) -> float:
    """USD billed for one call (or a sum of calls on one model).

    ``model`` is a spec from the run's registry, or an id looked up in the built-in one.
    """
    return input_cost(usage, model) + usage.output_tokens * _spec(model).output_per_mtok / 1e6


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
