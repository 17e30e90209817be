"""Test knobs, failure rules and the request log kept by SandboxState."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Literal


@dataclass
class Knobs:
    """Behaviours tests switch on; read on every request, so changes apply at once."""

    long_tokens: bool = False
    # 403 is GitHub's usual answer for an exhausted primary limit; 429 also happens.
    primary_limit_status: Literal[403, 429] = 403
    # GitHub sometimes answers a secondary limit with no retry-after header.
    secondary_retry_after: bool = True
    mint_extra_permissions: dict[str, str] = field(default_factory=dict)
    mint_extra_repositories: list[str] = field(default_factory=list)
    latency_s: float = 0.0
    # While set and not yet released, admitted requests wait in flight (deterministic
    # concurrency tests: fill the in-flight slots, then release).
    hold: threading.Event | None = None


@dataclass
class FailureRule:
    route: str | None
    status: int
    remaining: int
    method: str | None = None
    # One exact request path ("/repos/acme/gadgets/pulls"), when not every repository's.
    path: str | None = None


@dataclass(frozen=True)
class RecordedRequest:
    at: float
    login: str | None
    method: str
    route: str
    path: str
    status: int
    is_write: bool
    is_content_creation: bool
    resource: str


@dataclass
class IdentityCounters:
    requests: int = 0
    writes: int = 0
    content_creations: int = 0
    primary_limited: int = 0
    secondary_limited: int = 0
