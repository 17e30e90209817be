"""Signed webhook deliveries of what happens in the sandbox, shaped as GitHub sends them.

Attach :class:`SandboxWebhooks` to a state and every PR opened, commit pushed, comment posted,
reply to a review comment or issue opened becomes a :class:`Delivery` (``X-GitHub-Event``,
``X-GitHub-Delivery``, ``X-Hub-Signature-256`` over the exact body). Tests take them and post
them with the client they like; :meth:`SandboxWebhooks.post_pending` sends them to a URL, as
GitHub would.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from sandbox.github import render, render_pulls
from sandbox.github.feedback import thread_of
from sandbox.github.model import Issue, IssueComment, Repo, ReviewComment
from sandbox.github.render import Urls
from sandbox.github.seed import REVIEWER_INSTALLATION_ID
from sandbox.github.state import SandboxState


@dataclass(frozen=True)
class Delivery:
    event: str
    delivery_id: str
    body: bytes
    headers: dict[str, str]

    @property
    def payload(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.body)
        return loaded


def signed_headers(secret: str, event: str, delivery_id: str, body: bytes) -> dict[str, str]:
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {
        "Content-Type": "application/json",
        "User-Agent": "GitHub-Hookshot/sandbox",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery_id,
        "X-GitHub-Hook-ID": "1",
        "X-Hub-Signature-256": f"sha256={digest}",
    }


class SandboxWebhooks:
    """Collects a signed delivery for each change in ``state`` until taken or posted."""

    def __init__(
        self,
        state: SandboxState,
        secret: str,
        *,
        api_url: str = "http://127.0.0.1",
        installation_id: int = REVIEWER_INSTALLATION_ID,
    ) -> None:
        self.state = state
        self.secret = secret
        self.urls = Urls(api=api_url, web=api_url)
        self.installation_id = installation_id
        self.pending: list[Delivery] = []
        state.listeners.append(self._on_change)

    def close(self) -> None:
        if self._on_change in self.state.listeners:
            self.state.listeners.remove(self._on_change)

    def _on_change(
        self,
        event: str,
        action: str,
        repo: Repo,
        issue: Issue,
        comment: IssueComment | ReviewComment | None,
    ) -> None:
        users, now = self.state.users, self.state.clock.now()
        payload: dict[str, Any] = {"action": action}
        sender = issue.user_login
        if event.startswith("pull_request"):
            payload["number"] = issue.number
            payload["pull_request"] = render_pulls.pull(
                self.urls, repo, issue, users, now, full=True
            )
            if event == "pull_request_review_thread" and isinstance(comment, ReviewComment):
                payload["thread"] = self._thread(repo, comment)
                sender = comment.resolved_by or sender
            elif isinstance(comment, ReviewComment):
                payload["comment"] = render_pulls.review_comment(self.urls, repo, comment, users)
                sender = comment.user_login
        else:
            payload["issue"] = render_pulls.issue(self.urls, repo, issue, users)
            if isinstance(comment, IssueComment):
                payload["comment"] = render_pulls.issue_comment(
                    self.urls, repo, issue, comment, users
                )
                sender = comment.user_login
        payload["repository"] = render.repo(self.urls, repo, now)
        payload["sender"] = render.user(self.urls, users[sender])
        payload["installation"] = {"id": self.installation_id}
        self.pending.append(self.make(event, payload))

    def _thread(self, repo: Repo, root: ReviewComment) -> dict[str, Any]:
        """A review thread as ``pull_request_review_thread`` carries it: its node id (the one
        GraphQL's ``reviewThreads`` gives) and its comments, first one first."""
        users = self.state.users
        return {
            "node_id": render.node_id("PRRT", repo.id, root.id),
            "comments": [
                render_pulls.review_comment(self.urls, repo, c, users)
                for c in thread_of(repo, root)
            ],
        }

    def make(self, event: str, payload: dict[str, Any], delivery_id: str | None = None) -> Delivery:
        """A delivery of ``payload``, signed with this sandbox's secret."""
        body = json.dumps(payload, separators=(",", ":")).encode()
        delivery_id = delivery_id or str(uuid.uuid4())
        return Delivery(
            event, delivery_id, body, signed_headers(self.secret, event, delivery_id, body)
        )

    def take(self) -> list[Delivery]:
        """The deliveries collected so far, oldest first; the queue is emptied."""
        with self.state.lock:
            taken, self.pending = self.pending, []
        return taken

    def post_pending(self, url: str, *, timeout: float = 10.0) -> list[int]:
        """Send every pending delivery to ``url``; the status codes, in order."""
        with httpx.Client(timeout=timeout) as client:
            return [
                client.post(url, content=d.body, headers=d.headers).status_code for d in self.take()
            ]


class Forwarder:
    """Sends every delivery to ``url`` as it happens, from a thread of its own: GitHub's way,
    one attempt each, and what the receiver answered is reported (``swarm sandbox serve
    --webhook-url``)."""

    def __init__(
        self,
        hooks: SandboxWebhooks,
        url: str,
        *,
        interval_s: float = 0.2,
        report: Callable[[str], None] = print,
    ) -> None:
        self.hooks, self.url, self.interval_s, self.report = hooks, url, interval_s, report
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sandbox-webhooks", daemon=True)

    def start(self) -> Forwarder:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=15)

    def _run(self) -> None:
        with httpx.Client(timeout=10.0) as client:
            while not self._stop.wait(self.interval_s):
                for delivery in self.hooks.take():
                    what = f"{delivery.event}.{delivery.payload.get('action')}"
                    try:
                        answer = client.post(
                            self.url, content=delivery.body, headers=delivery.headers
                        )
                        self.report(f"webhook {what} {delivery.delivery_id}: {answer.status_code}")
                    except httpx.HTTPError as exc:
                        self.report(f"webhook {what} {delivery.delivery_id}: not delivered ({exc})")
