"""Repository, pull request, contents and compare endpoints."""

from __future__ import annotations

from typing import Any

from sandbox.github import render, render_pulls
from sandbox.github.diffs import (
    as_text,
    commentable_lines,
    hunk_for,
    hunk_index,
    position_count,
    tree_diff,
)
from sandbox.github.errors import ApiError, not_found, unprocessable
from sandbox.github.gate import Ctx, Reply, Route
from sandbox.github.model import Blob, Issue, Pull, PullFile, Review, ReviewComment, sha_of
from sandbox.github.paging import page_of
from sandbox.github.routes_feedback import listed_comments

RAW_MEDIA_TYPE = "application/vnd.github.raw+json; charset=utf-8"
RAW_MEDIA_TYPES = frozenset(
    {
        "application/vnd.github.raw+json",
        "application/vnd.github.raw",
        "application/vnd.github.v3.raw",
        "application/vnd.github.v3.raw+json",
    }
)
REVIEW_STATES = {
    "APPROVE": "APPROVED",
    "REQUEST_CHANGES": "CHANGES_REQUESTED",
    "COMMENT": "COMMENTED",
}


def get_repo(ctx: Ctx) -> Reply:
    ident = ctx.identity
    perms = {
        "admin": ident.has("administration", "write"),
        "maintain": False,
        "push": ident.has("contents", "write"),
        "triage": ident.has("issues", "write"),
        "pull": True,
    }
    return Reply(render.repo(ctx.urls, ctx.the_repo, ctx.now, perms))


def _pull(ctx: Ctx) -> tuple[Issue, Pull]:
    try:
        issue = ctx.the_repo.issues.get(int(ctx.params["pull_number"]))
    except ValueError:
        raise not_found() from None
    if issue is None or issue.pull is None:
        raise not_found()
    return issue, issue.pull


def list_pulls(ctx: Ctx) -> Reply:
    state = ctx.query.get("state", "open")
    if state not in ("open", "closed", "all"):
        raise unprocessable(
            "Validation Failed", [{"resource": "Search", "field": "state", "code": "invalid"}]
        )
    pulls = [i for i in ctx.the_repo.pulls() if state == "all" or i.state == state]
    if base := ctx.query.get("base"):
        pulls = [i for i in pulls if i.pull is not None and i.pull.base_ref == base]
    if head := ctx.query.get("head"):
        # "user:ref-name or organization:ref-name" (docs.github.com/rest/pulls/pulls
        # #list-pull-requests, parameter ``head``): every PR of this repository has its owner.
        owner, _, ref = head.rpartition(":")
        same_owner = owner.lower() == ctx.the_repo.owner.login.lower()
        pulls = [i for i in pulls if same_owner and i.pull is not None and i.pull.head_ref == ref]
    pulls.sort(key=lambda i: i.number, reverse=ctx.query.get("direction", "desc") == "desc")
    chunk, headers = page_of(ctx, pulls)
    users = ctx.state.users
    body = [render_pulls.pull(ctx.urls, ctx.the_repo, i, users, ctx.now, full=False) for i in chunk]
    return Reply(body, headers=headers)


def get_pull(ctx: Ctx) -> Reply:
    issue, _ = _pull(ctx)
    return Reply(
        render_pulls.pull(ctx.urls, ctx.the_repo, issue, ctx.state.users, ctx.now, full=True)
    )


def update_pull(ctx: Ctx) -> Reply:
    """``PATCH /repos/{o}/{r}/pulls/{n}`` {title, body}: the pull request as it is now
    (docs.github.com/rest/pulls/pulls#update-a-pull-request; docs/github-facts.md). Only the
    title and the body are modelled; a body past GitHub's cap is 422 like a review's."""
    issue, _ = _pull(ctx)
    data = ctx.body if isinstance(ctx.body, dict) else {}
    body = data.get("body")
    if body is not None:
        if not isinstance(body, str):
            raise unprocessable("Validation Failed", [{"field": "body", "code": "invalid"}])
        if len(body) > MAX_BODY_CHARS:
            raise _too_long("body")
        issue.body = body
    title = data.get("title")
    if isinstance(title, str) and title.strip():
        issue.title = title
    issue.updated_at = ctx.now
    return Reply(
        render_pulls.pull(ctx.urls, ctx.the_repo, issue, ctx.state.users, ctx.now, full=True)
    )


