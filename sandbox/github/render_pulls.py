"""JSON bodies for pull requests, reviews, commits and issues (see render.py for the rest)."""

from __future__ import annotations

from sandbox.github.clock import iso
from sandbox.github.model import (
    Commit,
    Issue,
    IssueComment,
    PullFile,
    Repo,
    Review,
    ReviewComment,
    User,
)
from sandbox.github.render import JSON, Urls, label, node_id, repo, user


def _link(href: str) -> JSON:
    return {"href": href}


def pull(u: Urls, r: Repo, issue: Issue, users: dict[str, User], now: float, *, full: bool) -> JSON:
    p = issue.pull
    assert p is not None
    api = f"{u.api}/repos/{r.full_name}"
    html = f"{u.web}/{r.full_name}/pull/{issue.number}"
    author = users[issue.user_login]
    repo_json = repo(u, r, now)

    def side(ref: str, sha: str) -> JSON:
        return {
            "label": f"{r.owner.login}:{ref}",
            "ref": ref,
            "sha": sha,
            "user": user(u, r.owner),
            "repo": repo_json,
        }

    body: JSON = {
        "url": f"{api}/pulls/{issue.number}",
        "id": r.id * 10_000 + issue.number,
        "node_id": node_id("PR", r.id, issue.number),
        "html_url": html,
        "diff_url": f"{html}.diff",
        "patch_url": f"{html}.patch",
        "issue_url": f"{api}/issues/{issue.number}",
        "commits_url": f"{api}/pulls/{issue.number}/commits",
        "review_comments_url": f"{api}/pulls/{issue.number}/comments",
        "review_comment_url": f"{api}/pulls/comments{{/number}}",
        "comments_url": f"{api}/issues/{issue.number}/comments",
        "statuses_url": f"{api}/statuses/{p.head_sha}",
        "number": issue.number,
        "state": issue.state,
        "locked": False,
        "title": issue.title,
        "user": user(u, author),
        "body": issue.body,
        "labels": [label(u, r, lbl) for lbl in issue.labels],
        "milestone": None,
        "active_lock_reason": None,
        "created_at": iso(issue.created_at),
        "updated_at": iso(issue.updated_at),
        "closed_at": iso(issue.updated_at) if issue.state == "closed" else None,
        "merged_at": None,
        "merge_commit_sha": None,
        "assignee": None,
        "assignees": [],
        "requested_reviewers": [],
        "requested_teams": [],
        "head": side(p.head_ref, p.head_sha),
        "base": side(p.base_ref, p.base_sha),
        "_links": {
            "self": _link(f"{api}/pulls/{issue.number}"),
            "html": _link(html),
            "issue": _link(f"{api}/issues/{issue.number}"),
            "comments": _link(f"{api}/issues/{issue.number}/comments"),
            "review_comments": _link(f"{api}/pulls/{issue.number}/comments"),
            "review_comment": _link(f"{api}/pulls/comments{{/number}}"),
            "commits": _link(f"{api}/pulls/{issue.number}/commits"),
            "statuses": _link(f"{api}/statuses/{p.head_sha}"),
        },
        "author_association": "CONTRIBUTOR",
        "auto_merge": None,
        "draft": p.draft,
    }
    if full:
        body.update(
            {
                "merged": False,
                "mergeable": True,
                "rebaseable": True,
                "mergeable_state": "clean",
                "merged_by": None,
                "comments": len(issue.comments),
                "review_comments": len(p.review_comments),
                "maintainer_can_modify": False,
                "commits": len(p.commit_shas),
                "additions": sum(f.additions for f in p.files),
                "deletions": sum(f.deletions for f in p.files),
                "changed_files": len(p.files),
            }
        )
    return body


def diff_entry(u: Urls, r: Repo, ref: str, f: PullFile, *, withheld: bool = False) -> JSON:
    """One file of a PR's or a comparison's file list. ``withheld``: past the response's diff
    limit, where GitHub shows the file with zero counts and no patch."""
    if withheld:
        f = PullFile(f.filename, f.status, 0, 0, None, f.sha, f.previous_filename)
    body: JSON = {
        "sha": f.sha,
        "filename": f.filename,
        "status": f.status,
        "additions": f.additions,
        "deletions": f.deletions,
        "changes": f.additions + f.deletions,
        "blob_url": f"{u.web}/{r.full_name}/blob/{ref}/{f.filename}",
        "raw_url": f"{u.web}/{r.full_name}/raw/{ref}/{f.filename}",
        "contents_url": f"{u.api}/repos/{r.full_name}/contents/{f.filename}?ref={ref}",
    }
    # GitHub leaves the key out (not null) where it shows no patch.
    if f.patch is not None:
        body["patch"] = f.patch
    if f.previous_filename is not None:
        body["previous_filename"] = f.previous_filename
    return body


