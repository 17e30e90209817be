"""Issue, issue comment and label endpoints. Pull requests are issues here, as on GitHub."""

from __future__ import annotations

from sandbox.github import render, render_pulls
from sandbox.github.clock import iso
from sandbox.github.errors import ApiError, not_found, unprocessable
from sandbox.github.gate import Ctx, Reply, Route
from sandbox.github.model import Issue, IssueComment
from sandbox.github.paging import page_of


def _issue(ctx: Ctx) -> Issue:
    try:
        issue = ctx.the_repo.issues.get(int(ctx.params["issue_number"]))
    except ValueError:
        raise not_found() from None
    if issue is None:
        raise not_found()
    return issue


def _require_for(ctx: Ctx, issue: Issue, level: str) -> None:
    # On a pull request, the pull_requests permission is enough for issue-style calls.
    if issue.pull is not None:
        ctx.require(("issues", level), ("pull_requests", level))
    else:
        ctx.require(("issues", level))


def list_issues(ctx: Ctx) -> Reply:
    ctx.require(("issues", "read"), ("pull_requests", "read"))
    state = ctx.query.get("state", "open")
    if state not in ("open", "closed", "all"):
        raise unprocessable("Validation Failed", [{"field": "state", "code": "invalid"}])
    wanted = {name for name in ctx.query.get("labels", "").split(",") if name}
    issues = [
        i
        for i in ctx.the_repo.issues.values()
        if (state == "all" or i.state == state)
        and wanted <= {lbl.name for lbl in i.labels}
        # A token without issues access sees only the pull requests.
        and (ctx.identity.has("issues", "read") or i.pull is not None)
        and (ctx.identity.has("pull_requests", "read") or i.pull is None)
    ]
    issues.sort(key=lambda i: i.number, reverse=ctx.query.get("direction", "desc") == "desc")
    chunk, headers = page_of(ctx, issues)
    users = ctx.state.users
    return Reply(
        [render_pulls.issue(ctx.urls, ctx.the_repo, i, users) for i in chunk], headers=headers
    )


def create_issue(ctx: Ctx) -> Reply:
    ctx.require(("issues", "write"))
    fields = ctx.body if isinstance(ctx.body, dict) else {}
    title, body = fields.get("title"), fields.get("body")
    if not isinstance(title, str) or not title.strip():
        raise unprocessable(
            "Validation Failed", [{"resource": "Issue", "field": "title", "code": "missing_field"}]
        )
    issue = ctx.state.add_issue(
        ctx.the_repo.full_name,
        title,
        body if isinstance(body, str) else None,
        author=ctx.identity.login,
    )
    return Reply(render_pulls.issue(ctx.urls, ctx.the_repo, issue, ctx.state.users), status=201)


def get_issue(ctx: Ctx) -> Reply:
    issue = _issue(ctx)
    _require_for(ctx, issue, "read")
    return Reply(render_pulls.issue(ctx.urls, ctx.the_repo, issue, ctx.state.users))


def list_comments(ctx: Ctx) -> Reply:
    issue = _issue(ctx)
    _require_for(ctx, issue, "read")
    chunk, headers = page_of(ctx, issue.comments)
    users = ctx.state.users
    return Reply(
        [render_pulls.issue_comment(ctx.urls, ctx.the_repo, issue, c, users) for c in chunk],
        headers=headers,
    )


def create_comment(ctx: Ctx) -> Reply:
    issue = _issue(ctx)
    _require_for(ctx, issue, "write")
    body = ctx.body.get("body") if isinstance(ctx.body, dict) else None
    if not isinstance(body, str) or not body.strip():
        raise unprocessable(
            "Validation Failed",
            [{"resource": "IssueComment", "field": "body", "code": "missing_field"}],
        )
    login = ctx.identity.login
    if login not in ctx.state.users:
        ctx.state.add_user(login, type="Bot" if login.endswith("[bot]") else "User")
    comment = IssueComment(ctx.state.next_id(), issue.number, login, body, ctx.now)
    issue.comments.append(comment)
    issue.updated_at = ctx.now
    ctx.state.emit("issue_comment", "created", ctx.the_repo, issue, comment)
    return Reply(
        render_pulls.issue_comment(ctx.urls, ctx.the_repo, issue, comment, ctx.state.users),
        status=201,
    )