# GitHub lists at most this many files of a pull request, whatever the page.
MAX_LISTED_FILES = 3000
# GitHub's cap on a review's body and on each of its comments (422 past it).
MAX_BODY_CHARS = 65_536


def list_pull_files(ctx: Ctx) -> Reply:
    _, pull = _pull(ctx)
    chunk, headers = page_of(ctx, pull.files[:MAX_LISTED_FILES])
    return Reply(_diff_entries(ctx, pull.head_sha, chunk), headers=headers)


def _diff_entries(ctx: Ctx, ref: str, files: list[PullFile]) -> list[dict[str, Any]]:
    """One response's rows: past the response's patch-line limit, withheld as GitHub does."""
    budget = ctx.state.knobs.listing_patch_lines
    shown, rows = 0, []
    for f in files:
        withheld = budget is not None and shown >= budget
        if not withheld and f.patch is not None:
            shown += f.patch.count("\n") + 1
        rows.append(render_pulls.diff_entry(ctx.urls, ctx.the_repo, ref, f, withheld=withheld))
    return rows


def get_contents(ctx: Ctx) -> Reply:
    repo = ctx.the_repo
    ref = ctx.query.get("ref") or repo.default_branch
    commit = repo.resolve(ref)
    if commit is None:
        raise ApiError(404, f"No commit found for the ref {ref}")
    path = ctx.params.get("path", "").strip("/")
    if path in commit.tree:
        text = commit.tree[path]
        if ctx.state.knobs.raw_contents and _wants_raw(ctx.accept):
            # GitHub labels a raw file with the raw media type, "+json" and all.
            return Reply(text, media_type=RAW_MEDIA_TYPE)
        return Reply(render.content_file(ctx.urls, repo, path, text, ref, _blob_sha(text)))
    prefix = f"{path}/" if path else ""
    entries: dict[str, tuple[str, str, int, str]] = {}
    for name, text in commit.tree.items():
        if not name.startswith(prefix):
            continue
        head, _, rest = name[len(prefix) :].partition("/")
        child = prefix + head
        entries[child] = (
            (child, "dir", 0, _blob_sha(child))
            if rest
            else (child, "file", len(_raw(text)), _blob_sha(text))
        )
    if not entries:
        raise not_found()
    return Reply(render.directory(ctx.urls, repo, sorted(entries.values()), ref))


def _wants_raw(accept: str) -> bool:
    """``application/vnd.github.raw+json``, ``.raw`` or ``.v3.raw`` among the accepted types;
    a directory is JSON whatever was asked."""
    for item in accept.split(","):
        media = item.split(";", 1)[0].strip().lower()
        if media in RAW_MEDIA_TYPES:
            return True
    return False


def _blob_sha(blob: Blob) -> str:
    return sha_of("blob", as_text(blob))


def _raw(blob: Blob) -> bytes:
    return blob.encode() if isinstance(blob, str) else blob


