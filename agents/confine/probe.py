"""Whether a working sandbox is here: ``bwrap`` installed, and able to make its namespaces on
this kernel for the user it will run as (a container or a sysctl may forbid user namespaces).

Asked once per process and ``bwrap`` path, by running ``true`` through the very command line a
real run uses; the answer (either way) is kept. A refusal is one line that says what is missing
and how to get it.
"""

from __future__ import annotations

import shutil
import tempfile
from functools import cache
from pathlib import Path

from agents.confine.errors import SandboxUnavailable
from agents.confine.launch import give_to_sandbox, launch
from agents.confine.limits import Limits

INSTALL_HINT = "install Debian's bubblewrap (apt-get install bubblewrap)"
NOT_RUN = "so the repository's code is not run"
_PROBE_LIMITS = Limits(wall_seconds=20, cpu_seconds=10, output_bytes=4096)


def require_sandbox(bwrap: str | None = None) -> str:
    """The path of a ``bwrap`` that works here, or :class:`SandboxUnavailable`."""
    found = bwrap if bwrap is not None else shutil.which("bwrap")
    if found is None:
        raise SandboxUnavailable(f"no sandbox: bwrap is not installed, {NOT_RUN} ({INSTALL_HINT})")
    problem = _problem(found)
    if problem is not None:
        raise SandboxUnavailable(problem)
    return found


@cache
def _problem(bwrap: str) -> str | None:
    if not Path(bwrap).is_file():
        return f"no sandbox: {bwrap} does not exist, {NOT_RUN} ({INSTALL_HINT})"
    with tempfile.TemporaryDirectory(prefix="swarm-confine-probe-") as empty:
        work = Path(empty) / "repo"
        work.mkdir()
        give_to_sandbox(work)
        try:
            run = launch(bwrap, work, ["true"], _PROBE_LIMITS)
        except OSError as exc:
            return f"no sandbox: {bwrap} could not be started ({exc.strerror or exc}), {NOT_RUN}"
    if run.passed:
        return None
    said = next((line.strip() for line in run.output.splitlines() if line.strip()), "")
    reason = said[:200] or run.summary()
    return (
        f"no sandbox: bwrap cannot confine a command here ({reason}); user namespaces may be "
        f"disabled (sysctl kernel.unprivileged_userns_clone or user.max_user_namespaces), {NOT_RUN}"
    )
