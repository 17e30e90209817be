"""Per-key rate limits the way the provider applies them, for the scripted model.

Each API key has three token buckets (requests, input tokens, output tokens per minute) that
refill continuously at ``limit / 60 s`` up to ``limit``. A request is admitted when every bucket
holds what it costs: one request, its input tokens (uncached input plus cache writes; cache
reads only when ``cache_reads_count``) and its ``max_tokens`` of output, which is settled down to
the real output once the answer is known. A refused request costs nothing and gets HTTP 429
with ``retry-after`` (whole seconds, rounded up). Every answer carries the
``anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,reset}`` headers,
``reset`` being the RFC 3339 time at which that bucket would be full again.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

WINDOW_S = 60.0
RESOURCES = ("requests", "input-tokens", "output-tokens")


@dataclass(frozen=True)
class ProviderLimits:
    """One key's per-minute limits (generous defaults, like a high usage tier)."""

    requests_per_minute: int = 4_000
    input_tokens_per_minute: int = 2_000_000
    output_tokens_per_minute: int = 400_000

    def capacity(self, resource: str) -> int:
        return {
            "requests": self.requests_per_minute,
            "input-tokens": self.input_tokens_per_minute,
            "output-tokens": self.output_tokens_per_minute,
        }[resource]


@dataclass
class _Bucket:
    capacity: float
    level: float
    at: float

    def refill(self, now: float) -> None:
        rate = self.capacity / WINDOW_S
        self.level = min(self.capacity, self.level + max(0.0, now - self.at) * rate)
        self.at = max(self.at, now)

    def wait_for(self, amount: float) -> float:
        return max(0.0, (amount - self.level) * WINDOW_S / self.capacity)

    def full_at(self) -> float:
        return self.at + (self.capacity - self.level) * WINDOW_S / self.capacity


@dataclass(frozen=True)
class Refusal:
    resource: str
    retry_after_s: int


@dataclass
class KeyRecord:
    """What one key was admitted and refused, for tests and benchmarks; the admission figures
    are read from the admissions themselves, so they cannot disagree."""

    admissions: list[tuple[float, int]] = field(default_factory=list)  # (time, input tokens)
    admitted_output_tokens: int = 0
    refused: int = 0

    @property
    def first_at(self) -> float | None:
        return self.admissions[0][0] if self.admissions else None

    @property
    def admitted_requests(self) -> int:
        return len(self.admissions)

    @property
    def last_at(self) -> float | None:
        return self.admissions[-1][0] if self.admissions else None

    @property
    def admitted_input_tokens(self) -> int:
        return sum(tokens for _, tokens in self.admissions)


def key_id(api_key: str) -> str:
    """How a key is named in records: a digest, never the key."""
    return hashlib.sha256(api_key.encode()).hexdigest()[:12]


class KeyLimits:
    """The buckets of every key seen; call under the model's lock."""

    def __init__(
        self,
        clock: Callable[[], float],
        default: ProviderLimits | None = None,
        per_key: Mapping[str, ProviderLimits] | None = None,
    ) -> None:
        self._clock = clock
        self.default = default or ProviderLimits()
        self._per_key = {key_id(k): v for k, v in (per_key or {}).items()}
        self._buckets: dict[str, dict[str, _Bucket]] = {}
        self.records: dict[str, KeyRecord] = {}

    def set_limits(self, api_key: str, limits: ProviderLimits) -> None:
        ident = key_id(api_key)
        self._per_key[ident] = limits
        self._buckets.pop(ident, None)

    def record(self, api_key: str) -> KeyRecord:
        return self.records.setdefault(key_id(api_key), KeyRecord())

    def _of(self, ident: str) -> dict[str, _Bucket]:
        buckets = self._buckets.get(ident)
        if buckets is None:
            limits = self._per_key.get(ident, self.default)
            now = self._clock()
            buckets = {
                r: _Bucket(float(limits.capacity(r)), float(limits.capacity(r)), now)
                for r in RESOURCES
            }
            self._buckets[ident] = buckets
        now = self._clock()
        for bucket in buckets.values():
            bucket.refill(now)
        return buckets

    def admit(self, api_key: str, input_tokens: int, max_tokens: int) -> Refusal | None:
        """Take the request's cost, or refuse it (and take nothing)."""
        ident = key_id(api_key)
        buckets = self._of(ident)
        costs = {"requests": 1, "input-tokens": input_tokens, "output-tokens": max_tokens}
        record = self.records.setdefault(ident, KeyRecord())
        waits = {r: buckets[r].wait_for(c) for r, c in costs.items()}
        worst = max(waits, key=lambda r: waits[r])
        if waits[worst] > 0:
            record.refused += 1
            return Refusal(worst, max(1, math.ceil(waits[worst])))
        for resource, amount in costs.items():
            buckets[resource].level -= amount
        record.admissions.append((self._clock(), input_tokens))
        return None

    def settle_output(self, api_key: str, reserved: int, actual: int) -> None:
        """The provider estimates output as ``max_tokens`` and corrects it at the end."""
        ident = key_id(api_key)
        bucket = self._of(ident)["output-tokens"]
        bucket.level = min(bucket.capacity, bucket.level + max(0, reserved - actual))
        self.records.setdefault(ident, KeyRecord()).admitted_output_tokens += actual

    def headers(self, api_key: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for resource, bucket in self._of(key_id(api_key)).items():
            prefix = f"anthropic-ratelimit-{resource}"
            out[f"{prefix}-limit"] = str(int(bucket.capacity))
            out[f"{prefix}-remaining"] = str(max(0, math.floor(bucket.level)))
            out[f"{prefix}-reset"] = _rfc3339(bucket.full_at())
        return out


def _rfc3339(ts: float) -> str:
    return (
        datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )
