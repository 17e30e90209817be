"""JSON bodies shaped like GitHub's, complete enough for githubkit's models to parse."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from sandbox.github.clock import iso
from sandbox.github.model import (
    App,
    Installation,
    Label,
    Repo,
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


def parse_node_id(kind: str, node: object) -> tuple[int, ...] | None:
    """The numbers :func:`node_id` put into ``node``; None when it is not a ``kind`` id."""
    if not isinstance(node, str) or not node.startswith(f"{kind}_"):
        return None
    tail = node[len(kind) + 1 :]
    try:
        raw = base64.urlsafe_b64decode(tail + "=" * (-len(tail) % 4)).decode()
        return tuple(int(x) for x in raw.split(":"))
    except ValueError:
        return None


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
    """``GET /app`` ("Get the authenticated app", docs.github.com/rest/apps/apps): the App's
    ``permissions`` and ``events`` as its registration names them."""
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
        "permissions": dict(a.permissions),
        "events": list(a.events),
        "installations_count": 1,
    }


def installation(u: Urls, inst: Installation, account: User) -> JSON:
    return {
        "id": inst.id,
        "app_id": inst.app_id,
        "account": user(u, account),
        "target_type": account.type,
        "repository_selection": "all" if inst.repository_ids is None else "selected",
        "access_tokens_url": f"{u.api}/app/installations/{inst.id}/access_tokens",
        "permissions": dict(inst.permissions),
        "events": [],
    }


def _pushed_at(r: Repo, now: float) -> float:
    """When the repository was last pushed to: its newest commit (never after ``now``)."""
    return min(now, max((c.at for c in r.commits.values()), default=r.created_at))


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
        # The newest push, not the time of the request: a time that moves with the clock made the
        # listing's ETag change from one second to the next, so an unchanged answer got a 200.
        "pushed_at": iso(_pushed_at(r, now)),
        "created_at": iso(r.created_at),
        "updated_at": iso(_pushed_at(r, now)),
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


def content_file(u: Urls, r: Repo, path: str, text: str | bytes, ref: str, sha: str) -> JSON:
    raw = text.encode() if isinstance(text, str) else text
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
