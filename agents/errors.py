"""The root of the errors a person can act on: :class:`SwarmError`, and the exit statuses.

An error derives from :class:`SwarmError` when its message alone tells the person who ran the
command what happened and what to change (a setting, a flag, a role file, an unknown id, a
GitHub API that does not answer). The CLI's one error funnel (:mod:`flows.cli.errors`) prints
it as ``error: <message>`` and exits with its class's :attr:`~SwarmError.exit_code`; anything
else that reaches the funnel is a bug and says so. Messages never carry a secret (the funnel
redacts them once more on the way out).

Plain Python with no imports of ours, so every layer may derive its errors from it.
"""

from __future__ import annotations

from typing import ClassVar

# The exit statuses of every ``swarm`` command.
EXIT_OK = 0
EXIT_FAILED = 1  # a run had failed work, the machine failed (a server did not start), or a bug
EXIT_USAGE = 2  # something the person can change: a setting, a flag, a file, an id


class SwarmError(Exception):
    """An error whose message is the whole story for a person, and the exit status it ends a
    command with: :data:`EXIT_USAGE` unless the class says otherwise."""

    exit_code: ClassVar[int] = EXIT_USAGE
