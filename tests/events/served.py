"""``swarm webhook serve`` as a real process under uvicorn on a free port, for tests that talk to
it over real sockets; its output goes to a file the test can read."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.events.harness import SECRET


@dataclass(frozen=True)
class Served:
    url: str
    output: Path
    pid: int

    def log(self) -> str:
        return self.output.read_text(errors="replace")


def limit_files(count: int) -> Callable[[], None]:
    """Run in the child before it starts: at most ``count`` open files, soft and hard."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (count, count))

    return limit


@contextmanager
def serving(
    port: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    files: int | None = None,
) -> Iterator[Served]:
    """``swarm webhook serve`` on ``port`` (with at most ``files`` open files when given), until
    the block ends."""
    secret_file = tmp_path / "webhook-secret"
    secret_file.write_text(SECRET + "\n")
    monkeypatch.setenv("SWARM_WEBHOOK_SECRET_FILE", str(secret_file))
    output = tmp_path / f"webhook-serve-{port}.log"
    with output.open("w") as sink:
        # A deployment is named so the server needs no local Prefect server; nothing enqueues.
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "flows",
                "webhook",
                "serve",
                "--port",
                str(port),
                "--deployment",
                "swarm-run/unused",
            ],
            env=dict(os.environ),
            stdout=sink,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=limit_files(files) if files is not None else None,
        )
    served = Served(f"http://127.0.0.1:{port}", output, proc.pid)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{served.url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"webhook server did not start: {served.log()[-2000:]}")
            time.sleep(0.2)
        yield served
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
