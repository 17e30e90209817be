"""Test knobs, failure rules and the request log kept by SandboxState."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

# The shapes of installation token GitHub mints: ``classic`` (``ghs_`` and alphanumerics),
# ``long`` (~520 characters with dots) and ``stateless`` (``ghs_<app id>_<JWT>``, ~520 characters
# with ``.``, ``_`` and ``-``, rolled out since April 2026).
TokenFormat = Literal["classic", "ghes", "long", "stateless"]
TOKEN_FORMATS: tuple[TokenFormat, ...] = get_args(TokenFormat)
TOKEN_FORMAT_ENV = "SANDBOX_TOKEN_FORMAT"


def default_token_format() -> TokenFormat:
    """``SANDBOX_TOKEN_FORMAT`` (so a whole test run can mint another shape), else classic."""
    value = os.environ.get(TOKEN_FORMAT_ENV, "classic")
    for known in TOKEN_FORMATS:
        if value == known:
            return known
    raise ValueError(f"{TOKEN_FORMAT_ENV}={value!r}: one of {', '.join(TOKEN_FORMATS)}")


@dataclass
class Rendezvous:
    """Requests to one route wait until ``parties`` of them have arrived (or ``timeout_s``
    passed): two workers then act at the same moment, deterministically."""

    method: str
    route: str
    parties: int = 2
    timeout_s: float = 10.0
    arrived: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    # When set, a request that waited here is answered with this status instead of being carried
    # out: a request held in flight while its client is interrupted (Ctrl-C) never lands, and
    # the test sees exactly what the next run does about it.
    refuse: int | None = None

    def release(self) -> None:
        """End the wait of every request held here now."""
        with self.lock:
            self.parties = 0

    def matches(self, method: str, route: str) -> bool:
        return (method, route) == (self.method, self.route)

    def arrive(self) -> None:
        with self.lock:
            self.arrived += 1

    def complete(self) -> bool:
        with self.lock:
            return self.arrived >= self.parties


@dataclass
class Knobs:
    """Behaviours tests switch on; read on every request, so changes apply at once."""

    token_format: TokenFormat = field(default_factory=default_token_format)
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
    rendezvous: Rendezvous | None = None
    # False: the contents API answers JSON (base64) whatever Accept asks, as a proxy that drops
    # GitHub's media types would; the product must read both answers.
    raw_contents: bool = True
    # Keep each request's JSON body and each answer's body in the request log (tests that check
    # what the product sends, and what the sandbox answers, against GitHub's published schemas).
    keep_bodies: bool = False
    # One file-list response shows patches until they add up to about this many lines; the
    # rows after that come with zero counts and no patch (seen on api.github.com, 2026-11:
    # nothing in the row says so). None: every row in full.
    listing_patch_lines: int | None = 20_000
    # A GraphQL ``pullRequests`` page asking for more than this many runs past GitHub's 10 s
    # and answers 502, its points spent (docs: "Rate limits and query limits for the GraphQL
    # API", timeouts). None: no page times out.
    graphql_listing_times_out_over: int | None = None


@dataclass
class FailureRule:
    route: str | None
    status: int
    remaining: int
    method: str | None = None
    # One exact request path ("/repos/acme/gadgets/pulls"), when not every repository's.
    path: str | None = None
    # GitHub sometimes carries a request out and still answers 5xx: the answer is lost, not the
    # write. Such a rule fires only after the handler succeeded.
    after_handling: bool = False


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
    # Which rate limit refused the request, if one did.
    limited: Literal["primary", "secondary"] | None = None
    # The answer's body (JSON, or a raw file's text), when ``Knobs.keep_bodies`` is on.
    body: object = None
    media_type: str | None = None
    # The request's JSON body (a GraphQL document and its variables), when ``keep_bodies`` is on.
    sent: object = None


@dataclass(frozen=True)
class IdentityCounters:
    """What one login did, counted from the request log (so the two cannot disagree)."""

    requests: int
    writes: int
    content_creations: int
    primary_limited: int
    secondary_limited: int

    @classmethod
    def of(cls, log: Sequence[RecordedRequest]) -> IdentityCounters:
        done = [r for r in log if r.status < 400]
        return cls(
            requests=len(log),
            writes=sum(r.is_write for r in done),
            content_creations=sum(r.is_content_creation for r in done),
            primary_limited=sum(r.limited == "primary" for r in log),
            secondary_limited=sum(r.limited == "secondary" for r in log),
        )
