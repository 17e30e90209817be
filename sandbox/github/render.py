"""JSON bodies shaped like GitHub's, complete enough for githubkit's models to parse."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from sandbox.github.clock import iso
from sandbox.github.model import (
    App,
    Commit,
    Issue,
    IssueComment,
    Label,
    PullFile,
    Repo,
    Review,
    ReviewComment,
    User,
)

JSON = dict[str, Any]


@dataclass(frozen=True)
class Urls:
    api: str
    web: str


def node_id(kind: str, *parts: object) -> str:
    raw = ":".join(str(p) for p in parts).encode()
    return f"{kind}_" + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def user(u: Urls, usr: User) -> JSON:
    base = f"{u.api}/users/{usr.login}"
    return {
        "login": usr.login,
        "id": usr.id,
        "node_id": node_id("U", usr.id),
        "avatar_url": f"{u.web}/avatars/{usr.id}",
        "gravatar_id": "",
        "url": base,
        "html_url": f"{u.web}/{usr.login}",
        "followers_url": f"{base}/followers",
        "following_url": f"{base}/following{{/other_user}}",
        "gists_url": f"{base}/gists{{/gist_id}}",
        "starred_url": f"{base}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{base}/subscriptions",
        "organizations_url": f"{base}/orgs",
        "repos_url": f"{base}/repos",
        "events_url": f"{base}/events{{/privacy}}",
        "received_events_url": f"{base}/received_events",
        "type": usr.type,
        "site_admin": usr.site_admin,
    }


def private_user(u: Urls, usr: User, created: float) -> JSON:
    return user(u, usr) | {
        "name": usr.name,
        "company": None,
        "blog": "",
        "location": None,
        "email": None,
        "hireable": None,
        "bio": None,
        "public_repos": 0,
        "public_gists": 0,
        "followers": 0,
        "following": 0,
        "created_at": iso(created),
        "updated_at": iso(created),
        "private_gists": 0,
        "total_private_repos": 3,
        "owned_private_repos": 0,
        "disk_usage": 0,
        "collaborators": 0,
        "two_factor_authentication": True,
    }


def app(u: Urls, a: App, owner: User, created: float) -> JSON:
    return {
        "id": a.id,
        "slug": a.slug,
        "client_id": f"Iv1.{a.id:016x}",
        "node_id": node_id("A", a.id),
        "owner": user(u, owner),
        "name": a.name,
        "description": f"{a.name} (sandbox)",
        "external_url": f"{u.web}/apps/{a.slug}",
        "html_url": f"{u.web}/apps/{a.slug}",
        "created_at": iso(created),
        "updated_at": iso(created),
        "permissions": {},
        "events": ["pull_request", "issues"],
        "installations_count": 1,
    }


def repo(u: Urls, r: Repo, now: float, permissions: dict[str, bool] | None = None) -> JSON:
    api = f"{u.api}/repos/{r.full_name}"
    open_issues = sum(1 for i in r.issues.values() if i.state == "open")
    templated = {
        "archive_url": "{archive_format}{/ref}",
        "assignees_url": "/assignees{/user}",
        "blobs_url": "/git/blobs{/sha}",
        "branches_url": "/branches{/branch}",
        "collaborators_url": "/collaborators{/collaborator}",
        "comments_url": "/comments{/number}",
        "commits_url": "/commits{/sha}",
        "compare_url": "/compare/{base}...{head}",
        "contents_url": "/contents/{+path}",
        "contributors_url": "/contributors",
        "deployments_url": "/deployments",
        "downloads_url": "/downloads",
        "events_url": "/events",
        "forks_url": "/forks",
        "git_commits_url": "/git/commits{/sha}",
        "git_refs_url": "/git/refs{/sha}",
        "git_tags_url": "/git/tags{/sha}",
        "hooks_url": "/hooks",
        "issue_comment_url": "/issues/comments{/number}",
        "issue_events_url": "/issues/events{/number}",
        "issues_url": "/issues{/number}",
        "keys_url": "/keys{/key_id}",
        "labels_url": "/labels{/name}",
        "languages_url": "/languages",
        "merges_url": "/merges",
        "milestones_url": "/milestones{/number}",
        "notifications_url": "/notifications{?since,all,participating}",
        "pulls_url": "/pulls{/number}",
        "releases_url": "/releases{/id}",
        "stargazers_url": "/stargazers",
        "statuses_url": "/statuses/{sha}",
        "subscribers_url": "/subscribers",
        "subscription_url": "/subscription",
        "tags_url": "/tags",
        "teams_url": "/teams",
        "trees_url": "/git/trees{/sha}",
    }
    body: JSON = {
        "id": r.id,
        "node_id": node_id("R", r.id),
        "name": r.name,
        "full_name": r.full_name,
        "owner": user(u, r.owner),
        "private": r.private,
        "html_url": f"{u.web}/{r.full_name}",
        "description": r.description,
        "fork": False,
        "url": api,
        "git_url": f"git://sandbox/{r.full_name}.git",
        "ssh_url": f"git@sandbox:{r.full_name}.git",
        "clone_url": f"{u.web}/{r.full_name}.git",
        "svn_url": f"{u.web}/{r.full_name}",
        "mirror_url": None,
        "homepage": None,
        "language": "Python",
        "forks_count": 0,
        "forks": 0,
        "stargazers_count": 0,
        "watchers_count": 0,
        "watchers": 0,
        "subscribers_count": 1,
        "network_count": 0,
        "size": 100,
        "default_branch": r.default_branch,
        "open_issues_count": open_issues,
        "open_issues": open_issues,
        "has_issues": True,
        "has_projects": False,
        "has_wiki": False,
        "has_pages": False,
        "has_discussions": False,
        "archived": False,
        "disabled": False,
        "visibility": "private" if r.private else "public",
        "license": None,
        "topics": [],
        "pushed_at": iso(now),
        "created_at": iso(r.created_at),
        "updated_at": iso(now),
    }
    body.update({k: api + v if v.startswith("/") else f"{api}/{v}" for k, v in templated.items()})
    if permissions is not None:
        body["permissions"] = permissions
    return body


def label(u: Urls, r: Repo, lbl: Label) -> JSON:
    return {
        "id": lbl.id,
        "node_id": node_id("LA", lbl.id),
        "url": f"{u.api}/repos/{r.full_name}/labels/{lbl.name}",
        "name": lbl.name,
        "description": lbl.description,
        "color": lbl.color,
        "default": False,
        "archived_at": None,
        "archived_by": None,
    }


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
        "closed_at": None,
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


def diff_entry(u: Urls, r: Repo, ref: str, f: PullFile) -> JSON:
    return {
        "sha": f.sha,
        "filename": f.filename,
        "status": f.status,
        "additions": f.additions,
        "deletions": f.deletions,
        "changes": f.additions + f.deletions,
        "blob_url": f"{u.web}/{r.full_name}/blob/{ref}/{f.filename}",
        "raw_url": f"{u.web}/{r.full_name}/raw/{ref}/{f.filename}",
        "contents_url": f"{u.api}/repos/{r.full_name}/contents/{f.filename}?ref={ref}",
        "patch": f.patch,
    }


def commit(u: Urls, r: Repo, c: Commit, users: dict[str, User]) -> JSON:
    api = f"{u.api}/repos/{r.full_name}"
    author = users.get(c.author_login)
    git_user = {
        "name": c.author_login,
        "email": f"{c.author_login}@sandbox.invalid",
        "date": iso(c.at),
    }
    return {
        "url": f"{api}/commits/{c.sha}",
        "sha": c.sha,
        "node_id": node_id("C", c.sha),
        "html_url": f"{u.web}/{r.full_name}/commit/{c.sha}",
        "comments_url": f"{api}/commits/{c.sha}/comments",
        "commit": {
            "url": f"{api}/git/commits/{c.sha}",
            "author": git_user,
            "committer": git_user,
            "message": c.message,
            "comment_count": 0,
            "tree": {"sha": c.sha[::-1], "url": f"{api}/git/trees/{c.sha[::-1]}"},
        },
        "author": user(u, author) if author else None,
        "committer": user(u, author) if author else None,
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
        "subject_type": "line",
    }


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
        "comments": len(i.comments),
        "closed_at": None,
        "created_at": iso(i.created_at),
        "updated_at": iso(i.updated_at),
        "author_association": "CONTRIBUTOR",
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
        "updated_at": iso(c.at),
        "issue_url": f"{api}/issues/{i.number}",
        "author_association": "NONE",
    }


def content_file(u: Urls, r: Repo, path: str, text: str, ref: str, sha: str) -> JSON:
    raw = text.encode()
    encoded = base64.b64encode(raw).decode()
    # GitHub wraps base64 content at 60 characters.
    wrapped = "\n".join(encoded[i : i + 60] for i in range(0, len(encoded), 60)) + "\n"
    return _content_entry(u, r, path, "file", ref, sha, len(raw)) | {
        "encoding": "base64",
        "content": wrapped,
    }


def _content_entry(u: Urls, r: Repo, path: str, kind: str, ref: str, sha: str, size: int) -> JSON:
    api = f"{u.api}/repos/{r.full_name}"
    html = f"{u.web}/{r.full_name}/{'blob' if kind == 'file' else 'tree'}/{ref}/{path}"
    return {
        "type": kind,
        "size": size,
        "name": path.rsplit("/", 1)[-1],
        "path": path,
        "sha": sha,
        "url": f"{api}/contents/{path}?ref={ref}",
        "git_url": f"{api}/git/blobs/{sha}",
        "html_url": html,
        "download_url": f"{u.web}/{r.full_name}/raw/{ref}/{path}" if kind == "file" else None,
        "_links": {
            "self": f"{api}/contents/{path}?ref={ref}",
            "git": f"{api}/git/blobs/{sha}",
            "html": html,
        },
    }


def directory(u: Urls, r: Repo, entries: list[tuple[str, str, int, str]], ref: str) -> list[JSON]:
    """``entries``: (path, "file"|"dir", size, sha)."""
    return [_content_entry(u, r, p, k, ref, s, n) for p, k, n, s in entries]
