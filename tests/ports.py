"""A loopback port nothing listens on, for "GitHub cannot be reached" without DNS or waiting."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def port_taken(port: int) -> Iterator[None]:
    """``port`` held by something else while the block runs: bound here when free, or already
    held by another program (on a shared machine, often another Prefect server)."""
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
            sock.listen()
        except OSError:
            pass  # someone else holds it: just as good
        yield
