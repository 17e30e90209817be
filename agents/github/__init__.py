"""GitHub layer: per-identity gateway over githubkit, throttle and buckets, REST-first policy.

The gateway imports githubkit (slow); it loads on first use of ``GitHubGateway``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agents.github.clock import Clock, ScaledClock, SystemClock
from agents.github.errors import (
    GitHubApiError,
    GitHubUnavailable,
    GraphQLNotAllowed,
    IdentityPaused,
)
from agents.github.graphql_policy import check_graphql
from agents.github.limits import ThrottleLimits
from agents.github.records import GitHubCallRecord
from agents.github.requests import RequestSpec, classify_graphql, classify_rest
from agents.github.snapshot import IdentitySnapshot, ResourceBudget
from agents.github.throttle import BudgetBackend, IdentityThrottle, Permit

if TYPE_CHECKING:
    from agents.github.gateway import GitHubGateway

__all__ = [
    "BudgetBackend",
    "Clock",
    "GitHubApiError",
    "GitHubCallRecord",
    "GitHubGateway",
    "GitHubUnavailable",
    "GraphQLNotAllowed",
    "IdentityPaused",
    "IdentitySnapshot",
    "IdentityThrottle",
    "Permit",
    "RequestSpec",
    "ResourceBudget",
    "ScaledClock",
    "SystemClock",
    "ThrottleLimits",
    "check_graphql",
    "classify_graphql",
    "classify_rest",
]


def __getattr__(name: str) -> Any:
    if name == "GitHubGateway":
        from agents.github.gateway import GitHubGateway

        return GitHubGateway
    raise AttributeError(f"module 'agents.github' has no attribute {name!r}")
