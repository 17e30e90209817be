"""A repository's open pull requests in one GraphQL query, with each PR's latest reviews.

Over REST, discovery lists the open PRs (``GET pulls``) and then reads every new PR's reviews
(``GET pulls/{n}/reviews``) for the hidden marker that survives a lost store: one REST point per
PR on the installation's budget, the budget the workers need for files and writes. GraphQL hands
back the same listing with the last reviews of every PR in one request on the separate GraphQL
budget (about one point a page of 50, by GitHub's cost formula), plus ``.github/swarm.yaml`` at
the default branch in the same answer (issue 23: REST points per reviewed PR, and per re-poll of
an unchanged repository).

What comes back is given the shape GitHub's REST answers have (``number``, ``head.sha``,
``user.login``, a review's ``commit_id``...), so discovery, the workers' snapshots and the replies
poll read one vocabulary whichever way it was fetched. One difference is GitHub's, not ours, and
is made good here: GraphQL names a GitHub App's bot ``swarm-bot`` (``__typename`` ``Bot``) where
REST says ``swarm-bot[bot]``. Only an actor GitHub types ``Bot`` gets the suffix back, so a
person who registered the App's slug as a user login is never read as the bot (rule 9: trust
follows authorship).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# A page of open PRs, and how many pages one listing reads (1,000 PRs, as the REST listing did).
PAGE_PULLS = 50
MAX_PAGES = 20
# The newest reviews asked for per PR. The bot's review at the head is among the newest; a PR
# with more reviews than this and none of the bot's among them is asked over REST instead
# (``Listing.reviews`` says None), so nothing is missed, only read the older way.
LAST_REVIEWS = 25
MAX_LABELS = 100

# What is asked of a file named by ``object(expression: "REF:path")``.
BLOB_FIELDS = "__typename ... on Blob { text isBinary }"

# Written out whole (the numbers are the constants above, a test holds them equal), so the
# document checked against GitHub's schema is the one sent.
PULLS_QUERY = """
query($owner: String!, $name: String!, $after: String, $config: String!) {
  repository(owner: $owner, name: $name) {
    defaultBranchRef { name target { oid } }
    config: object(expression: $config) { __typename ... on Blob { text isBinary } }
    pullRequests(states: OPEN, first: 50, after: $after,
                 orderBy: {field: CREATED_AT, direction: DESC}) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes {
        databaseId number title body url isDraft createdAt updatedAt
        headRefName headRefOid baseRefName baseRefOid
        headRepository { nameWithOwner }
        author { __typename login }
        labels(first: 100) { totalCount nodes { name } }
        reviews(last: 25) {
          totalCount
          nodes {
            databaseId body state submittedAt url
            author { __typename login }
            commit { oid }
          }
        }
      }
    }
  }
}
"""


# A page GitHub stops at its 10 s limit (HTTP 502/504, or 200 with a "timeout" error) is asked
# again with fewer PRs, never the same again: a timed-out query costs its points and more for
# the next hour (docs: "Rate limits and query limits for the GraphQL API", timeouts).
PAGE_SIZES = (50, 25, 10)


def pulls_query(first: int) -> str:
    """:data:`PULLS_QUERY` asking ``first`` PRs a page (one of :data:`PAGE_SIZES`)."""
    return PULLS_QUERY.replace("first: 50,", f"first: {int(first)},", 1)


def timed_out(status: int, message: str) -> bool:
    """Whether GitHub's answer says the query ran past its time: a 502 or 504, or a 200 whose
    error says so ("Something went wrong while executing your query. This may be the result
    of a timeout...")."""
    return status in (502, 504) or (status == 200 and "timeout" in message.lower())


@dataclass
class Listing:
    """One repository's open PRs as REST shapes, and what the same answer said beside them."""

    pulls: list[dict[str, Any]] = field(default_factory=list)
    # number -> the PR's reviews, oldest first; None where GitHub holds more than were asked.
    reviews: dict[int, list[dict[str, Any]] | None] = field(default_factory=dict)
    default_branch: str | None = None
    default_sha: str | None = None
    # The text of ``.github/swarm.yaml`` at the default branch; None: not there.
    config: str | None = None
    # The file is there but GitHub gives no text of it (a binary file).
    config_binary: bool = False


def actor(node: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A GraphQL actor as REST's ``user``: a ``Bot`` gets its ``[bot]`` suffix back."""
    if not isinstance(node, Mapping):
        return None  # a deleted account ("ghost"): no author
    login = str(node.get("login") or "")
    kind = str(node.get("__typename") or "User")
    if kind == "Bot" and login and not login.endswith("[bot]"):
        login = f"{login}[bot]"
    return {"login": login, "type": "Bot" if kind == "Bot" else kind}


def blob_text(node: object) -> str | None:
    """A file's text from ``object(expression: ...)``: None when it is not there, and when it is
    no text GitHub gives (a binary file, or a folder), as it is for the swarm."""
    if not isinstance(node, Mapping) or node.get("__typename") != "Blob" or node.get("isBinary"):
        return None
    text = node.get("text")
    return text if isinstance(text, str) else None


def _review(node: Mapping[str, Any]) -> dict[str, Any]:
    commit = node.get("commit")
    return {
        "id": node.get("databaseId"),
        "user": actor(node.get("author")),
        "body": str(node.get("body") or ""),
        "state": node.get("state"),
        "commit_id": commit.get("oid") if isinstance(commit, Mapping) else None,
        "submitted_at": node.get("submittedAt"),
        "html_url": node.get("url"),
    }


def _pull(repo: str, node: Mapping[str, Any]) -> dict[str, Any]:
    head_repo = node.get("headRepository")
    labels = (node.get("labels") or {}).get("nodes") or []
    return {
        "id": node.get("databaseId"),
        "number": int(node["number"]),
        "state": "open",
        "title": str(node.get("title") or ""),
        "body": node.get("body"),
        "html_url": node.get("url"),
        "draft": bool(node.get("isDraft")),
        "created_at": node.get("createdAt"),
        "updated_at": node.get("updatedAt"),
        "user": actor(node.get("author")),
        "labels": [{"name": str(lbl.get("name"))} for lbl in labels if isinstance(lbl, Mapping)],
        "head": {
            "sha": str(node["headRefOid"]),
            "ref": node.get("headRefName"),
            # None: the fork the PR came from was deleted, as REST says it.
            "repo": {"full_name": head_repo.get("nameWithOwner")}
            if isinstance(head_repo, Mapping)
            else None,
        },
        "base": {
            "sha": node.get("baseRefOid"),
            "ref": node.get("baseRefName"),
            "repo": {"full_name": repo},
        },
    }


def add_page(listing: Listing, repo: str, data: Mapping[str, Any]) -> tuple[bool, str | None]:
    """Fold one answer's page into ``listing``; (another page follows, its cursor)."""
    repository = data.get("repository")
    if not isinstance(repository, Mapping):
        raise LookupError(f"GitHub answered no repository {repo}")
    branch = repository.get("defaultBranchRef")
    if isinstance(branch, Mapping) and listing.default_branch is None:
        listing.default_branch = branch.get("name")
        target = branch.get("target")
        listing.default_sha = target.get("oid") if isinstance(target, Mapping) else None
        blob = repository.get("config")
        if isinstance(blob, Mapping) and blob.get("__typename") == "Blob":
            listing.config_binary = bool(blob.get("isBinary")) or blob.get("text") is None
            listing.config = None if listing.config_binary else str(blob.get("text"))
    page = repository.get("pullRequests") or {}
    for node in page.get("nodes") or ():
        if not isinstance(node, Mapping) or node.get("number") is None:
            continue
        pull = _pull(repo, node)
        listing.pulls.append(pull)
        reviews = node.get("reviews") or {}
        found = [_review(r) for r in reviews.get("nodes") or () if isinstance(r, Mapping)]
        whole = int(reviews.get("totalCount") or 0) <= len(found)
        listing.reviews[pull["number"]] = found if whole else None
    info = page.get("pageInfo") or {}
    cursor = info.get("endCursor")
    return bool(info.get("hasNextPage") and cursor), cursor if isinstance(cursor, str) else None
