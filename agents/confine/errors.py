"""Why a repository's command was not run: no working sandbox here, or a request the runner
refuses. Each message is one line a person can act on; none carries the command's output."""

from __future__ import annotations

from agents.errors import SwarmError


class ConfineError(SwarmError):
    """A confined run could not be made (bad command, a copy that could not be made)."""


class SandboxUnavailable(ConfineError):
    """No working sandbox on this machine: nothing was run, and nothing ever runs unsandboxed."""
