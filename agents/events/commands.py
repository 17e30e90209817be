"""PR commands: ``/swarm review [FOCUS]``, ``/swarm security``, ``/swarm help``, and who may
give them.

A focus (``/swarm review security``) names a role from configuration, never free text: it
reaches the worker as a call overlay (a system block from ``roles/``), so a comment's words can
choose an overlay but never write one.

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
# The one line of a comment that is a command: "/swarm <word> [<focus>]" at the start of a line.
_COMMAND = re.compile(
    r"^[ \t]*/swarm(?:[ \t]+(?P<word>[A-Za-z-]{1,32})(?:[ \t]+(?P<focus>[A-Za-z-]{1,32}))?)?"
    r"[ \t]*$",
    re.MULTILINE,
)

COMMAND_ROLES = {"review": "reviewer", "security": "security-reviewer"}
# What `/swarm review FOCUS` may name: focus word -> the role laid over the review's calls.
FOCUS_ROLES = {"security": "security-reviewer", "security-reviewer": "security-reviewer"}
HELP_TEXT = (
    "swarm commands (for people with write access to this repository):\n\n"
    "- `/swarm review`: review this pull request now, also when its head was already reviewed "
    "(a new review, marked as a re-review)\n"
    "- `/swarm review security`: the same review, with the security reviewer's focus laid over "
    "it\n"
    "- `/swarm security`: a review by the security reviewer\n"
    "- `/swarm help`: this list"
)


@dataclass(frozen=True)
class Command:
    word: str  # review, security, help, or what was typed when unknown
    focus: str | None = None  # the word after `review`, as typed (lowercased)

    @classmethod
    def of(cls, text: str) -> Command:
        """A command from its words (``review security``), as :attr:`text` wrote them."""
        found = find_command(f"/swarm {text}")
        return found if found is not None else cls(text)

    @property
    def text(self) -> str:
        return f"{self.word} {self.focus}" if self.focus else self.word

    @property
    def known(self) -> bool:
        if self.focus is not None:
            return self.word == "review" and self.focus in FOCUS_ROLES
        return self.word in COMMAND_ROLES or self.word == "help"

    @property
    def role(self) -> str | None:
        return COMMAND_ROLES.get(self.word) if self.known else None

    @property
    def focus_role(self) -> str | None:
        """The role the command's focus lays over the review's calls (a call overlay)."""
        return FOCUS_ROLES.get(self.focus or "") if self.known else None


def find_command(body: str) -> Command | None:
    """The first ``/swarm`` line of a comment, or None when there is none."""
    found = _COMMAND.search(body or "")
    if found is None:
        return None
    focus = found["focus"].lower() if found["focus"] else None
    return Command((found["word"] or "help").lower(), focus)


def may_command(permission: str | None) -> bool:
    """Whether a collaborator permission allows giving commands."""
    return (permission or "").lower() in WRITE_PERMISSIONS
