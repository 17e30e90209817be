"""A run's output, kept within its cap: the head and the tail of what it printed, with a line
saying how much was cut between them (a failing test suite says what failed at its end)."""

from __future__ import annotations

# Drained beyond its cap, output still costs our CPU: past this many times the cap, the run is
# stopped as a flood rather than read until its wall time ends.
FLOOD_FACTOR = 64


class CappedOutput:
    """Bytes as they arrive; keeps the first and last halves of ``cap`` bytes."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.total = 0
        self._head = bytearray()
        self._tail = bytearray()
        self._tail_cap = cap // 2
        self._head_cap = cap - self._tail_cap

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk and self._tail_cap:
            self._tail += chunk
            del self._tail[: max(0, len(self._tail) - self._tail_cap)]

    @property
    def truncated(self) -> bool:
        return self.total > self.cap

    @property
    def flooding(self) -> bool:
        return self.total > self.cap * FLOOD_FACTOR

    def text(self) -> str:
        """The kept bytes as text (undecodable bytes replaced), the cut marked."""
        head = self._head.decode("utf-8", "replace")
        if not self.truncated:
            return head + self._tail.decode("utf-8", "replace")
        cut = self.total - len(self._head) - len(self._tail)
        note = f"\n[... {cut} bytes cut: the output passed its cap of {self.cap} bytes ...]\n"
        return head + note + self._tail.decode("utf-8", "replace")
