"""A writer's pull request: one draft per branch, found again after a crash, never a second; and
its comments on the issue it works on.

GitHub keeps one open pull request per head and base: a second is refused with 422 "A pull
request already exists for owner:branch." (vsoch/pull-request-action#86), and ``GET .../pulls?
head=owner:branch&state=open`` finds the one there is (docs.github.com/rest/pulls/pulls
#list-pull-requests). So the open PR is looked up first, created only when there is none, and
looked up again when creating loses a race. Title and body leave through the outbound sanitiser
(the body by the request path, the title here) like every text the bot posts.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from agents.github.endpoints import GitHubEndpoints
from agents.github.errors import GitHubApiError
from agents.github.models import Pull
from agents.github.outbound import sanitise_body
from agents.github.paths import repo_name
from agents.redact import redact


@dataclass(frozen=True)
class Drafted:
    """What :func:`open_draft_pull` answers: the writer's open pull request, and whether this
    call opened it (False: a run before did, or a run that raced this one)."""

    pull: Pull
    opened: bool


@dataclass(frozen=True)
class PostedComment:
    id: int
    url: str


async def find_open_pull(gateway: GitHubEndpoints, repo: str, branch: str) -> Pull | None:
    """The open pull request whose head is ``branch`` of ``repo``'s owner, if there is one."""
    owner = repo_name(repo).split("/", 1)[0]
    response = await gateway.request(
        "GET",
        f"/repos/{repo_name(repo)}/pulls",
        params={"head": f"{owner}:{branch}", "state": "open", "per_page": 10},
    )
    found: object = response.json()
    if not isinstance(found, list) or not found:
        return None
    first: Pull = found[0]
    return first


async def open_draft_pull(
    gateway: GitHubEndpoints, repo: str, branch: str, base: str, title: str, body: str
) -> Drafted:
    """The draft pull request of ``branch`` into ``base``: the open one if there is one (a run
    before opened it), else a new draft. Safe to call again: it never opens a second."""
    existing = await find_open_pull(gateway, repo, branch)
    if existing is not None:
        return Drafted(existing, opened=False)
    payload = {
        "title": sanitise_body(redact(title)).replace("\n", " ").strip(),
        "head": branch,
        "base": base,
        "body": body,
        "draft": True,
    }
    try:
        response = await gateway.request("POST", f"/repos/{repo_name(repo)}/pulls", json=payload)
    except GitHubApiError as exc:
        # GitHub's message is "Validation Failed" whatever failed (the reason is in its
        # ``errors``): a PR another run opened meanwhile is found, anything else raised.
        if exc.status != 422:
            raise
        found = await find_open_pull(gateway, repo, branch)
        if found is None:
            raise
        return Drafted(found, opened=False)
    created: Pull = response.json()
    return Drafted(created, opened=True)


async def comment_on_issue(
    gateway: GitHubEndpoints,
    repo: str,
    number: int,
    body: str,
    *,
    mentions: Collection[str] = (),
) -> PostedComment:
    """A comment on issue (or PR) ``number``; ``mentions``: the logins the calling code means
    to ping (every other mention is neutralised on the way out)."""
    raw = await gateway.create_issue_comment(repo, number, body, mentions=mentions)
    return PostedComment(int(raw["id"]), str(raw.get("html_url") or ""))


_READY = """mutation($pull: ID!) {
  markPullRequestReadyForReview(input: {pullRequestId: $pull}) { pullRequest { isDraft } }
}"""


async def mark_ready(gateway: GitHubEndpoints, node_id: str) -> None:
    """Mark the draft ``node_id`` ready for review (GraphQL: REST has no route for it). Marking
    a pull request that is ready already changes nothing, so it is safe to repeat."""
    await gateway.graphql(_READY, {"pull": node_id}, safe_to_retry=True)


async def update_body(gateway: GitHubEndpoints, repo: str, number: int, body: str) -> None:
    """Replace pull request ``number``'s body (``PATCH .../pulls/N``,
    docs.github.com/rest/pulls/pulls#update-a-pull-request); the request path sanitises it like
    every text the bot posts. Writing the same body twice leaves the same body."""
    await gateway.request(
        "PATCH", f"/repos/{repo_name(repo)}/pulls/{int(number)}", json={"body": body}
    )
