"""An App's webhook deliveries: list them, read one, ask for one again (App JWT only).

As "REST API endpoints for GitHub App webhooks" (docs.github.com/en/rest/apps/webhooks)
describes them: ``GET /app/hook/deliveries`` lists the attempts newest first, ``per_page`` at
most 100, paged by an opaque ``cursor`` named in the ``Link`` header's ``rel="next"`` (not by
``page``); ``GET /app/hook/deliveries/{delivery_id}`` adds the request's headers and payload and
the response; ``POST /app/hook/deliveries/{delivery_id}/attempts`` answers 202 and the attempt
is made later, under the same ``X-GitHub-Delivery`` guid, flagged ``redelivery``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from sandbox.github.clock import iso
from sandbox.github.errors import ApiError, not_found
from sandbox.github.gate import Ctx, Reply, Route
from sandbox.github.hook_log import HookAttempt

CURSOR_PREFIX = "v1_"


def _summary(attempt: HookAttempt) -> dict[str, Any]:
    return {
        "id": attempt.id,
        "guid": attempt.guid,
        "delivered_at": iso(attempt.delivered_at),
        "redelivery": attempt.redelivery,
        "duration": attempt.duration,
        "status": attempt.status,
        "status_code": attempt.status_code,
        "event": attempt.event,
        "action": attempt.action,
        "installation_id": attempt.installation_id,
        "repository_id": attempt.repository_id,
        "throttled_at": None,
    }


def _app_id(ctx: Ctx) -> int:
    app = ctx.identity.app
    assert app is not None
    return app.id


def list_deliveries(ctx: Ctx) -> Reply:
    attempts = ctx.state.hook_log.of_app(_app_id(ctx))
    try:
        per_page = min(100, max(1, int(ctx.query.get("per_page", "30"))))
    except ValueError:
        raise ApiError(400, "Invalid request: per_page must be an integer.") from None
    cursor = ctx.query.get("cursor")
    if cursor:
        try:
            start = int(cursor.removeprefix(CURSOR_PREFIX))
        except ValueError:
            raise ApiError(422, "Invalid cursor.") from None
        attempts = [a for a in attempts if a.id <= start]
    chunk, rest = attempts[:per_page], attempts[per_page:]
    headers = {}
    if rest:
        headers["link"] = f'<{_with_cursor(ctx.url, CURSOR_PREFIX + str(rest[0].id))}>; rel="next"'
    return Reply([_summary(a) for a in chunk], headers=headers)


def _with_cursor(url: str, cursor: str) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "cursor"] + [("cursor", cursor)]
    return urlunsplit(parts._replace(query=urlencode(query)))


def _attempt(ctx: Ctx) -> HookAttempt:
    try:
        wanted = int(ctx.params["delivery_id"])
    except (KeyError, ValueError):
        raise not_found() from None
    found = ctx.state.hook_log.find(_app_id(ctx), wanted)
    if found is None:
        raise not_found()
    return found


def get_delivery(ctx: Ctx) -> Reply:
    attempt = _attempt(ctx)
    return Reply(
        {
            **_summary(attempt),
            "url": "",
            "request": {"headers": _shown(attempt.headers), "payload": attempt.payload},
            "response": {"headers": {}, "payload": attempt.response or None},
        }
    )


def _shown(headers: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() != "content-type"}


def redeliver(ctx: Ctx) -> Reply:
    ctx.state.hook_log.request_redelivery(_attempt(ctx))
    return Reply({}, status=202)


ROUTES = [
    Route("GET", "/app/hook/deliveries", list_deliveries, auth="jwt"),
    Route("GET", "/app/hook/deliveries/{delivery_id}", get_delivery, auth="jwt"),
    Route("POST", "/app/hook/deliveries/{delivery_id}/attempts", redeliver, auth="jwt"),
]
