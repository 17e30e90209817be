"""The numbers the throttle enforces for one identity; GitHub's published values by default."""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
)

Fraction = Annotated[float, Field(ge=0, lt=1)]


class ThrottleLimits(BaseModel):
    """Secondary limits and pacing knobs. All durations are seconds on the throttle's clock."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_concurrency: PositiveInt = 100
    rest_points_per_minute: PositiveInt = 900
    graphql_points_per_minute: PositiveInt = 2000
    content_per_minute: PositiveInt = 80
    content_per_hour: PositiveInt = 500
    # GitHub counts content on arrival, after our clock saw it leave: widen its windows by this.
    content_window_margin: NonNegativeFloat = 5.0
    # The same for the point windows: a request goes out a moment after its grant, so a window of
    # arrivals can reach past one of grants; spacing grants over a window this much longer keeps
    # any window GitHub may count within the cap (measured: 901-903 of 900 sent without it).
    points_window_margin: NonNegativeFloat = 0.5
    minute_s: PositiveFloat = 60.0
    hour_s: PositiveFloat = 3600.0
    # Fraction of each secondary window's cap that may go out as a burst; the rest is spread so
    # that no window of that length, aligned anywhere, ever holds more than the cap.
    window_burst_fraction: Fraction = 0.1
    read_points: NonNegativeInt = 1
    write_points: NonNegativeInt = 5
    graphql_query_points: NonNegativeInt = 1
    graphql_mutation_points: NonNegativeInt = 5
    # Gap between the end of one mutation and the start of the next (GitHub asks for >= 1 s).
    min_write_interval: NonNegativeFloat = 1.0
    # Primary budget kept back for writes: reads stop at this many remaining.
    write_reserve_fraction: Fraction = 0.02
    write_reserve_min: NonNegativeInt = 2
    # Reads that may go out ahead of the paced schedule, so a worker's short burst after a quiet
    # spell is not slowed: max(pace_burst_min, limit * pace_burst_fraction).
    pace_burst_min: float = Field(default=3.0, ge=1)
    pace_burst_fraction: Fraction = 0.02
    # Pacing aims to spend the budget this long before the reset so late requests land in time.
    pace_margin: NonNegativeFloat = 2.0
    # A probe after a reset waits this long past the announced reset (resets are whole seconds).
    reset_grace: NonNegativeFloat = 1.0
    # Longest pause slept inline; a longer one raises IdentityPaused for the flow to report.
    max_inline_wait: NonNegativeFloat = 30.0
    # Pause after a rate-limit answer without retry-after or reset: base * 2**(strikes-1), capped.
    pause_backoff_base: float = Field(default=60.0, ge=60.0)
    pause_backoff_max: PositiveFloat = 3600.0
    # Rate-limit answers retried inline (each after its pause) before giving up.
    max_rate_limit_retries: NonNegativeInt = 3
    # 5xx / timeout retries (exponential backoff with jitter).
    max_transient_retries: NonNegativeInt = 3
    transient_backoff_initial: PositiveFloat = 1.0
    transient_backoff_max: PositiveFloat = 30.0
    # A reservation older than this is assumed lost (its process died) and stops counting.
    inflight_ttl: PositiveFloat = 600.0
    # How often a waiter re-checks shared state another process may have changed.
    shared_poll_interval: PositiveFloat = 0.25

    def write_reserve(self, limit: int) -> int:
        return max(self.write_reserve_min, int(limit * self.write_reserve_fraction))
