"""Prompts go only where swarm is configured to send them: never to a host proxy variable.

A loopback listener stands in for a proxy the host environment names (``HTTPS_PROXY`` and
friends). The LLM client must reach the model directly and the listener must receive nothing;
only an explicitly configured proxy gets the request.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from agents.llm.client import LLMClient, LLMUnavailable
from agents.ratelimit.anthropic.limits import LLMLimits
from agents.ratelimit.anthropic.throttle import KeyMetering
from sandbox.model import ScriptedModel, ScriptedServer

KEY = "sk-ant-api03-PROXYPLANTED-do-not-leak"


class Listener:
    """A TCP listener on loopback that records whatever connects to it and then hangs up."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(8)
        self._sock.settimeout(0.2)
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1.0)
                try:
                    self.received.append(conn.recv(65536))
                except OSError:
                    self.received.append(b"")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self._sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    found = Listener()
    yield found
    found.close()


def _request() -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-6",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "a prompt that must not reach a proxy"}],
    }


@pytest.fixture
def host_proxy(listener: Listener, monkeypatch: pytest.MonkeyPatch) -> Listener:
    """The listener, named by every proxy variable of the host environment."""
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy"):
        monkeypatch.setenv(name, listener.url)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    return listener


@pytest.fixture
def model_server() -> Iterator[ScriptedServer]:
    with ScriptedServer(ScriptedModel()) as server:
        yield server


def test_a_host_proxy_variable_receives_nothing(
    host_proxy: Listener, model_server: ScriptedServer
) -> None:
    async def go() -> Any:
        client = LLMClient(api_key=KEY, base_url=model_server.url)
        try:
            return await client.create(_request())
        finally:
            await client.aclose()

    result = asyncio.run(go())
    assert result.stop_reason == "end_turn"
    assert len(model_server.model.requests) == 1  # the model itself got the prompt
    assert host_proxy.received == []


def test_the_planted_proxy_would_have_received_the_prompt_without_that_guard(
    host_proxy: Listener,
) -> None:
    # The control: the SDK's default HTTP client does read the variables.
    import anthropic

    async def go() -> None:
        sdk = anthropic.AsyncAnthropic(api_key=KEY, base_url="http://127.0.0.1:9", max_retries=0)
        try:
            with pytest.raises(anthropic.APIConnectionError):
                await sdk.messages.create(**_request())
        finally:
            await sdk.close()

    asyncio.run(go())
    assert host_proxy.received and b"POST http://127.0.0.1:9/v1/messages" in host_proxy.received[0]


def test_an_explicit_proxy_setting_is_used(listener: Listener) -> None:
    async def go() -> None:
        client = LLMClient(
            api_key=KEY,
            base_url="http://127.0.0.1:9",
            proxy=listener.url,
            metering=KeyMetering(LLMLimits(max_transient_retries=0)),
        )
        try:
            with pytest.raises(LLMUnavailable) as err:
                await client.create(_request())
            assert KEY not in str(err.value)
        finally:
            await client.aclose()

    asyncio.run(go())
    assert listener.received and b"POST http://127.0.0.1:9/v1/messages" in listener.received[0]


def _through_settings(
    monkeypatch: pytest.MonkeyPatch, base_url: str, proxy: str | None = None
) -> Any:
    """One request as a run makes it: settings from the environment, then ``open_model``."""
    from agents.settings.model import load_settings
    from flows.run.models import open_model

    for name in list(os.environ):
        if name.startswith("SWARM_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
    if proxy is not None:
        monkeypatch.setenv("SWARM_LLM_PROXY", proxy)
    chosen = open_model(load_settings(), "claude-sonnet-4-6")

    async def go() -> Any:
        try:
            return await chosen.client.create(_request())
        finally:
            await chosen.client.aclose()

    return asyncio.run(go())


def test_a_run_configured_from_the_environment_ignores_the_host_proxy(
    host_proxy: Listener, model_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _through_settings(monkeypatch, model_server.url)
    assert result.stop_reason == "end_turn"
    assert len(model_server.model.requests) == 1
    assert host_proxy.received == []


def test_swarm_llm_proxy_is_the_one_proxy_a_run_uses(
    listener: Listener, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing listens on port 9: only the proxy can have seen the request.
    with pytest.raises(LLMUnavailable) as err:
        _through_settings(monkeypatch, "http://127.0.0.1:9", proxy=listener.url)
    assert KEY not in str(err.value)
    assert listener.received and b"POST http://127.0.0.1:9/v1/messages" in listener.received[0]
