"""What a worker that writes code calls: branches (git refs), a commit's page with its signature,
the repository's tarball, and opening a pull request.

Each behaviour names where GitHub's comes from; tests/sandbox/test_writer_routes.py holds the
sandbox to it (DESIGN rule 17).
"""

from __future__ import annotations

import io
import secrets
import tarfile
from typing import Any

from sandbox.github import render_pulls
from sandbox.github.diffs import tree_diff
from sandbox.github.errors import ApiError, not_found, unprocessable
from sandbox.github.gate import Ctx, Reply, Route
from sandbox.github.model import Commit, Issue, Pull, Repo
from sandbox.github.render import node_id

# GitHub's archive links to a private repository "are temporary and expire after five minutes"
# (docs.github.com/rest/repos/contents#download-a-repository-archive-tar).
ARCHIVE_LINK_TTL_S = 300.0
HEADS = "refs/heads/"


def _ref_body(ctx: Ctx, ref: str, sha: str) -> dict[str, Any]:
    api = f"{ctx.urls.api}/repos/{ctx.the_repo.full_name}"
    return {
        "ref": ref,
        "node_id": node_id("REF", ctx.the_repo.id, ref),
        "url": f"{api}/git/{ref}",
        "object": {"sha": sha, "type": "commit", "url": f"{api}/git/commits/{sha}"},
    }


def create_ref(ctx: Ctx) -> Reply:
    """``POST /repos/{o}/{r}/git/refs`` {ref, sha}: 201 and the new ref. 422 "Reference already
    exists" for a ref that exists (gm3dmo/the-power#16, pupilfirst/pupilfirst#1495); 422 "Object
    does not exist" for a sha the repository lacks (octokit/octokit.js#562). The ref is fully
    qualified (``refs/heads/<name>``: docs.github.com/rest/git/refs#create-a-reference); the
    sandbox's 422 for any other (and its wording) is not sourced: the product sends only
    ``refs/heads/...`` and relies on no answer to anything else."""
    fields = ctx.body if isinstance(ctx.body, dict) else {}
    ref, sha = fields.get("ref"), fields.get("sha")
    if not isinstance(ref, str) or not ref.startswith("refs/") or ref.count("/") < 2:
        raise unprocessable("Reference name is invalid")
    if not isinstance(sha, str) or sha not in ctx.the_repo.commits:
        raise unprocessable("Object does not exist")
    if not ref.startswith(HEADS):
        raise unprocessable("Reference name is invalid")
    name = ref.removeprefix(HEADS)
    if name in ctx.the_repo.branches:
        raise unprocessable("Reference already exists")
    ctx.the_repo.branches[name] = sha
    return Reply(_ref_body(ctx, ref, sha), status=201)


def get_ref(ctx: Ctx) -> Reply:
    """``GET /repos/{o}/{r}/git/ref/heads/{name}``: the branch's head; 404 when there is no such
    branch (docs.github.com/rest/git/refs#get-a-reference)."""
    ref = ctx.params["path"]
    name = ref.removeprefix("heads/")
    if not ref.startswith("heads/") or name not in ctx.the_repo.branches:
        raise not_found()
    return Reply(_ref_body(ctx, f"refs/{ref}", ctx.the_repo.branches[name]))


def get_commit(ctx: Ctx) -> Reply:
    """``GET /repos/{o}/{r}/commits/{ref}``: the commit with its ``verification`` (a signed
    commit ``verified``, reason ``valid``; see render_pulls.verification); 422 "No commit found
    for SHA: ..." for an unknown ref (docs.github.com/rest/commits/commits#get-a-commit)."""
    commit = ctx.the_repo.resolve(ctx.params["ref"])
    if commit is None:
        raise unprocessable(f"No commit found for SHA: {ctx.params['ref']}")
    body = render_pulls.commit(ctx.urls, ctx.the_repo, commit, ctx.state.users)
    return Reply(body)


def tarball(ctx: Ctx) -> Reply:
    """``GET /repos/{o}/{r}/tarball/{ref}``: GitHub answers 302 to a codeload URL that serves
    the archive, temporary for a private repository
    (docs.github.com/rest/repos/contents#download-a-repository-archive-tar; npm/hosted-git-info
    6efd582: the 302 goes to codeload.github.com). The sandbox's codeload is its own
    ``/_codeload/...`` route: a link good for five minutes, carrying its own code (so the client
    sends no token there). 404 for a ref the repository lacks."""
    repo = ctx.the_repo
    commit = repo.resolve(ctx.params.get("ref") or repo.default_branch)
    if commit is None:
        raise not_found()
    code = secrets.token_urlsafe(24)
    ctx.state.archive_links[code] = (repo.full_name, commit.sha, ctx.now + ARCHIVE_LINK_TTL_S)
    location = f"{ctx.urls.web}/_codeload/{repo.full_name}/legacy.tar.gz/{commit.sha}?token={code}"
    return Reply(None, status=302, headers={"location": location})


