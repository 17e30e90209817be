"""What starts a writer: open issues carrying a label, and whether the person who added it may
write to the repository.

GitHub's REST issues listing holds pull requests too ("GitHub's REST API considers every pull
request an issue": docs.github.com/rest/issues/issues#list-repository-issues); a pull request
is the entry with a ``pull_request`` key, and is left out here. Who may write is the
collaborator permission's role (docs.github.com/rest/collaborators/collaborators
#get-repository-permissions-for-a-user): ``triage`` and ``read`` do not write.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.github.endpoints import GitHubEndpoints
from agents.github.paths import repo_name

WRITE_ROLES = frozenset({"admin", "maintain", "write"})


@dataclass(frozen=True)
class LabelledIssue:
    """An open issue (never a pull request) with its labels; title and body are the author's
    text, untrusted like a PR's."""

    number: int
    title: str
    body: str
    author: str
    labels: tuple[str, ...]
    url: str


async def labelled_open_issues(
    gateway: GitHubEndpoints, repo: str, label: str
) -> list[LabelledIssue]:
    """The open issues of ``repo`` labelled ``label``, oldest first; pull requests left out."""
    found = await gateway.list_issues(repo, "open", [label])
    issues = [
        LabelledIssue(
            number=int(raw["number"]),
            title=str(raw.get("title") or ""),
            body=str(raw.get("body") or ""),
            author=str((raw.get("user") or {}).get("login") or ""),
            labels=tuple(str(lbl.get("name")) for lbl in raw.get("labels") or []),
            url=str(raw.get("html_url") or ""),
        )
        for raw in found
        if "pull_request" not in raw
    ]
    return sorted(issues, key=lambda i: i.number)


async def may_write(gateway: GitHubEndpoints, repo: str, login: str) -> bool:
    """Whether ``login`` has write access to ``repo`` (admin, maintain or write)."""
    return await gateway.collaborator_permission(repo, login) in WRITE_ROLES


async def labelled_by(gateway: GitHubEndpoints, repo: str, number: int, label: str) -> str | None:
    """Who added ``label`` to issue ``number`` last (its newest ``labeled`` event's actor), or
    None when no event says (docs.github.com/rest/issues/events#list-issue-events). The label on
    an issue proves nothing by itself: anyone with triage access may add one. The first 100
    events are read: an issue labelled after a longer history is not started by discovery
    (the label's webhook still starts it)."""
    response = await gateway.request(
        "GET", f"/repos/{repo_name(repo)}/issues/{number}/events", params={"per_page": 100}
    )
    events = response.json()
    found: str | None = None
    for event in events if isinstance(events, list) else []:
        if not isinstance(event, dict) or event.get("event") != "labeled":
            continue
        if (event.get("label") or {}).get("name") == label:
            found = (event.get("actor") or {}).get("login") or None
    return found
