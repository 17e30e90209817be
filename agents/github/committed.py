"""Files read at a commit: the same text whoever reads it next, so read from GitHub once.

A file at a commit SHA never changes, so a run that reviews twenty PRs off one base commit
needs the repository's guidance (``AGENTS.md``, ``CONTRIBUTING.md``) once, not twenty times
(issue 23: once per base SHA). Shared by the gateways of one runtime, per identity, for the
reads that ask for it: what one identity could read, another identity is never given. A file
absent at a commit (GitHub's 404) is kept as absent: a repository without ``CONTRIBUTING.md``
is asked once too. Bounded: a few hundred small files, the largest not kept.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from concurrent.futures import Future

# A full commit SHA (SHA-1 or SHA-256 repositories); a branch or a short SHA can move.
_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
MAX_FILES = 256
MAX_CHARS = 256 * 1024

Key = tuple[str, str, str, str]
# What a read at a commit came to: the file's text, None for a file GitHub says is not there,
# or ``RETRY`` when the read failed (an error another read might not meet): read it yourself.
RETRY = object()
Outcome = str | None | object


class CommittedFiles:
    """Text of files at a commit, by (identity, repository, path, SHA), oldest dropped first.

    One read at a time per file: workers of one run start together, and twenty of them asking
    for ``AGENTS.md`` at one base would all miss an empty cache. The first reads; the others
    wait for its outcome, from whichever thread and event loop they run on.
    """

    def __init__(self, max_files: int = MAX_FILES, max_chars: int = MAX_CHARS) -> None:
        self.max_files, self.max_chars = max_files, max_chars
        self._texts: OrderedDict[Key, str | None] = OrderedDict()
        self._reading: dict[Key, Future[Outcome]] = {}
        self._lock = threading.Lock()
        self.hits = 0

    @staticmethod
    def key(identity: str, repo: str, path: str, ref: str | None) -> Key | None:
        """The key of a read at ``ref``; None when ``ref`` is no full commit SHA."""
        if ref is None or not _SHA.match(ref):
            return None
        return (identity.lower(), repo.lower(), path, ref)

    def claim(self, key: Key) -> tuple[Future[Outcome], bool]:
        """The read's outcome to wait for, and whether the caller is the one to read it (then
        it must :meth:`settle` it, whatever happens)."""
        with self._lock:
            outcome: Future[Outcome] = Future()
            if key in self._texts:
                self._texts.move_to_end(key)
                self.hits += 1
                outcome.set_result(self._texts[key])
                return outcome, False
            reading = self._reading.get(key)
            if reading is not None:
                self.hits += 1
                return reading, False
            self._reading[key] = outcome
            return outcome, True

    def settle(self, key: Key, outcome: Outcome) -> None:
        """What the claimed read came to: a text or None (kept), or :data:`RETRY` (not kept)."""
        with self._lock:
            reading = self._reading.pop(key, None)
            keep = outcome is not RETRY and (
                outcome is None or (isinstance(outcome, str) and len(outcome) <= self.max_chars)
            )
            if keep:
                self._texts[key] = outcome if isinstance(outcome, str) else None
                self._texts.move_to_end(key)
                while len(self._texts) > self.max_files:
                    self._texts.popitem(last=False)
        if reading is not None:
            reading.set_result(outcome)
