"""An App's webhook deliveries as GitHub keeps them: every attempt, its answer, and redeliveries.

GitHub records each attempt to deliver an App's webhook (the first one and every redelivery)
with its numeric ``id``, the delivery's ``guid`` (the ``X-GitHub-Delivery`` header, the same
for a redelivery as for the first attempt), ``redelivery``, ``status`` (``OK`` or the failure's
text) and ``status_code`` (the receiver's HTTP answer; 0 when none came), and lists them newest
first under ``GET /app/hook/deliveries`` ("REST API endpoints for GitHub App webhooks",
docs.github.com/en/rest/apps/webhooks). It does not redeliver a failed one by itself
("Handling failed webhook deliveries",
docs.github.com/en/webhooks/using-webhooks/handling-failed-webhook-deliveries):
``POST /app/hook/deliveries/{delivery_id}/attempts`` asks for it, and the attempt is made later
(202). The words of a failure's ``status`` here ("failed to connect to host", "Invalid HTTP
Response: 503") are a belief: the docs say only that a failed delivery's status is not ``OK``.

This module imports nothing else of the sandbox: :class:`SandboxState` holds one :class:`HookLog`,
``webhooks.py`` records the attempts it makes, ``routes_hooks.py`` serves them.
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class HookAttempt:
    """One attempt to deliver a webhook, as GitHub lists it."""

    id: int
    app_id: int
    guid: str
    event: str
    body: bytes
    headers: dict[str, str]
    delivered_at: float
    redelivery: bool
    duration: float
    status: str
    status_code: int
    response: str = ""

    @property
    def payload(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.body)
        return loaded

    @property
    def action(self) -> str | None:
        action = self.payload.get("action")
        return action if isinstance(action, str) else None

    @property
    def installation_id(self) -> int | None:
        inst = self.payload.get("installation")
        return inst.get("id") if isinstance(inst, dict) else None

    @property
    def repository_id(self) -> int | None:
        repo = self.payload.get("repository")
        return repo.get("id") if isinstance(repo, dict) else None


def status_text(status_code: int | None, error: str | None) -> str:
    """``OK`` for a 2xx answer; otherwise the failure, as GitHub words it (a belief: see above)."""
    if status_code is None or status_code == 0:
        return error or "failed to connect to host"
    if 200 <= status_code < 300:
        return "OK"
    return f"Invalid HTTP Response: {status_code}"


@dataclass
class HookLog:
    """Every App's delivery attempts, oldest first, and the redeliveries asked for."""

    attempts: list[HookAttempt] = field(default_factory=list)
    # Attempts whose redelivery was asked for (POST .../attempts), not yet made.
    requested: list[HookAttempt] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(70_000_001))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(
        self,
        *,
        app_id: int,
        guid: str,
        event: str,
        body: bytes,
        headers: dict[str, str],
        at: float,
        redelivery: bool,
        duration: float,
        status_code: int | None,
        error: str | None = None,
        response: str = "",
    ) -> HookAttempt:
        with self._lock:
            attempt = HookAttempt(
                id=next(self._ids),
                app_id=app_id,
                guid=guid,
                event=event,
                body=body,
                headers=dict(headers),
                delivered_at=at,
                redelivery=redelivery,
                duration=round(duration, 2),
                status=status_text(status_code, error),
                status_code=status_code or 0,
                response=response,
            )
            self.attempts.append(attempt)
            return attempt

    def of_app(self, app_id: int) -> list[HookAttempt]:
        """The App's attempts, newest first (GitHub's order)."""
        with self._lock:
            found = [a for a in self.attempts if a.app_id == app_id]
        return sorted(found, key=lambda a: a.id, reverse=True)

    def find(self, app_id: int, attempt_id: int) -> HookAttempt | None:
        with self._lock:
            for attempt in self.attempts:
                if attempt.id == attempt_id and attempt.app_id == app_id:
                    return attempt
        return None

    def request_redelivery(self, attempt: HookAttempt) -> None:
        with self._lock:
            self.requested.append(attempt)

    def take_requested(self, app_id: int) -> list[HookAttempt]:
        """The App's redeliveries asked for, oldest first; they are no longer pending."""
        with self._lock:
            taken = [a for a in self.requested if a.app_id == app_id]
            self.requested = [a for a in self.requested if a.app_id != app_id]
        return taken
