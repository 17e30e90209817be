"""What one confined run may use: wall time, CPU time, memory, output, processes, file sizes.

The kernel enforces all but two of them as resource limits set by ``prlimit`` inside the sandbox,
before the repository's command starts: CPU seconds, address space, processes, the largest file,
no core dumps. A fresh user namespace counts processes per namespace, so ``processes`` bounds
the run's own processes, not the account's. The wall clock and the output cap are the runner's
(:mod:`agents.confine.runner`); the writable tmpfs folders are bounded by ``scratch_bytes``.
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """The bounds of one run; every value must be positive."""

    wall_seconds: float = 300.0
    cpu_seconds: int = 240
    memory_bytes: int = 1024 * MIB
    output_bytes: int = 256 * 1024
    processes: int = 64
    file_bytes: int = 64 * MIB
    # The size of each in-memory folder the run may write besides its copy (/tmp, HOME,
    # /dev/shm): without a size a tmpfs grows with what is written into it, into the host's RAM.
    scratch_bytes: int = 64 * MIB

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not value > 0:
                raise ValueError(f"limits.{name} must be positive, not {value!r}")

    def prlimit_args(self) -> list[str]:
        """``prlimit`` options setting the kernel-enforced limits (soft = hard, except CPU time:
        SIGXCPU at the limit, then SIGKILL a second later if the process catches it)."""
        return [
            f"--cpu={self.cpu_seconds}:{self.cpu_seconds + 1}",
            f"--as={self.memory_bytes}",
            f"--nproc={self.processes}",
            f"--fsize={self.file_bytes}",
            "--core=0",
        ]
