"""What discovery read of a pull request at its head SHA, handed to the workers that review it.

Discovery lists a PR's files and reviews to plan it (issue 23: fetch each PR's data once per run
and share it between discovery, shards and the summarizer); before this, every worker read them
again, and the writer read the reviews a third time before posting: 5 of the 12 REST points a
small PR cost. A snapshot is keyed by identity, repository, number and head SHA: a push makes a
new head, so a worker never meets files of another commit, and what one identity read is never
handed to another (as with :mod:`agents.github.committed`). It lives in the runtime's memory, for
the workers of the same process; a worker in another process (a work pool) finds none and reads
GitHub itself, as it always did.

The listed pull request is the list endpoint's object: title, body, head, base, author and labels,
not the counts only ``GET /pulls/{n}`` has (``changed_files``, ``additions``). The reviews are as
they were when discovery read them, seconds before the worker starts; the write path's store
claim, not this list, is what keeps a review from being posted twice
(:mod:`agents.posting.once`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict, Unpack

from agents.github.models import Pull
from agents.json_value import JSONObject, as_object

MAX_PULLS = 512

Key = tuple[str, str, int, str]


class Parts(TypedDict, total=False):
    """What one read adds to a snapshot: the pull request, its files, its reviews."""

    pull: Pull | None
    files: Sequence[JSONObject] | None
    reviews: Sequence[Mapping[str, object]] | None


@dataclass(frozen=True)
class PullSnapshot:
    """GitHub's JSON for one PR at one head, each part None when discovery did not read it."""

    pull: Pull | None = None
    files: tuple[JSONObject, ...] | None = None
    # As the listing gave them (:class:`~agents.github.models.Review`) or REST's list.
    reviews: tuple[Mapping[str, object], ...] | None = None

    def reviewed_by(self, login: str | None) -> bool | None:
        """Whether ``login`` has a review on the PR (None: the reviews were not read, or the
        login is unknown). Only a review brings the bot's comments: its findings, the threads
        it resolves and answers, and the summary written after it."""
        if self.reviews is None or not login:
            return None
        return any(
            str(as_object(r.get("user")).get("login") or "").lower() == login.lower()
            for r in self.reviews
        )

    def patches(self) -> dict[str, str | None]:
        return patches_by_path(self.files or ())


def patches_by_path(files: Iterable[Mapping[str, object]]) -> dict[str, str | None]:
    """Each listed file's patch by path (None: GitHub sent none, as for a binary or a huge
    diff): what inline comments anchor to."""
    return {
        str(f.get("filename")): p if isinstance(p := f.get("patch"), str) else None for f in files
    }


class PullSnapshots:
    """Snapshots by (identity, repository, number, head SHA), the oldest dropped first."""

    def __init__(self, max_pulls: int = MAX_PULLS) -> None:
        self.max_pulls = max_pulls
        self._found: OrderedDict[Key, PullSnapshot] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(identity: str, repo: str, number: int, head_sha: str) -> Key:
        return (identity.lower(), repo.lower(), number, head_sha)

    def keep(
        self,
        identity: str,
        repo: str,
        number: int,
        head_sha: str,
        **read: Unpack[Parts],
    ) -> None:
        """Add what was read to the PR's snapshot (parts not given are left as they were)."""
        if not head_sha:
            return
        pull, files, reviews = read.get("pull"), read.get("files"), read.get("reviews")
        key = self.key(identity, repo, number, head_sha)
        with self._lock:
            was = self._found.get(key, PullSnapshot())
            self._found[key] = PullSnapshot(
                pull=pull if pull is not None else was.pull,
                files=tuple(files) if files is not None else was.files,
                reviews=tuple(reviews) if reviews is not None else was.reviews,
            )
            self._found.move_to_end(key)
            while len(self._found) > self.max_pulls:
                self._found.popitem(last=False)

    def get(self, identity: str, repo: str, number: int, head_sha: str | None) -> PullSnapshot:
        """The PR's snapshot at ``head_sha``; an empty one when nothing was kept."""
        if not head_sha:
            return PullSnapshot()
        with self._lock:
            return self._found.get(self.key(identity, repo, number, head_sha)) or PullSnapshot()