# GitHub's own account that commits (and signs) what the web interface and
# createCommitOnBranch make.
WEB_FLOW = "web-flow"


def verification(c: Commit) -> JSON:
    """A commit's ``verification``: GitHub signs an App's createCommitOnBranch commit and shows
    it ``verified``, reason ``valid`` (anthropics/claude-code-action#1511: commits made through
    the REST git-data API are unsigned, createCommitOnBranch's are signed as the App); a commit
    pushed without a signature is ``unsigned`` (docs.github.com/rest/commits/commits, the
    ``verification`` object and its ``reason`` values)."""
    if c.signed_by is None:
        return {
            "verified": False,
            "reason": "unsigned",
            "signature": None,
            "payload": None,
            "verified_at": None,
        }
    payload = f"tree {c.sha[::-1]}\nparent {' '.join(c.parents)}\n\n{c.message}\n"
    signature = "-----BEGIN PGP SIGNATURE-----\n\nsandbox-web-flow\n-----END PGP SIGNATURE-----\n"
    return {
        "verified": True,
        "reason": "valid",
        "signature": signature,
        "payload": payload,
        "verified_at": iso(c.at),
    }


def commit(u: Urls, r: Repo, c: Commit, users: dict[str, User]) -> JSON:
    api = f"{u.api}/repos/{r.full_name}"
    author = users.get(c.author_login)
    git_user = {
        "name": c.author_login,
        "email": f"{c.author_login}@sandbox.invalid",
        "date": iso(c.at),
    }
    committer, git_committer = author, git_user
    if c.signed_by is not None:
        # createCommitOnBranch: "The committer will be identical to that of commits authored
        # using the web interface" (docs.github.com/graphql/reference/mutations
        # #createcommitonbranch): GitHub's web-flow, which signs it.
        committer = users.get(WEB_FLOW)
        git_committer = {"name": "GitHub", "email": "noreply@github.com", "date": iso(c.at)}
    return {
        "url": f"{api}/commits/{c.sha}",
        "sha": c.sha,
        "node_id": node_id("C", c.sha),
        "html_url": f"{u.web}/{r.full_name}/commit/{c.sha}",
        "comments_url": f"{api}/commits/{c.sha}/comments",
        "commit": {
            "url": f"{api}/git/commits/{c.sha}",
            "author": git_user,
            "committer": git_committer,
            "message": c.message,
            "comment_count": 0,
            "tree": {"sha": c.sha[::-1], "url": f"{api}/git/trees/{c.sha[::-1]}"},
            "verification": verification(c),
        },
        "author": user(u, author) if author else None,
        "committer": user(u, committer) if committer else None,
        "parents": [{"sha": s, "url": f"{api}/commits/{s}"} for s in c.parents],
    }


def review(u: Urls, r: Repo, rv: Review, users: dict[str, User]) -> JSON:
    api = f"{u.api}/repos/{r.full_name}"
    html = f"{u.web}/{r.full_name}/pull/{rv.pull_number}#pullrequestreview-{rv.id}"
    return {
        "id": rv.id,
        "node_id": node_id("PRR", rv.id),
        "user": user(u, users[rv.user_login]),
        "body": rv.body,
        "state": rv.state,
        "html_url": html,
        "pull_request_url": f"{api}/pulls/{rv.pull_number}",
        "_links": {
            "html": _link(html),
            "pull_request": _link(f"{api}/pulls/{rv.pull_number}"),
        },
        "submitted_at": iso(rv.at) if rv.state != "PENDING" else None,
        "commit_id": rv.commit_id,
        "author_association": "NONE",
    }


