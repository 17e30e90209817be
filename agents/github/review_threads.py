"""Review threads over GraphQL: REST does not say whether a thread is resolved, nor resolves one.

The two operations :class:`~agents.github.endpoints.GitHubEndpoints` sends for threads (both on
the allow-list of :mod:`agents.github.graphql_policy`), and a thread node read into
:class:`~agents.github.models.ReviewThread`, the shape the tools, the writer and the learning
poll read.
"""

from __future__ import annotations

from agents.github.models import ReviewThread
from agents.json_value import JSONObject, as_object, objects

REVIEW_THREADS = """
query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $after) {
        nodes { id isResolved resolvedBy { login } comments(first: 1) { nodes { databaseId } } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}
"""


RESOLVE_THREAD = """
mutation($thread: ID!) {
  resolveReviewThread(input: {threadId: $thread}) { thread { id isResolved } }
}
"""


def thread_of(node: JSONObject) -> ReviewThread:
    """A ``reviewThreads`` node as ``REVIEW_THREADS`` asks it."""
    by = node.get("resolvedBy")
    first: list[dict[str, int | None]] = []
    for comment in objects(as_object(node.get("comments")).get("nodes")):
        database_id = comment.get("databaseId")
        first.append({"databaseId": database_id if isinstance(database_id, int) else None})
    return {
        "id": str(node.get("id") or ""),
        "isResolved": bool(node.get("isResolved")),
        "resolvedBy": {"login": str(by.get("login") or "")} if isinstance(by, dict) else None,
        "comments": {"nodes": first},
    }