def compare(ctx: Ctx) -> Reply:
    repo = ctx.the_repo
    base_ref, sep, head_ref = ctx.params["basehead"].partition("...")
    if not sep:
        raise not_found()
    base, head = repo.resolve(base_ref), repo.resolve(head_ref)
    if base is None or head is None:
        raise not_found()
    chain = []
    cursor = head
    while cursor.sha != base.sha and cursor.parents:
        chain.append(cursor)
        cursor = repo.commits[cursor.parents[0]]
    chain.reverse()
    users = ctx.state.users
    html = f"{ctx.urls.web}/{repo.full_name}/compare/{base_ref}...{head_ref}"
    files = tree_diff(base.tree, head.tree)
    return Reply(
        {
            "url": f"{ctx.urls.api}/repos/{repo.full_name}/compare/{base_ref}...{head_ref}",
            "html_url": html,
            "permalink_url": f"{ctx.urls.web}/{repo.full_name}/compare/{base.sha}...{head.sha}",
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "base_commit": render_pulls.commit(ctx.urls, repo, base, users),
            "merge_base_commit": render_pulls.commit(ctx.urls, repo, base, users),
            "status": "identical" if base.sha == head.sha else "ahead",
            "ahead_by": len(chain),
            "behind_by": 0,
            "total_commits": len(chain),
            "commits": [render_pulls.commit(ctx.urls, repo, c, users) for c in chain],
            "files": _diff_entries(ctx, head.sha, files),
        }
    )


def list_reviews(ctx: Ctx) -> Reply:
    _, pull = _pull(ctx)
    chunk, headers = page_of(ctx, pull.reviews)
    return Reply(
        [render_pulls.review(ctx.urls, ctx.the_repo, r, ctx.state.users) for r in chunk],
        headers=headers,
    )


def create_review(ctx: Ctx) -> Reply:
    issue, pull = _pull(ctx)
    body: dict[str, Any] = ctx.body if isinstance(ctx.body, dict) else {}
    event = body.get("event")
    if event is not None and event not in REVIEW_STATES:
        raise unprocessable(
            "Unprocessable Entity",
            [f"Review event {event!r} is not one of APPROVE, REQUEST_CHANGES, COMMENT"],
        )
    text = body.get("body") or ""
    if not isinstance(text, str) or len(text) > MAX_BODY_CHARS:
        raise _too_long("body")
    if event in ("REQUEST_CHANGES", "COMMENT") and not text and not body.get("comments"):
        raise unprocessable("Unprocessable Entity", [f"Review Comment is required for {event}"])
    login = ctx.identity.login
    if event == "APPROVE" and login == issue.user_login:
        raise unprocessable("Unprocessable Entity", ["Can not approve your own pull request"])
    commit_id = body.get("commit_id") or pull.head_sha
    if commit_id not in pull.commit_shas:
        raise unprocessable("Unprocessable Entity", ["commit_id is not part of the pull request"])
    review = Review(
        id=ctx.state.next_id(),
        pull_number=issue.number,
        user_login=login,
        body=text,
        state=REVIEW_STATES.get(event or "", "PENDING"),
        commit_id=commit_id,
        at=ctx.now,
    )
    comments = [_review_comment(ctx, pull, review, c) for c in body.get("comments") or []]
    _ensure_user(ctx, login)
    pull.reviews.append(review)
    pull.review_comments.extend(comments)
    review.comment_ids = [c.id for c in comments]
    issue.updated_at = ctx.now
    return Reply(render_pulls.review(ctx.urls, ctx.the_repo, review, ctx.state.users))


def _ensure_user(ctx: Ctx, login: str) -> None:
    if login not in ctx.state.users:
        ctx.state.add_user(login, type="Bot" if login.endswith("[bot]") else "User")


