"""The web pages behind the ``html_url`` links the sandbox hands out.

A review link in the run table (``/acme/widgets/pull/3#pullrequestreview-100014``) opens a plain
page with the pull request, its reviews, inline comments and conversation, each anchored the way
github.com anchors them. Everything shown comes from PR authors and bots, so every text is
escaped: the page is data, never markup.
"""

from __future__ import annotations

import html
from datetime import UTC, datetime

from fastapi import FastAPI
from fastapi.responses import HTMLResponse

from sandbox.github.model import Issue, Repo
from sandbox.github.state import SandboxState

_STYLE = (
    "body{font:15px/1.45 system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em}"
    "section{border:1px solid #d0d7de;border-radius:6px;padding:.6em 1em;margin:1em 0}"
    "section:target{border-color:#0969da;box-shadow:0 0 0 2px #0969da33}"
    "pre{white-space:pre-wrap;background:#f6f8fa;padding:.5em;border-radius:4px}"
    ".meta{color:#57606a;font-size:13px}"
)


def _e(text: object) -> str:
    return html.escape("" if text is None else str(text))


def _at(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _page(title: str, body: list[str]) -> HTMLResponse:
    text = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(title)}</title>"
        f"<style>{_STYLE}</style></head><body>{''.join(body)}</body></html>"
    )
    return HTMLResponse(text)


def _not_found(what: str) -> HTMLResponse:
    page = _page("Not Found", [f"<h1>Not Found</h1><p>{_e(what)}</p>"])
    page.status_code = 404
    return page


def render_issue(repo: Repo, issue: Issue) -> list[str]:
    """The page body of one issue or pull request (reviews, inline comments, conversation)."""
    kind = "Pull request" if issue.pull is not None else "Issue"
    parts = [
        f"<p class='meta'>{_e(repo.full_name)} · sandbox GitHub</p>",
        f"<h1>{_e(issue.title)} <span class='meta'>#{issue.number}</span></h1>",
        f"<p class='meta'>{kind} by {_e(issue.user_login)}, {_e(issue.state)}</p>",
        f"<pre>{_e(issue.body or '')}</pre>",
    ]
    pull = issue.pull
    if pull is not None:
        parts.append(f"<p class='meta'>head {_e(pull.head_sha[:7])} ({_e(pull.head_ref)})</p>")
        comments = {c.id: c for c in pull.review_comments}
        for review in pull.reviews:
            parts.append(
                f"<section id='pullrequestreview-{review.id}'>"
                f"<p class='meta'>{_e(review.user_login)} reviewed ({_e(review.state)}) at "
                f"commit {_e(review.commit_id[:7])}, {_at(review.at)}</p>"
                f"<pre>{_e(review.body)}</pre>"
            )
            for comment_id in review.comment_ids:
                c = comments.get(comment_id)
                if c is not None:
                    parts.append(
                        f"<div id='discussion_r{c.id}'><p class='meta'>{_e(c.path)}:"
                        f"{_e(c.line)}</p><pre>{_e(c.body)}</pre></div>"
                    )
            parts.append("</section>")
    for comment in issue.comments:
        parts.append(
            f"<section id='issuecomment-{comment.id}'><p class='meta'>"
            f"{_e(comment.user_login)} commented, {_at(comment.at)}</p>"
            f"<pre>{_e(comment.body)}</pre></section>"
        )
    return parts


def add_web_pages(app: FastAPI, state: SandboxState) -> None:
    """``/{owner}/{repo}/pull/{n}`` and ``/{owner}/{repo}/issues/{n}``, as github.com has them."""

    def show(owner: str, name: str, number: int) -> HTMLResponse:
        with state.lock:
            repo = state.find_repo(f"{owner}/{name}")
            issue = repo.issues.get(number) if repo is not None else None
            if repo is None or issue is None:
                return _not_found(f"{owner}/{name}#{number} is not in this sandbox")
            body = render_issue(repo, issue)
            title = f"{issue.title} · {repo.full_name}#{number}"
        return _page(title, body)

    async def pull_page(owner: str, name: str, number: int) -> HTMLResponse:
        return show(owner, name, number)

    async def issue_page(owner: str, name: str, number: int) -> HTMLResponse:
        return show(owner, name, number)

    app.add_api_route("/{owner}/{name}/pull/{number}", pull_page, methods=["GET"])
    app.add_api_route("/{owner}/{name}/issues/{number}", issue_page, methods=["GET"])
