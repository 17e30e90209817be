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

A command is read as people type it: on a line of its own, whatever the line ends with (the web
editor's CRLF), and followed by prose if they like (``/swarm review please``, ``/swarm review
security, thanks``): the words after the command are ignored unless the first of them names a
focus. So a mistyped focus (``/swarm review securty``) is a plain review, never an unknown
command; only an unknown command word gets the "unknown command" answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.kinds.book import RoleBook
from agents.roles.files import shipped_book

# GitHub's permission field answers admin/write/read/none; role_name may also say maintain.
WRITE_PERMISSIONS = frozenset({"admin", "maintain", "write"})
# A command line: "/swarm", then the command word and what follows it, or nothing. The words
# are split off in code: a lazy "(.*?)" before "[ \t]*$" tried every end of the words against
# every run of blanks, quadratic on a line of blanks (a comment from anyone, before any
# permission check).
_COMMAND_LINE = re.compile(r"[ \t]*+/swarm(?P<rest>[ \t].*)?\Z")
# The words a command is made of; the reply to an unknown command quotes the word, so it is
# held to letters and dashes (no mention, link or markup reaches the bot's reply).
_WORD = re.compile(r"^[A-Za-z-]{1,32}$")
# What may end a typed word without being part of it ("/swarm review, please").
_TRAILING = ".,:;!?"
# A fenced code block (``` or ~~~) quotes a command, it does not give one.
_FENCE = re.compile(r"^[ \t]*(```|~~~)")

# Which role a command word starts, and what `/swarm review FOCUS` may name (a role laid over the
# review's calls), are the roles' own `command:` and `kind:` (agents.kinds.book): no role here.
HELP_TEXT = (
    "swarm commands (for people with write access to this repository):\n\n"
    "- `/swarm review`: review this pull request now, also when its head was already reviewed "
    "(a new review, marked as a re-review)\n"
    "- `/swarm review security`: the same review, with the security reviewer's focus laid over "
    "it\n"
    "- `/swarm security`: a review by the security reviewer\n"
    "- `/swarm approve` (on an issue): approve the writer's plan posted there; it writes it\n"
    "- `/swarm reject NOTE` (on an issue): reject the writer's plan; it plans once more with "
    "your note\n"
    "- `/swarm help`: this list"
)
# The words that decide on a writer's plan waiting for approval (agents.writer.approval): they
# start no role, they resume the run that waits.
DECISIONS = frozenset({"approve", "reject"})
# A rejection's note: the rest of the comment after the word, at most this long.
NOTE_CHARS = 2000


@dataclass(frozen=True)
class Command:
    word: str  # review, security, help, or what was typed when unknown
    # The word after `review` (lowercased), kept only when it names a focus.
    focus: str | None = None
    # The roles the words are read against (default: the roles shipped with swarm).
    book: RoleBook = field(default_factory=shipped_book, compare=False, repr=False)
    # A decision's note (``/swarm reject NOTE``): the person's words after the command word.
    note: str = ""

    @classmethod
    def of(cls, text: str, book: RoleBook | None = None) -> Command:
        """A command from its words (``review security``), as :attr:`text` wrote them."""
        found = find_command(f"/swarm {text}", book)
        return found if found is not None else cls(text, book=book or shipped_book())

    @property
    def text(self) -> str:
        if self.note:
            return f"{self.word} {self.note}"
        return f"{self.word} {self.focus}" if self.focus else self.word

    @property
    def decides(self) -> bool:
        """A decision on a writer's plan (``approve``, ``reject``), not a role's work."""
        return self.word in DECISIONS

    @property
    def known(self) -> bool:
        if self.decides:
            return True
        if self.focus is not None:
            return self.word == "review" and self.book.focus(self.focus) is not None
        return self.book.commanded(self.word) is not None or self.word == "help"

    @property
    def role(self) -> str | None:
        return self.book.commanded(self.word) if self.known else None

    @property
    def focus_role(self) -> str | None:
        """The role the command's focus lays over the review's calls (a call overlay)."""
        return self.book.focus(self.focus) if self.known and self.focus else None


def find_command(body: str, book: RoleBook | None = None) -> Command | None:
    """The first ``/swarm`` line of a comment, or None when there is none.

    Lines end as any editor ends them (GitHub's web editor sends CRLF). After the command word,
    a second word is the review's focus only when it names one (``/swarm review security``);
    any other trailing words are a person's prose and ignored (``/swarm review please`` is a
    review). A ``/swarm`` line inside a fenced code block is quoted, not given.
    """
    fenced = False
    lines = (body or "").splitlines()
    for at, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        found = None if fenced else _COMMAND_LINE.match(line.rstrip(" \t"))
        if found is None:
            continue
        words = [w.rstrip(_TRAILING) for w in (found["rest"] or "").split()]
        if not words:
            return Command("help")
        if not _WORD.match(words[0]):
            continue
        word = words[0].lower()
        book = book or shipped_book()
        if word in DECISIONS:
            # The note is the person's words: the rest of the line and the lines below it.
            rest = (found["rest"] or "").split(None, 1)[1:]
            note = "\n".join([*rest, *lines[at + 1 :]]).strip()
            return Command(word, None, book, note=note[:NOTE_CHARS])
        focus = words[1].lower() if len(words) > 1 else None
        known_focus = word == "review" and focus is not None and book.focus(focus) is not None
        return Command(word, focus if known_focus else None, book)
    return None


def may_command(permission: str | None) -> bool:
    """Whether a collaborator permission allows giving commands."""
    return (permission or "").lower() in WRITE_PERMISSIONS
