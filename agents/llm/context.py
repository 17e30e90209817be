"""The context budget of a session: how many input tokens a request may carry, and its tier.

Every request must fit ``window - max output - margin``. The tier, picked by window size, says
what the prompt carries (the skills index or not) and how large a page of tool output may be;
pages are also held to a share of the budget so one tool result can never fill it. Compaction
(stubbing older tool results) starts at ``compact_at`` of the budget and brings the history
back to ``compact_to`` in one step, so it happens rarely and each time moves the cached prefix
only once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Final

# A tool result page may use at most this share of the input budget.
PAGE_SHARE: Final = 0.2


class Tier(StrEnum):
    SMALL = "small"
    MEDIUM = "medium"
    LARGE = "large"


@dataclass(frozen=True)
class TierPolicy:
    """What a session of this tier carries and how large its pages are (characters)."""

    tier: Tier
    skills_index: bool
    # A listing page also stops at ``file_page_chars`` of patches, whichever comes first.
    files_per_page: int
    patch_page_chars: int
    file_page_chars: int
    context_file_chars: int


# Window size (tokens) from which each tier applies, largest first.
TIERS: Final[tuple[tuple[int, TierPolicy], ...]] = (
    (400_000, TierPolicy(Tier.LARGE, True, 60, 12_000, 40_000, 16_000)),
    (100_000, TierPolicy(Tier.MEDIUM, True, 40, 6_000, 20_000, 8_000)),
    (0, TierPolicy(Tier.SMALL, False, 30, 3_000, 8_000, 2_000)),
)


def tier_for(window: int) -> TierPolicy:
    for floor, policy in TIERS:
        if window >= floor:
            return policy
    return TIERS[-1][1]


class ContextFull(Exception):
    """The conversation cannot be brought under the budget (even with every stub in place)."""


@dataclass(frozen=True)
class ContextBudget:
    window: int
    max_output: int
    margin: int
    compact_at: float = 0.8
    compact_to: float = 0.5

    @classmethod
    def for_window(cls, window: int, max_output: int) -> ContextBudget:
        """The budget of a model window with ``max_output`` reserved for the answer."""
        margin = max(256, math.ceil(window * 0.02))
        if window - max_output - margin < window // 4:
            raise ValueError(
                f"max_output_tokens {max_output} leaves less than a quarter of the "
                f"{window}-token window for the prompt; lower the role's max_output_tokens"
            )
        return cls(window, max_output, margin)

    @property
    def limit(self) -> int:
        """Input tokens one request may carry."""
        return self.window - self.max_output - self.margin

    @property
    def high_water(self) -> int:
        return int(self.limit * self.compact_at)

    @property
    def low_water(self) -> int:
        return int(self.limit * self.compact_to)

    def policy(self, chars_per_token: float) -> TierPolicy:
        """The window's tier, its pages held to a share of this budget."""
        base = tier_for(self.window)
        cap = max(500, int(self.limit * PAGE_SHARE * chars_per_token))
        return replace(
            base,
            patch_page_chars=min(base.patch_page_chars, cap),
            file_page_chars=min(base.file_page_chars, cap),
            context_file_chars=min(base.context_file_chars, cap),
        )