def update_comment(ctx: Ctx) -> Reply:
    """``PATCH .../issues/comments/{comment_id}``: its author replaces a comment's text."""
    try:
        wanted = int(ctx.params["comment_id"])
    except ValueError:
        raise not_found() from None
    found = next(
        ((i, c) for i in ctx.the_repo.issues.values() for c in i.comments if c.id == wanted), None
    )
    if found is None:
        raise not_found()
    issue, comment = found
    _require_for(ctx, issue, "write")
    if comment.user_login != ctx.identity.login:
        raise ApiError(403, "Resource not accessible by integration")
    body = ctx.body.get("body") if isinstance(ctx.body, dict) else None
    if not isinstance(body, str) or not body.strip():
        raise unprocessable(
            "Validation Failed",
            [{"resource": "IssueComment", "field": "body", "code": "missing_field"}],
        )
    comment.body = body
    comment.edited_at = ctx.now
    comment.edits += 1
    return Reply(
        render_pulls.issue_comment(ctx.urls, ctx.the_repo, issue, comment, ctx.state.users)
    )


def list_events(ctx: Ctx) -> Reply:
    """``GET .../issues/{n}/events``: the issue's events, oldest first, each naming its
    ``actor`` and, for ``labeled``, the ``label`` (docs.github.com/rest/issues/events
    #list-issue-events; the payload shape at docs.github.com/rest/using-the-rest-api/
    issue-event-types#labeled). Only ``labeled`` is modelled: who added a label is what the
    writer's discovery asks."""
    issue = _issue(ctx)
    _require_for(ctx, issue, "read")
    users = ctx.state.users
    rows = [
        {
            "id": e.id,
            "node_id": render.node_id("LE", e.id),
            "url": f"{ctx.urls.api}/repos/{ctx.the_repo.full_name}/issues/events/{e.id}",
            "actor": render.user(ctx.urls, users[e.actor]) if e.actor in users else None,
            "event": e.event,
            "commit_id": None,
            "commit_url": None,
            "created_at": iso(e.at),
            "label": {"name": e.label, "color": "ededed"},
            "performed_via_github_app": None,
        }
        for e in issue.events
    ]
    chunk, headers = page_of(ctx, rows)
    return Reply(chunk, headers=headers)


def add_labels(ctx: Ctx) -> Reply:
    issue = _issue(ctx)
    _require_for(ctx, issue, "write")
    raw = ctx.body.get("labels") if isinstance(ctx.body, dict) else ctx.body
    if not isinstance(raw, list) or not all(isinstance(n, str) and n for n in raw):
        raise unprocessable("Invalid request.\n\nFor 'labels', expected an array of label names.")
    for name in raw:
        ctx.state.label_issue(ctx.the_repo.full_name, issue.number, name, by=ctx.identity.login)
    return Reply([render.label(ctx.urls, ctx.the_repo, lbl) for lbl in issue.labels])


_ISSUE = "/repos/{owner}/{repo}/issues/{issue_number}"
ROUTES = [
    Route("GET", "/repos/{owner}/{repo}/issues", list_issues),
    Route("POST", "/repos/{owner}/{repo}/issues", create_issue, content_creation=True),
    Route("GET", _ISSUE, get_issue),
    Route("GET", _ISSUE + "/comments", list_comments),
    Route("POST", _ISSUE + "/comments", create_comment, content_creation=True),
    Route("POST", _ISSUE + "/labels", add_labels),
    Route("GET", _ISSUE + "/events", list_events),
    Route("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}", update_comment),
]
