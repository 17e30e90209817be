"""Token estimates before a call: characters of the request over a per-model ratio, calibrated
from each answer's ``usage`` (all three input counters), so estimates track the real tokenizer.

The ratio starts low (more tokens per character than prose needs, as code does) and then keeps
the smallest of the last few observed ratios: an estimate may run high, rarely low.
"""

from __future__ import annotations

import json
import math
import threading
from collections import deque
from collections.abc import Mapping
from typing import Final

from agents.ratelimit.per_key import PerKey

PRIOR_CHARS_PER_TOKEN: Final = 3.0
# Observations kept per model; the smallest ratio among them is used.
WINDOW: Final = 16
_PARTS: Final = ("tools", "system", "messages")


def request_chars(request: Mapping[str, object]) -> int:
    """Characters of what the provider tokenizes: tools, system and messages as JSON."""
    return sum(
        len(json.dumps(request[part], ensure_ascii=False, separators=(",", ":")))
        for part in _PARTS
        if request.get(part)
    )


class Calibration:
    """Characters per token of one model, learned from its answers."""

    def __init__(self, prior: float = PRIOR_CHARS_PER_TOKEN) -> None:
        if prior <= 0:
            raise ValueError("the prior characters-per-token ratio must be > 0")
        self._prior = prior
        self._seen: deque[float] = deque(maxlen=WINDOW)
        self._lock = threading.Lock()

    @property
    def chars_per_token(self) -> float:
        with self._lock:
            return min(self._seen) if self._seen else self._prior

    @property
    def observations(self) -> int:
        return len(self._seen)

    def tokens(self, chars: int) -> int:
        return math.ceil(chars / self.chars_per_token)

    def estimate(self, request: Mapping[str, object]) -> int:
        return self.tokens(request_chars(request))

    def observe(self, chars: int, input_tokens: int) -> None:
        """Fold in one answer: ``chars`` sent, ``input_tokens`` the provider counted."""
        if chars > 0 and input_tokens > 0:
            with self._lock:
                self._seen.append(chars / input_tokens)


class Calibrations(PerKey[str, Calibration]):
    """One :class:`Calibration` per model id (``calibrations[model]``), shared by every worker
    of a process."""

    def __init__(self, prior: float = PRIOR_CHARS_PER_TOKEN) -> None:
        super().__init__(lambda _model: Calibration(prior))