def _review_comment(ctx: Ctx, pull: Pull, review: Review, raw: Any) -> ReviewComment:
    if not isinstance(raw, dict) or not raw.get("path") or not raw.get("body"):
        raise unprocessable("Unprocessable Entity", ["Each review comment needs a path and a body"])
    if len(str(raw["body"])) > MAX_BODY_CHARS:
        raise _too_long("comments.body")
    path = str(raw["path"])
    pf = next((f for f in pull.files if f.filename == path), None)
    if pf is None:
        raise unprocessable("Unprocessable Entity", ["Path could not be resolved"])
    side = str(raw.get("side") or "RIGHT")
    line, position = raw.get("line"), raw.get("position")
    start_line, start_side = raw.get("start_line"), raw.get("start_side")
    if line is not None:
        left, right = commentable_lines(pf.patch)
        if not isinstance(line, int) or line not in (right if side == "RIGHT" else left):
            raise unprocessable("Unprocessable Entity", ["Line could not be resolved"])
        if start_line is not None:
            _check_start(pf.patch, line, side, start_line, str(start_side or side))
    elif position is not None:
        if not isinstance(position, int) or not 1 <= position <= position_count(pf.patch):
            raise unprocessable("Unprocessable Entity", ["Position could not be resolved"])
    else:
        raise unprocessable("Unprocessable Entity", ["A review comment needs a line or a position"])
    return ReviewComment(
        id=ctx.state.next_id(),
        review_id=review.id,
        pull_number=review.pull_number,
        path=path,
        body=str(raw["body"]),
        commit_id=review.commit_id,
        line=line,
        side=side,
        position=position,
        diff_hunk=hunk_for(pf.patch, line, side, position),
        user_login=review.user_login,
        at=ctx.now,
        start_line=start_line if isinstance(start_line, int) else None,
        start_side=str(start_side or side) if isinstance(start_line, int) else None,
    )


def _check_start(
    patch: str | None, line: int, side: str, start_line: object, start_side: str
) -> None:
    """GitHub's rules for a multi-line comment: the start is a diff line before the end, in
    the same hunk."""
    if not isinstance(start_line, int) or start_line >= line:
        raise unprocessable("Unprocessable Entity", ["start_line must precede the end line."])
    where = hunk_index(patch, start_line, start_side)
    if where is None:
        raise unprocessable("Unprocessable Entity", ["Start line could not be resolved"])
    if where != hunk_index(patch, line, side):
        raise unprocessable(
            "Unprocessable Entity",
            ["pull_request_review_thread.start_line must be part of the same hunk as the line."],
        )


def _too_long(field: str) -> ApiError:
    return unprocessable(
        "Validation Failed",
        [
            {
                "resource": "PullRequestReview",
                "code": "custom",
                "field": field,
                "message": f"{field} is too long (maximum is {MAX_BODY_CHARS} characters)",
            }
        ],
    )


def list_review_comments(ctx: Ctx) -> Reply:
    _, pull = _pull(ctx)
    chunk, headers = page_of(ctx, listed_comments(ctx, pull.review_comments))
    users = ctx.state.users
    return Reply(
        [render_pulls.review_comment(ctx.urls, ctx.the_repo, c, users) for c in chunk],
        headers=headers,
    )


_PR = "/repos/{owner}/{repo}/pulls/{pull_number}"
ROUTES = [
    Route("GET", "/repos/{owner}/{repo}", get_repo, permission=("metadata", "read")),
    Route("GET", "/repos/{owner}/{repo}/pulls", list_pulls, permission=("pull_requests", "read")),
    Route("GET", _PR, get_pull, permission=("pull_requests", "read")),
    Route("PATCH", _PR, update_pull, permission=("pull_requests", "write")),
    Route("GET", _PR + "/files", list_pull_files, permission=("pull_requests", "read")),
    Route("GET", _PR + "/reviews", list_reviews, permission=("pull_requests", "read")),
    Route(
        "POST",
        _PR + "/reviews",
        create_review,
        permission=("pull_requests", "write"),
        content_creation=True,
    ),
    Route("GET", _PR + "/comments", list_review_comments, permission=("pull_requests", "read")),
    Route(
        "GET",
        "/repos/{owner}/{repo}/contents/{path}",
        get_contents,
        permission=("contents", "read"),
    ),
    Route("GET", "/repos/{owner}/{repo}/contents", get_contents, permission=("contents", "read")),
    Route(
        "GET", "/repos/{owner}/{repo}/compare/{basehead}", compare, permission=("contents", "read")
    ),
]
