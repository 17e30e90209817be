"""Two sandbox GitHubs started at once on one port: the one that loses is told in its caller, with
an ``OSError``, so ``swarm sandbox serve`` goes on to a free port (its documented fallback)."""

from __future__ import annotations

import socket
import threading

from sandbox.server import SandboxServer


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_two_sandboxes_starting_at_once_on_one_port_leave_the_loser_an_oserror() -> None:
    # Both bind with SO_REUSEADDR, which Linux allows while neither listens: the loser used to
    # learn only in uvicorn's thread, as a RuntimeError the CLI's fallback does not catch.
    for _ in range(10):
        port = _free_port()
        barrier = threading.Barrier(2)
        outcomes: list[object] = []

        def start(port: int = port, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            try:
                outcomes.append(SandboxServer(port=port).start())
            except Exception as exc:  # what the CLI would see
                outcomes.append(exc)

        threads = [threading.Thread(target=start) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        started = [o for o in outcomes if isinstance(o, SandboxServer)]
        try:
            assert len(started) == 1, outcomes
            assert all(isinstance(o, OSError) for o in outcomes if o not in started), outcomes
        finally:
            for server in started:
                server.stop()
