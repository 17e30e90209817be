"""A writer's commit: GraphQL ``createCommitOnBranch``, the one way it commits.

GitHub signs a commit made this way as the App and shows it verified (commits made through the
REST git-data API are unsigned: anthropics/claude-code-action#1511), and the commit is made only
if the branch still points to ``expectedHeadOid``, so a run that lost a race (or a person who
pushed) is never overwritten: GitHub answers ``STALE_DATA``, raised here as :class:`StaleHead`.

What leaves is what every write passes: file texts and the message are redacted (a token the
model copied into a file is not committed), the message's body is sanitised by the request path
and its headline here; the mutation is allow-listed (``graphql_policy``), throttled, audited and
counted against the run's write caps.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from agents.github.endpoints import GitHubEndpoints
from agents.github.errors import GitHubApiError
from agents.github.outbound import sanitise_body
from agents.github.paths import repo_name, repo_path
from agents.json_value import as_object
from agents.redact import redact

CREATE_COMMIT = """
mutation($input: CreateCommitOnBranchInput!) {
  createCommitOnBranch(input: $input) {
    commit { oid url }
  }
}
"""
# GitHub's words when the branch moved (planetscale/ghcommit#153 keys its retry on them).
_STALE = "Expected branch to point to"


class StaleHead(GitHubApiError):
    """The branch no longer points to the expected head: nothing was committed."""


@dataclass(frozen=True)
class CommitMade:
    """The new commit on ``branch``: now the branch's head."""

    branch: str
    oid: str
    url: str


def _contents(text: str) -> str:
    """A file's text as the mutation takes it: redacted, then base64 (sent verbatim)."""
    return base64.b64encode(redact(text).encode()).decode("ascii")


async def commit_on_branch(
    gateway: GitHubEndpoints,
    repo: str,
    branch: str,
    expected_head: str,
    headline: str,
    body: str = "",
    *,
    additions: Mapping[str, str] | None = None,
    deletions: Collection[str] = (),
) -> CommitMade:
    """Commit ``additions`` (path -> new text) and ``deletions`` on ``branch`` if its head is
    ``expected_head``; raises :class:`StaleHead` if it is not. Paths are checked like every
    repository path (no ``..``, absolute or encoded traversal).

    Each file's text is redacted and base64-encoded here, and goes into the request after the
    request path's redaction (``verbatim``): that redaction takes any long base64 run for a
    secret, so a file sent through it would be committed as ``[REDACTED:base64]``."""
    changes = dict(additions or {})
    for path in [*changes, *deletions]:
        repo_path(path)  # raises UnsafePath
    first_line = sanitise_body(redact(headline)).splitlines() or [""]
    tag = secrets.token_hex(4)
    verbatim = {f"file.{i}.{tag}": _contents(changes[p]) for i, p in enumerate(sorted(changes))}
    placeholders = iter(verbatim)
    file_changes = {
        "additions": [{"path": p, "contents": next(placeholders)} for p in sorted(changes)],
        "deletions": [{"path": p} for p in sorted(deletions)],
    }
    variables = {
        "input": {
            "branch": {"repositoryNameWithOwner": repo_name(repo), "branchName": branch},
            "message": {"headline": first_line[0], "body": body},
            "fileChanges": file_changes,
            "expectedHeadOid": expected_head,
        }
    }
    try:
        # Not retried: a commit that was made but whose answer was lost would be made twice
        # (a retry finds the head moved, a StaleHead the caller settles by reading the head).
        data = await gateway.graphql(CREATE_COMMIT, variables, verbatim=verbatim)
    except GitHubApiError as exc:
        if _STALE in exc.message:
            raise StaleHead(exc.status, exc.method, exc.route, exc.message) from None
        raise
    commit = as_object(as_object(data.get("createCommitOnBranch")).get("commit"))
    if not commit.get("oid"):
        raise GitHubApiError(200, "POST", "/graphql", "createCommitOnBranch returned no commit")
    return CommitMade(branch, str(commit["oid"]), str(commit.get("url") or ""))
