"""The numbers the LLM throttle works with for one API key. All durations are clock seconds."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class LLMLimits(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    # The provider's buckets refill continuously: `limit` per this many seconds.
    window_s: float = Field(default=60.0, gt=0)
    # Refill assumed between readings, as a share of the published rate; the headers of every
    # answer correct the estimate, so this only covers clock skew between two readings.
    refill_safety: float = Field(default=0.98, gt=0, le=1)
    # Longest pause slept inline; a longer one ends the worker as `paused`.
    max_inline_wait: float = Field(default=60.0, ge=0)
    # 429 answers retried (each after the key's pause) before the worker is paused.
    max_rate_limit_retries: int = Field(default=3, ge=0)
    # A 429 without retry-after pauses the key this long (doubling per strike, capped).
    rate_limit_backoff: float = Field(default=10.0, gt=0)
    # 529 overloaded: the key backs off initial * 2**(strikes-1), capped, times a jitter in
    # [0.5, 1); after this many overloaded answers in a row for one call the worker is paused.
    max_overload_retries: int = Field(default=4, ge=0)
    overload_backoff_initial: float = Field(default=2.0, gt=0)
    overload_backoff_max: float = Field(default=60.0, gt=0)
    # Connection errors and 5xx other than 529: retried with the same backoff, not a key pause.
    max_transient_retries: int = Field(default=2, ge=0)
    # A reservation older than this is assumed lost (its process died) and stops counting.
    inflight_ttl: float = Field(default=900.0, gt=0)
    # How often a waiter re-checks shared state another process may have changed.
    shared_poll_interval: float = Field(default=0.25, gt=0)
