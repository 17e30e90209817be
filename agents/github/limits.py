"""The numbers the throttle enforces for one identity; GitHub's published values by default."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ThrottleLimits(BaseModel):
    """Secondary limits and pacing knobs. All durations are seconds on the throttle's clock."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_concurrency: int = Field(default=100, gt=0)
    rest_points_per_minute: int = Field(default=900, gt=0)
    graphql_points_per_minute: int = Field(default=2000, gt=0)
    content_per_minute: int = Field(default=80, gt=0)
    content_per_hour: int = Field(default=500, gt=0)
    # GitHub counts content on arrival, after our clock saw it leave: widen its windows by this.
    content_window_margin: float = Field(default=5.0, ge=0)
    minute_s: float = Field(default=60.0, gt=0)
    hour_s: float = Field(default=3600.0, gt=0)
    # Fraction of each secondary window's cap that may go out as a burst; the rest is spread so
    # that no window of that length, aligned anywhere, ever holds more than the cap.
    window_burst_fraction: float = Field(default=0.1, ge=0, lt=1)
    read_points: int = Field(default=1, ge=0)
    write_points: int = Field(default=5, ge=0)
    graphql_query_points: int = Field(default=1, ge=0)
    graphql_mutation_points: int = Field(default=5, ge=0)
    # Gap between the end of one mutation and the start of the next (GitHub asks for >= 1 s).
    min_write_interval: float = Field(default=1.0, ge=0)
    # Primary budget kept back for writes: reads stop at this many remaining.
    write_reserve_fraction: float = Field(default=0.02, ge=0, lt=1)
    write_reserve_min: int = Field(default=2, ge=0)
    # Reads that may go out ahead of the paced schedule, so a worker's short burst after a quiet
    # spell is not slowed: max(pace_burst_min, limit * pace_burst_fraction).
    pace_burst_min: float = Field(default=3.0, ge=1)
    pace_burst_fraction: float = Field(default=0.02, ge=0, lt=1)
    # Pacing aims to spend the budget this long before the reset so late requests land in time.
    pace_margin: float = Field(default=2.0, ge=0)
    # A probe after a reset waits this long past the announced reset (resets are whole seconds).
    reset_grace: float = Field(default=1.0, ge=0)
    # Longest pause slept inline; a longer one raises IdentityPaused for the flow to report.
    max_inline_wait: float = Field(default=30.0, ge=0)
    # Pause after a rate-limit answer without retry-after or reset: base * 2**(strikes-1), capped.
    pause_backoff_base: float = Field(default=60.0, ge=60.0)
    pause_backoff_max: float = Field(default=3600.0, gt=0)
    # Rate-limit answers retried inline (each after its pause) before giving up.
    max_rate_limit_retries: int = Field(default=3, ge=0)
    # 5xx / timeout retries (exponential backoff with jitter).
    max_transient_retries: int = Field(default=3, ge=0)
    transient_backoff_initial: float = Field(default=1.0, gt=0)
    transient_backoff_max: float = Field(default=30.0, gt=0)
    # A reservation older than this is assumed lost (its process died) and stops counting.
    inflight_ttl: float = Field(default=600.0, gt=0)
    # How often a waiter re-checks shared state another process may have changed.
    shared_poll_interval: float = Field(default=0.25, gt=0)

    def write_reserve(self, limit: int) -> int:
        return max(self.write_reserve_min, int(limit * self.write_reserve_fraction))
