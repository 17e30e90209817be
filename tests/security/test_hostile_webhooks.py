"""Trust class 8 of issue 24, signed but hostile webhook bodies.

The attack: whoever holds the webhook secret (or a GitHub App misconfigured to deliver to the
wrong receiver) signs a body GitHub would never send: JSON nested 100,000 deep, a pull request
number of 2**70, an integer of thousands of digits, ``NaN``. The decoder's ``RecursionError``
and the store's integer overflow answered 500 (and a 500 makes GitHub redeliver). Each is a bad
request: 400 with an empty body, nothing recorded, nothing started, nothing written.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from agents.store import Store
from sandbox.github.seed import WIDGETS
from sandbox.github.webhooks import Delivery, signed_headers
from sandbox.server import SandboxServer
from tests.events.harness import SECRET, Events, receiver_over, sandbox_env, sandbox_server
from tests.store.backends import pg_session_url, sqlite_template, store, store_target

pytestmark = pytest.mark.anyio
__all__ = ["pg_session_url", "sandbox_server", "sqlite_template", "store", "store_target"]


@pytest.fixture
async def events(
    sandbox_server: SandboxServer, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Events]:
    sandbox_env(sandbox_server, tmp_path, monkeypatch)
    async with receiver_over(sandbox_server, store, max_body=1024 * 1024) as ready:
        yield ready


def _signed(event: str, body: bytes, delivery_id: str) -> Delivery:
    return Delivery(event, delivery_id, body, signed_headers(SECRET, event, delivery_id, body))


def _opened_payload(events: Events) -> dict[str, object]:
    events.state.add_pull(WIDGETS, "Add x", {"src/widgets/x.py": "X = 1\n"})
    [delivery] = events.hooks.take()
    return delivery.payload


def _with_number(number_text: str) -> Callable[[dict[str, object]], bytes]:
    def make(payload: dict[str, object]) -> bytes:
        pull = payload["pull_request"]
        assert isinstance(pull, dict)
        text = json.dumps({**payload, "pull_request": {**pull, "number": 7}})
        return text.replace('"number": 7', f'"number": {number_text}').encode()

    return make


HOSTILE: dict[str, Callable[[dict[str, object]], bytes]] = {
    "nested 100,000 deep": lambda _p: b"[" * 100_000 + b"]" * 100_000,
    "nested inside a real payload": lambda p: (
        json.dumps(p).encode()[:-1] + b', "x": ' + b'{"a":' * 50_000 + b"1" + b"}" * 50_000 + b"}"
    ),
    "a PR number of 2**70": _with_number(str(2**70)),
    "a PR number of 5,000 digits": _with_number("9" * 5_000),
    "a PR number of NaN": _with_number("NaN"),
    "an installation id of -2**70": lambda p: (
        json.dumps(p)
        .replace('"installation": {"id": ', f'"installation": {{"id": -{2**70}, "x": ')
        .encode()
    ),
    "not JSON at all": lambda _p: b"\xff\xfe{not json",
}


@pytest.mark.parametrize("shape", list(HOSTILE), ids=list(HOSTILE))
async def test_a_signed_hostile_body_gets_400_with_no_detail_and_starts_nothing(
    events: Events, shape: str
) -> None:
    body = HOSTILE[shape](_opened_payload(events))
    response = await events.post(_signed("pull_request", body, f"hostile-{len(body)}"))
    assert (response.status_code, response.content) == (400, b"")
    assert events.store.get_delivery(f"hostile-{len(body)}") is None
    assert events.started.requests == []
    assert events.bot_writes() == []


async def test_a_pr_number_github_could_send_but_no_column_holds_is_ignored_not_a_500(
    events: Events,
) -> None:
    # Within 64 bits, past the 32 bits of an issue number: well-formed JSON, but no PR.
    body = _with_number(str(2**40))(_opened_payload(events))
    response = await events.post(_signed("pull_request", body, "wide-number"))
    assert (response.status_code, response.json()["status"]) == (200, "ignored")
    record = events.store.get_delivery("wide-number")
    assert record is not None and record.number is None
    assert events.started.requests == []


async def test_the_same_payload_with_a_real_number_still_starts_its_review(
    events: Events,
) -> None:
    payload = _opened_payload(events)
    body = json.dumps(payload).encode()
    response = await events.post(_signed("pull_request", body, "a-real-one"))
    assert response.status_code == 202
    assert len(events.started.requests) == 1