def archive_bytes(repo: Repo, commit: Commit) -> bytes:
    """The gzipped tar of ``commit``'s tree under one top directory, as GitHub's archive has
    (``<owner>-<repo>-<short sha>/``; a client strips that one directory, whatever its name)."""
    top = f"{repo.owner.login}-{repo.name}-{commit.sha[:7]}"
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for path in sorted(commit.tree):
            blob = commit.tree[path]
            data = blob.encode() if isinstance(blob, str) else blob
            info = tarfile.TarInfo(f"{top}/{path}")
            info.size, info.mtime, info.mode = len(data), int(commit.at), 0o644
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _pull_error(message: str | None = None, **field: str) -> ApiError:
    error: dict[str, str] = {"resource": "PullRequest", **field}
    if message is not None:
        error = {"resource": "PullRequest", "code": "custom", "message": message}
    return unprocessable("Validation Failed", [error])


def create_pull(ctx: Ctx) -> Reply:
    """``POST /repos/{o}/{r}/pulls`` {title, head, base, body, draft}: 201 and the PR, opened by
    the caller (a draft when asked), its ``pull_request`` ``opened`` event sent. 422 when an open
    PR already has that head and base ("A pull request already exists for owner:branch.",
    vsoch/pull-request-action#86, WeblateOrg/weblate#4266), when the head has no commit the base
    lacks ("No commits between main and branch", tgymnich/fork-sync#112,
    peter-evans/create-pull-request#2105), and when the head is no branch (field ``head``, code
    ``invalid``: shepherd-tools/shepherd#51)."""
    repo = ctx.the_repo
    fields = ctx.body if isinstance(ctx.body, dict) else {}
    title, body = fields.get("title"), fields.get("body")
    head, base = str(fields.get("head") or ""), str(fields.get("base") or "")
    if not isinstance(title, str) or not title.strip():
        raise _pull_error(field="title", code="missing_field")
    owner, _, branch = head.rpartition(":")
    if owner and owner.lower() != repo.owner.login.lower():
        raise _pull_error(field="head", code="invalid")
    if branch not in repo.branches:
        raise _pull_error(field="head", code="invalid")
    if base not in repo.branches:
        raise _pull_error(field="base", code="invalid")
    label = f"{repo.owner.login}:{branch}"
    for issue in repo.pulls():
        p = issue.pull
        if p is not None and issue.state == "open" and (p.head_ref, p.base_ref) == (branch, base):
            raise _pull_error(f"A pull request already exists for {label}.")
    base_sha, head_sha = repo.branches[base], repo.branches[branch]
    shas = _commits_between(repo, base_sha, head_sha)
    if not shas:
        raise _pull_error(f"No commits between {base} and {branch}")
    login = ctx.identity.login
    if login not in ctx.state.users:
        ctx.state.add_user(login, type="Bot" if login.endswith("[bot]") else "User")
    pull = Pull(
        number=repo.next_number,
        head_ref=branch,
        head_sha=head_sha,
        base_ref=base,
        base_sha=base_sha,
        files=tree_diff(repo.commits[base_sha].tree, repo.commits[head_sha].tree),
        commit_shas=shas,
        draft=fields.get("draft") is True,
    )
    issue = Issue(
        pull.number, title, body if isinstance(body, str) else None, login, ctx.now, ctx.now
    )
    issue.pull = pull
    repo.next_number += 1
    repo.issues[issue.number] = issue
    ctx.state.emit("pull_request", "opened", repo, issue)
    users = ctx.state.users
    return Reply(render_pulls.pull(ctx.urls, repo, issue, users, ctx.now, full=True), status=201)


def _commits_between(repo: Repo, base_sha: str, head_sha: str) -> list[str]:
    """The head's commits the base does not have, oldest first (first parents only)."""
    in_base: set[str] = set()
    cursor: str | None = base_sha
    while cursor:
        in_base.add(cursor)
        parents = repo.commits[cursor].parents
        cursor = parents[0] if parents else None
    chain: list[str] = []
    cursor = head_sha
    while cursor and cursor not in in_base:
        chain.append(cursor)
        parents = repo.commits[cursor].parents
        cursor = parents[0] if parents else None
    return chain[::-1]


_R = "/repos/{owner}/{repo}"
ROUTES = [
    Route("POST", _R + "/git/refs", create_ref, permission=("contents", "write")),
    Route("GET", _R + "/git/ref/{path}", get_ref, permission=("contents", "read")),
    Route("GET", _R + "/commits/{ref}", get_commit, permission=("contents", "read")),
    Route("GET", _R + "/tarball/{ref}", tarball, permission=("contents", "read")),
    Route("GET", _R + "/tarball", tarball, permission=("contents", "read")),
    Route(
        "POST",
        _R + "/pulls",
        create_pull,
        permission=("pull_requests", "write"),
        content_creation=True,
    ),
]
