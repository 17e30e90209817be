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

from agents.github.models import Account, Pull, Review
from agents.json_value import JSONObject, as_object, objects, text_or_none

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

    pulls: list[Pull] = field(default_factory=list)
    # number -> the PR's reviews, oldest first; None where GitHub holds more than were asked.
    reviews: dict[int, list[Review] | None] = field(default_factory=dict)
    default_branch: str | None = None
    default_sha: str | None = None
    # The text of ``.github/swarm.yaml`` at the default branch; None: not there.
    config: str | None = None
    # The file is there but GitHub gives no text of it (a binary file).
    config_binary: bool = False


def actor(node: object) -> Account | None:
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


def _id(value: object) -> int | None:
    """A ``databaseId``: an integer, or None (GitHub's ``null``)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _review(node: JSONObject) -> Review:
    commit = node.get("commit")
    return {
        "id": _id(node.get("databaseId")),
        "user": actor(node.get("author")),
        "body": str(node.get("body") or ""),
        "state": text_or_none(node.get("state")),
        "commit_id": text_or_none(commit.get("oid")) if isinstance(commit, dict) else None,
        "submitted_at": text_or_none(node.get("submittedAt")),
        "html_url": text_or_none(node.get("url")),
    }


def _pull(repo: str, node: JSONObject, number: int) -> Pull:
    head_repo = node.get("headRepository")
    labels = objects(as_object(node.get("labels")).get("nodes"))
    return {
        "id": _id(node.get("databaseId")),
        "number": number,
        "state": "open",
        "title": str(node.get("title") or ""),
        "body": text_or_none(node.get("body")),
        "html_url": text_or_none(node.get("url")),
        "draft": bool(node.get("isDraft")),
        "created_at": text_or_none(node.get("createdAt")),
        "updated_at": text_or_none(node.get("updatedAt")),
        "user": actor(node.get("author")),
        "labels": [{"name": str(lbl.get("name"))} for lbl in labels],
        "head": {
            "sha": str(node["headRefOid"]),
            "ref": text_or_none(node.get("headRefName")),
            # None: the fork the PR came from was deleted, as REST says it.
            "repo": {"full_name": text_or_none(head_repo.get("nameWithOwner"))}
            if isinstance(head_repo, dict)
            else None,
        },
        "base": {
            "sha": text_or_none(node.get("baseRefOid")),
            "ref": text_or_none(node.get("baseRefName")),
            "repo": {"full_name": repo},
        },
    }


def add_page(listing: Listing, repo: str, data: JSONObject) -> tuple[bool, str | None]:
    """Fold one answer's page into ``listing``; (another page follows, its cursor)."""
    repository = data.get("repository")
    if not isinstance(repository, dict):
        raise LookupError(f"GitHub answered no repository {repo}")
    branch = repository.get("defaultBranchRef")
    if isinstance(branch, dict) and listing.default_branch is None:
        listing.default_branch = text_or_none(branch.get("name"))
        target = branch.get("target")
        listing.default_sha = text_or_none(target.get("oid")) if isinstance(target, dict) else None
        blob = repository.get("config")
        if isinstance(blob, dict) and blob.get("__typename") == "Blob":
            listing.config_binary = bool(blob.get("isBinary")) or blob.get("text") is None
            listing.config = None if listing.config_binary else str(blob.get("text"))
    page = as_object(repository.get("pullRequests"))
    for node in objects(page.get("nodes")):
        number = node.get("number")
        if not isinstance(number, (int, float, str)):
            continue
        pull = _pull(repo, node, int(number))
        listing.pulls.append(pull)
        reviews = as_object(node.get("reviews"))
        found = [_review(r) for r in objects(reviews.get("nodes"))]
        total = reviews.get("totalCount")
        whole = (int(total) if isinstance(total, (int, float, str)) else 0) <= len(found)
        listing.reviews[pull["number"]] = found if whole else None
    info = as_object(page.get("pageInfo"))
    cursor = info.get("endCursor")
    return bool(info.get("hasNextPage") and cursor), cursor if isinstance(cursor, str) else None
