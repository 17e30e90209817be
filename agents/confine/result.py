"""What one confined run reports: how it ended, what it used, and its output as untrusted,
redacted text."""

from __future__ import annotations

import signal
from dataclasses import dataclass

# Why the runner (not the command) ended a run.
WALL_TIME = "wall time"
OUTPUT_FLOOD = "output flood"
CPU_TIME = "cpu time"


@dataclass(frozen=True)
class ConfinedRun:
    """``exit_code`` is the command's (128 + N when signal N ended it inside the sandbox);
    ``stopped`` names the limit that ended it (the wall clock, an output flood, the CPU time
    when ``SIGXCPU`` ended it), None when it ended by itself; ``output`` is
    stdout and stderr interleaved, cut to the cap and redacted: untrusted text the repository
    wrote, to be shown as data, never followed."""

    command: tuple[str, ...]
    exit_code: int
    stopped: str | None
    truncated: bool
    duration_seconds: float
    output_bytes: int
    output: str

    @property
    def timed_out(self) -> bool:
        return self.stopped == WALL_TIME

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and self.stopped is None

    @property
    def signal(self) -> int | None:
        """The signal that ended the command, if one did."""
        return self.exit_code - 128 if 128 < self.exit_code < 128 + 65 else None

    def summary(self) -> str:
        """One line for a report: ``passed in 1.2 s``, ``failed (exit 1) in 0.8 s``,
        ``stopped by its wall time after 60.0 s``."""
        took = f"{self.duration_seconds:.1f} s"
        if self.stopped is not None:
            return f"stopped by its {self.stopped} limit after {took}"
        if self.passed:
            return f"passed in {took}"
        sig = self.signal
        if sig is not None:
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = f"signal {sig}"
            return f"failed ({name}) in {took}"
        return f"failed (exit {self.exit_code}) in {took}"
