"""Signed webhook deliveries of what happens in the sandbox, shaped as GitHub sends them.

Attach :class:`SandboxWebhooks` to a state and every PR opened, commit pushed, closed, reopened
or marked ready, comment posted, reply to a review comment, thread resolved or issue opened
becomes a :class:`Delivery`; :meth:`SandboxWebhooks.ping` and the ``installation`` methods make
the App's own deliveries. Each payload carries what GitHub's carries (tests validate them
against githubkit's webhook models, generated from GitHub's schema), with the headers GitHub
sends (``X-GitHub-Event``, ``X-GitHub-Delivery``, ``X-Hub-Signature-256`` over the exact
body). Tests take them and post them with the client they like;
:meth:`SandboxWebhooks.post_pending` sends them to a URL, as GitHub would, and logs each attempt
and its answer in the state's :class:`~sandbox.github.hook_log.HookLog` (a receiver that is down
makes a failed delivery there), which ``GET /app/hook/deliveries`` lists; a redelivery asked for
there is sent with the next ones taken.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from sandbox.github import render, render_pulls
from sandbox.github.clock import iso
from sandbox.github.feedback import thread_of
from sandbox.github.model import App, Issue, IssueComment, Label, Repo, ReviewComment, User
from sandbox.github.render import Urls
from sandbox.github.seed import REVIEWER_INSTALLATION_ID
from sandbox.github.state import SandboxState


@dataclass(frozen=True)
class Delivery:
    event: str
    delivery_id: str
    body: bytes
    headers: dict[str, str]
    # A redelivery GitHub was asked for: the same guid, body and headers as the first attempt.
    redelivery: bool = False

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
        label: Label | None = None,
        by: str | None = None,
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
                sender = comment.thread_changed_by or sender
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
        if action == "synchronize" and issue.pull is not None:
            # The push's range, as GitHub names it: the head before and after.
            shas = issue.pull.commit_shas
            payload["before"] = shas[-2] if len(shas) > 1 else issue.pull.base_sha
            payload["after"] = issue.pull.head_sha
        if label is not None:
            # ``labeled``: the label added (docs: webhook-events-and-payloads#issues).
            payload["label"] = render.label(self.urls, repo, label)
        sender = by or sender
        payload["repository"] = render.repo(self.urls, repo, now)
        if repo.owner.type == "Organization":
            payload["organization"] = self._organization(repo.owner)
        payload["sender"] = render.user(self.urls, users[sender])
        payload["installation"] = self._installation_ref()
        self.pending.append(self.make(event, payload))

    def _installation_ref(self) -> dict[str, Any]:
        """The installation as every App event names it: its id and (legacy-format) node id."""
        legacy = f"023:IntegrationInstallation{self.installation_id}".encode()
        return {"id": self.installation_id, "node_id": base64.b64encode(legacy).decode()}

    def _organization(self, org: User) -> dict[str, Any]:
        base = f"{self.urls.api}/orgs/{org.login}"
        return {
            "login": org.login,
            "id": org.id,
            "node_id": render.node_id("O", org.id),
            "url": base,
            "repos_url": f"{base}/repos",
            "events_url": f"{base}/events",
            "hooks_url": f"{base}/hooks",
            "issues_url": f"{base}/issues",
            "members_url": f"{base}/members{{/member}}",
            "public_members_url": f"{base}/public_members{{/member}}",
            "avatar_url": f"{self.urls.web}/avatars/{org.id}",
            "description": None,
        }

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

    # -- the App's own events: no repository's change, sent to the App's webhook ----------------

    def ping(self) -> Delivery:
        """The delivery GitHub sends first to a new or edited App webhook: a zen line and the
        hook's settings, naming no repository."""
        app = self._app()
        at = iso(self.state.clock.now())
        hook = {
            "type": "App",
            "id": 1,
            "name": "web",
            "active": True,
            "events": list(app.events),
            "config": {"content_type": "json", "insecure_ssl": "0", "url": "https://swarm.test"},
            "updated_at": at,
            "created_at": at,
            "app_id": app.id,
            "deliveries_url": f"{self.urls.api}/app/hook/deliveries",
        }
        payload = {"zen": "Design for failure.", "hook_id": 1, "hook": hook}
        return self.queue("ping", payload)

    def installation(self, action: str, by: str) -> Delivery:
        """``installation`` (created, deleted, suspend, ...) of this sandbox's installation, by
        ``by``, with the repositories it covers."""
        inst = self.state.installations[self.installation_id]
        payload = {
            "action": action,
            "installation": self._installation(),
            "repositories": [self._repo_ref(r) for r in self.state.installation_repos(inst)],
            "requester": None,
            "sender": render.user(self.urls, self.state.users[by]),
        }
        return self.queue("installation", payload)

    def installation_repositories(
        self, action: str, by: str, added: list[str], removed: list[str]
    ) -> Delivery:
        """``installation_repositories`` added or removed: repositories given to or taken from
        the installation (its selection is then "selected")."""
        payload = {
            "action": action,
            "installation": self._installation(),
            "repository_selection": "selected",
            "repositories_added": [self._repo_ref(self.state.repo(n)) for n in added],
            "repositories_removed": [self._repo_ref(self.state.repo(n)) for n in removed],
            "requester": None,
            "sender": render.user(self.urls, self.state.users[by]),
        }
        return self.queue("installation_repositories", payload)

    def _app(self) -> App:
        return self.state.apps[self.state.installations[self.installation_id].app_id]

    def _installation(self) -> dict[str, Any]:
        """The installation in full, as ``installation`` events carry it."""
        inst = self.state.installations[self.installation_id]
        account = self.state.users[inst.account_login]
        app, at = self._app(), iso(self.state.clock.now() - 86400)
        body = render.installation(self.urls, inst, account)
        return {
            **body,
            "node_id": self._installation_ref()["node_id"],
            "repositories_url": f"{self.urls.api}/installation/repositories",
            "html_url": f"{self.urls.web}/organizations/{account.login}/settings/installations/"
            f"{inst.id}",
            "app_slug": app.slug,
            "client_id": f"Iv1.{app.id:016x}",
            "target_id": account.id,
            "events": list(app.events),
            "created_at": at,
            "updated_at": at,
            "single_file_name": None,
            "has_multiple_single_files": False,
            "single_file_paths": [],
            "suspended_by": None,
            "suspended_at": None,
        }

    @staticmethod
    def _repo_ref(repo: Repo) -> dict[str, Any]:
        return {
            "id": repo.id,
            "node_id": render.node_id("R", repo.id),
            "name": repo.name,
            "full_name": repo.full_name,
            "private": repo.private,
        }

    def queue(self, event: str, payload: dict[str, Any]) -> Delivery:
        """A delivery of ``payload`` made and left pending, as a change's would be."""
        delivery = self.make(event, payload)
        with self.state.lock:
            self.pending.append(delivery)
        return delivery

    def make(self, event: str, payload: dict[str, Any], delivery_id: str | None = None) -> Delivery:
        """A delivery of ``payload``, signed with this sandbox's secret."""
        body = json.dumps(payload, separators=(",", ":")).encode()
        delivery_id = delivery_id or str(uuid.uuid4())
        return Delivery(
            event, delivery_id, body, signed_headers(self.secret, event, delivery_id, body)
        )

    def take(self) -> list[Delivery]:
        """The deliveries collected so far, oldest first, then the redeliveries asked for
        (``POST /app/hook/deliveries/{id}/attempts``); the queue is emptied."""
        with self.state.lock:
            taken, self.pending = self.pending, []
        again = self.state.hook_log.take_requested(self._app().id)
        return taken + [
            Delivery(a.event, a.guid, a.body, a.headers, redelivery=True) for a in again
        ]

    def record(
        self,
        delivery: Delivery,
        status_code: int | None,
        *,
        error: str | None = None,
        duration: float = 0.0,
        response: str = "",
    ) -> None:
        """Log an attempt to deliver ``delivery`` as GitHub does: its answer's status code, or
        None when no answer came (``error`` says why: refused, timed out)."""
        self.state.hook_log.record(
            app_id=self._app().id,
            guid=delivery.delivery_id,
            event=delivery.event,
            body=delivery.body,
            headers=delivery.headers,
            at=self.state.clock.now(),
            redelivery=delivery.redelivery,
            duration=duration,
            status_code=status_code,
            error=error,
            response=response,
        )

    def attempt(self, client: httpx.Client, url: str, delivery: Delivery) -> int | None:
        """One attempt, as GitHub makes it, logged; the answer's status code, or None."""
        started = time.monotonic()
        try:
            answer = client.post(url, content=delivery.body, headers=delivery.headers)
        except httpx.TimeoutException:
            self.record(delivery, None, error="timed out", duration=time.monotonic() - started)
            return None
        except httpx.HTTPError:
            # What GitHub logs when nothing listens (a receiver down or restarting).
            self.record(delivery, None, duration=time.monotonic() - started)
            return None
        self.record(
            delivery,
            answer.status_code,
            duration=time.monotonic() - started,
            response=answer.text[:1000],
        )
        return answer.status_code

    def post_pending(self, url: str, *, timeout: float = 10.0) -> list[int | None]:
        """Send every pending delivery to ``url``, each attempt logged; the status codes, in
        order (None: no answer, a failed delivery)."""
        with httpx.Client(timeout=timeout) as client:
            return [self.attempt(client, url, d) for d in self.take()]


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
                    if delivery.redelivery:
                        what += " (redelivery)"
                    status = self.hooks.attempt(client, self.url, delivery)
                    shown = "not delivered" if status is None else str(status)
                    self.report(f"webhook {what} {delivery.delivery_id}: {shown}")