def review_comment(u: Urls, r: Repo, c: ReviewComment, users: dict[str, User]) -> JSON:
    api = f"{u.api}/repos/{r.full_name}"
    html = f"{u.web}/{r.full_name}/pull/{c.pull_number}#discussion_r{c.id}"
    return {
        "url": f"{api}/pulls/comments/{c.id}",
        "pull_request_review_id": c.review_id,
        "id": c.id,
        "node_id": node_id("PRRC", c.id),
        "diff_hunk": c.diff_hunk,
        "path": c.path,
        "position": c.position,
        "original_position": c.position,
        "commit_id": c.commit_id,
        "original_commit_id": c.commit_id,
        "user": user(u, users[c.user_login]),
        "body": c.body,
        "created_at": iso(c.at),
        "updated_at": iso(c.at),
        "html_url": html,
        "pull_request_url": f"{api}/pulls/{c.pull_number}",
        "author_association": "NONE",
        "_links": {
            "self": _link(f"{api}/pulls/comments/{c.id}"),
            "html": _link(html),
            "pull_request": _link(f"{api}/pulls/{c.pull_number}"),
        },
        "line": c.line,
        "original_line": c.line,
        "side": c.side,
        "start_line": c.start_line,
        "original_start_line": c.start_line,
        "start_side": c.start_side,
        "subject_type": "line",
        **({"in_reply_to_id": c.in_reply_to_id} if c.in_reply_to_id else {}),
        "reactions": _reaction_counts(f"{api}/pulls/comments/{c.id}/reactions", c),
    }


def _reaction_counts(url: str, c: ReviewComment) -> JSON:
    return _rollup(url, [r.content for r in c.reactions])


def _rollup(url: str, contents: list[str]) -> JSON:
    """GitHub's reaction rollup: a count per kind, every kind present."""
    counts = {k: 0 for k in ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")}
    for content in contents:
        counts[content] = counts.get(content, 0) + 1
    return {"url": url, "total_count": len(contents), **counts}


def issue(u: Urls, r: Repo, i: Issue, users: dict[str, User]) -> JSON:
    api = f"{u.api}/repos/{r.full_name}"
    kind = "pull" if i.pull else "issues"
    body: JSON = {
        "id": r.id * 10_000 + i.number + 5000,
        "node_id": node_id("I", r.id, i.number),
        "url": f"{api}/issues/{i.number}",
        "repository_url": api,
        "labels_url": f"{api}/issues/{i.number}/labels{{/name}}",
        "comments_url": f"{api}/issues/{i.number}/comments",
        "events_url": f"{api}/issues/{i.number}/events",
        "html_url": f"{u.web}/{r.full_name}/{kind}/{i.number}",
        "number": i.number,
        "state": i.state,
        "title": i.title,
        "body": i.body,
        "user": user(u, users[i.user_login]),
        "labels": [label(u, r, lbl) for lbl in i.labels],
        "assignee": None,
        "assignees": [],
        "milestone": None,
        "locked": False,
        "active_lock_reason": None,
        "comments": len(i.comments),
        "closed_at": iso(i.updated_at) if i.state == "closed" else None,
        "created_at": iso(i.created_at),
        "updated_at": iso(i.updated_at),
        "author_association": "CONTRIBUTOR",
        "state_reason": None,
        "performed_via_github_app": None,
        "timeline_url": f"{api}/issues/{i.number}/timeline",
        "reactions": _rollup(f"{api}/issues/{i.number}/reactions", []),
    }
    if i.pull is not None:
        body["draft"] = i.pull.draft
        body["pull_request"] = {
            "url": f"{api}/pulls/{i.number}",
            "html_url": f"{u.web}/{r.full_name}/pull/{i.number}",
            "diff_url": f"{u.web}/{r.full_name}/pull/{i.number}.diff",
            "patch_url": f"{u.web}/{r.full_name}/pull/{i.number}.patch",
            "merged_at": None,
        }
    return body


def issue_comment(u: Urls, r: Repo, i: Issue, c: IssueComment, users: dict[str, User]) -> JSON:
    api = f"{u.api}/repos/{r.full_name}"
    kind = "pull" if i.pull else "issues"
    return {
        "id": c.id,
        "node_id": node_id("IC", c.id),
        "url": f"{api}/issues/comments/{c.id}",
        "html_url": f"{u.web}/{r.full_name}/{kind}/{i.number}#issuecomment-{c.id}",
        "body": c.body,
        "user": user(u, users[c.user_login]),
        "created_at": iso(c.at),
        "updated_at": iso(c.edited_at or c.at),
        "issue_url": f"{api}/issues/{i.number}",
        "author_association": "NONE",
        "performed_via_github_app": None,
        "reactions": _rollup(
            f"{api}/issues/comments/{c.id}/reactions", [content for _, content in c.reactions]
        ),
    }
