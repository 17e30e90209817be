"""GitHub layer: per-identity gateway over githubkit, throttle and buckets, REST-first policy.

The gateway imports githubkit (slow); it loads on first use of ``GitHubGateway``.

- ``branches.py``: A writer's branch and its throwaway copy: read a branch's head, create the
  writer's own branch (again after a crash: the same branch, never a second), and fetch a commit's
  files into a directory by code, so the model works on a copy and never holds the token that
  fetched it
- ``commits.py``: A writer's commit: GraphQL ``createCommitOnBranch``, the one way it commits
- ``committed.py``: Files read at a commit: the same text whoever reads it next, so read from
  GitHub once
- ``drafts.py``: A writer's pull request: one draft per branch, found again after a crash, never a
  second; and its comments on the issue it works on
- ``endpoints.py``: What the tools call: typed helpers over :meth:``GitHubGateway.request``, one per
  REST route
- ``errors.py``: Errors the gateway raises
- ``gateway.py``: The only path from workers to GitHub: a gateway per identity (views per worker)
  over one transport, sending the identity's own token through the identity's throttle
- ``graphql_policy.py``: REST first: the few GraphQL operations the swarm may send, checked before
  anything goes out
- ``identity_calls.py``: The identity layer's GitHub calls (verifying, revoking a token), through
  the throttle of the identity they are made as
- ``issues.py``: What starts a writer: open issues carrying a label, and whether the person who
  added it may write to the repository
- ``models.py``: GitHub's REST resources as the swarm reads them: one TypedDict each, in GitHub's
  field names
- ``outbound.py``: What leaves for GitHub: every body the bot posts, made safe to show under the
  bot's name
- ``pull_listing.py``: A repository's open pull requests in one GraphQL query, with each PR's
  latest reviews
- ``pull_snapshots.py``: What discovery read of a pull request at its head SHA, handed to the
  workers that review it
- ``paths.py``: Repository paths and names as URL segments that cannot leave their route: traversal
  in any encoding refused, each segment quoted
- ``records.py``: One GitHub call as the audit log sees it: who, what route, what it cost, what came
  back
- ``review_threads.py``: Review threads over GraphQL: REST does not say whether a thread is
  resolved, nor resolves one
- ``responses.py``: Reading GitHub's answers: error messages, GraphQL rate limiting, exact GraphQL
  cost
- ``throttled_client.py``: The one request path from workers to GitHub: throttle, transport,
  retries, audit record
- ``writes.py``: Per-run caps on the bot's writes: how many of each operation one run may make on
  one pull request, and how many writes in all
- ``turn.py``: One request's turns on its identity's budget: leave to send, the answer settled, a
  rate-limit answer retried after its pause or reported
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.github.errors import (
    GitHubApiError,
    GraphQLNotAllowed,
    IdentityPaused,
    TokenRefused,
)
from agents.github.graphql_policy import check_graphql
from agents.github.records import GitHubCallRecord
from agents.ratelimit import Permit
from agents.ratelimit.clock import Clock, ScaledClock, SystemClock
from agents.ratelimit.github.limits import ThrottleLimits
from agents.ratelimit.github.readings import Answer
from agents.ratelimit.github.requests import RequestSpec, classify_graphql, classify_rest
from agents.ratelimit.github.snapshot import IdentitySnapshot, ResourceBudget
from agents.ratelimit.github.throttle import BudgetBackend, IdentityThrottle
from agents.transport import GitHubUnreachable

if TYPE_CHECKING:
    from agents.github.gateway import GitHubGateway

__all__ = [
    "Answer",
    "BudgetBackend",
    "Clock",
    "GitHubApiError",
    "GitHubCallRecord",
    "GitHubGateway",
    "GitHubUnreachable",
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
    "TokenRefused",
    "check_graphql",
    "classify_graphql",
    "classify_rest",
]


def __getattr__(name: str) -> type:
    if name == "GitHubGateway":
        from agents.github.gateway import GitHubGateway

        return GitHubGateway
    raise AttributeError(f"module 'agents.github' has no attribute {name!r}")
