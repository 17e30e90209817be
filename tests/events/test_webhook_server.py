"""``swarm webhook serve`` as a real process under uvicorn on a free port, fed by the sandbox's
own HTTP deliveries: health, a forged delivery, a delivery it ignores, a redelivery."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from agents.store import Store
from sandbox.github.seed import MAINTAINER, WIDGETS, WIDGETS_PR_CLEAN
from sandbox.github.webhooks import Forwarder, SandboxWebhooks, signed_headers
from sandbox.server import SandboxServer
from tests.events.harness import SECRET, sandbox_env, sandbox_server
from tests.events.served import serving
from tests.ports import closed_port

__all__ = ["sandbox_server"]


@pytest.fixture
def served(
    sandbox_server: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    sandbox_env(sandbox_server, tmp_path, monkeypatch)
    with serving(closed_port(), tmp_path, monkeypatch) as receiver:
        yield receiver.url


def test_a_real_server_checks_signatures_records_and_dedupes_deliveries(
    served: str, sandbox_server: SandboxServer, tmp_path: Path
) -> None:
    hooks = SandboxWebhooks(sandbox_server.state, SECRET, api_url=sandbox_server.url)
    sandbox_server.state.add_comment(WIDGETS, WIDGETS_PR_CLEAN, "Thanks!", author=MAINTAINER)
    [delivery] = hooks.take()
    forged = {**delivery.headers, "X-Hub-Signature-256": "sha256=" + "1" * 64}
    answer = httpx.post(f"{served}/github/webhook", content=delivery.body, headers=forged)
    assert (answer.status_code, answer.content) == (401, b"")
    # Signed but nested past any decoder: a bad request under uvicorn too, never a 500.
    deep = b"[" * 100_000 + b"]" * 100_000
    hostile = signed_headers(SECRET, "pull_request", "deep-1", deep)
    answer = httpx.post(f"{served}/github/webhook", content=deep, headers=hostile)
    assert (answer.status_code, answer.content) == (400, b"")

    hooks.pending.append(delivery)
    hooks.pending.append(delivery)
    assert hooks.post_pending(f"{served}/github/webhook") == [200, 200]
    with Store.open(None, tmp_path / "data") as store:
        record = store.get_delivery(delivery.delivery_id)
    assert record is not None
    assert (record.event, record.outcome, record.detail) == (
        "issue_comment",
        "ignored",
        f"issue_comment.created: feedback on {WIDGETS}#{WIDGETS_PR_CLEAN}: "
        f"the bot has not reviewed {WIDGETS}#{WIDGETS_PR_CLEAN}",
    )


def _until(what: str, check: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s: {what}")
        time.sleep(0.2)


def test_a_receiver_that_starts_has_github_send_again_what_failed_while_it_was_down(
    sandbox_server: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox_env(sandbox_server, tmp_path, monkeypatch)
    monkeypatch.setenv("SWARM_WEBHOOK_RECOVERY_INTERVAL_S", "1")
    state, port = sandbox_server.state, closed_port()
    hooks = SandboxWebhooks(state, SECRET, api_url=sandbox_server.url)
    app_id = hooks._app().id
    # GitHub sends as things happen, to a receiver that is down: connection refused.
    sent: list[str] = []
    forwarder = Forwarder(
        hooks, f"http://127.0.0.1:{port}/github/webhook", interval_s=0.1, report=sent.append
    ).start()
    try:
        for text in ("Thanks!", "Looks good.", "Any news?"):
            state.add_comment(WIDGETS, WIDGETS_PR_CLEAN, text, author=MAINTAINER)
        _until("3 failed deliveries", lambda: len(state.hook_log.of_app(app_id)) == 3)
        failed = [a.guid for a in state.hook_log.of_app(app_id)]
        assert {a.status_code for a in state.hook_log.of_app(app_id)} == {0}

        with serving(port, tmp_path, monkeypatch):
            # At start and every second after, it reads the log and asks for each once.
            _until("3 redeliveries answered", lambda: len(state.hook_log.of_app(app_id)) == 6)
            time.sleep(3)  # three more passes: nothing more is asked for
        log = state.hook_log.of_app(app_id)
    finally:
        forwarder.stop()
        hooks.close()
    again = [a for a in log if a.redelivery]
    assert sorted(a.guid for a in again) == sorted(failed)
    assert {(a.status, a.status_code) for a in again} == {("OK", 200)}
    assert len(log) == 6
    with Store.open(None, tmp_path / "data") as store:
        assert store.known_delivery_ids(failed) == set(failed)
