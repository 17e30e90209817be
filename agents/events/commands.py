"""PR commands: ``/swarm review``, ``/swarm security``, ``/swarm help``, and who may give them.

A command counts only from someone with write access to the repository (``admin``,
``maintain`` or ``write`` from the collaborator-permission API, asked as the bot). Not
``author_association``: ``MEMBER`` says nothing about this repository (an organisation member
may only read it) and ``COLLABORATOR`` includes read-only collaborators. A PR's author without
write access cannot command a review of their own PR, and no bot can command at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# GitHub's permission field answers admin/write/read/none; role_name may also say maintain.
WRITE_PERMISSIONS = frozenset({"admin", "maintain", "write"})
# The one line of a comment that is a command: "/swarm <word>" at the start of a line.
_COMMAND = re.compile(r"^[ \t]*/swarm(?:[ \t]+(?P<word>[A-Za-z-]{1,32}))?[ \t]*$", re.MULTILINE)

COMMAND_ROLES = {"review": "reviewer", "security": "security-reviewer"}
HELP_TEXT = (
    "swarm commands (for people with write access to this repository):\n\n"
    "- `/swarm review`: review this pull request now, also when its head was already reviewed "
    "(a new review, marked as a re-review)\n"
    "- `/swarm security`: a review by the security reviewer\n"
    "- `/swarm help`: this list"
)


@dataclass(frozen=True)
class Command:
    word: str  # review, security, help, or what was typed when unknown

    @property
    def known(self) -> bool:
        return self.word in COMMAND_ROLES or self.word == "help"

    @property
    def role(self) -> str | None:
        return COMMAND_ROLES.get(self.word)


def find_command(body: str) -> Command | None:
    """The first ``/swarm`` line of a comment, or None when there is none."""
    found = _COMMAND.search(body or "")
    if found is None:
        return None
    return Command((found["word"] or "help").lower())


def may_command(permission: str | None) -> bool:
    """Whether a collaborator permission allows giving commands."""
    return (permission or "").lower() in WRITE_PERMISSIONS
