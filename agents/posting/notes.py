"""A pull request that ends without a full review gets a note saying so, once per head commit.

Every PR a run takes up ends in exactly one review or one note: a PR whose every file is listed
only (generated, vendored, binary...), one with more to read than the caps allow, one whose
review could not finish for a reason the next run would meet again (a budget, the context
window). The note is posted by code, not by a model: a COMMENT review at the PR's head under the
review key its review would have had, with the bot's hidden marker, through
:func:`agents.posting.once.write_once`. So the next run finds the PR reviewed at this head and
leaves it alone until a new commit is pushed or ``swarm run --pr ... --force`` asks again; a
scheduler is not told the same failure every hour.

The files it names were named by the PR's author: they are shown inside a text fence, so no name
renders as a mention, a link or an image, and the list is bounded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agents.posting.keys import find_marked, review_key, with_marker
from agents.posting.once import Claims, Written, write_once
from agents.work import ListedFile

# How many listed files a review or note names one by one; the rest are counted.
NAMED_FILES = 60
NAME_CHARS = 200


@dataclass(frozen=True)
class PullNote:
    """What to tell one pull request at one head: why it got no (full) review, and the files
    that were not read in full with their reasons."""

    repo: str
    number: int
    head_sha: str
    role: str
    reason: str
    listed: tuple[ListedFile, ...] = ()
    rerun: str | None = None

    @property
    def key(self) -> str:
        return review_key(self.repo, self.number, self.head_sha, self.role, self.rerun)

    @property
    def label(self) -> str:
        return f"{self.repo}#{self.number}@{self.head_sha[:7]}"


class ReviewWrites(Protocol):
    """The gateway's review calls, made as the bot."""

    async def list_reviews(self, repo: str, number: int) -> list[dict[str, Any]]: ...

    async def create_review(
        self, repo: str, number: int, body: str, event: str = ..., commit_id: str | None = ...
    ) -> dict[str, Any]: ...


def listed_section(listed: Sequence[ListedFile], heading: str = "Not reviewed in full") -> str:
    """The files a review names without reading them in full, each with its reason; "" when
    there are none. Written by code, so a model cannot leave a name out."""
    if not listed:
        return ""
    lines = []
    for item in listed[:NAMED_FILES]:
        name = item.path if len(item.path) <= NAME_CHARS else item.path[:NAME_CHARS] + "..."
        lines.append(f"{name}: {item.reason}")
    more = len(listed) - NAMED_FILES
    if more > 0:
        lines.append(f"... and {more} more")
    text = "\n".join(lines).replace("~~~", "~ ~ ~")
    return f"**{heading}** ({len(listed)} file(s)):\n\n~~~text\n{text}\n~~~"


def note_body(note: PullNote) -> str:
    body = f"swarm did not review this pull request in full: {note.reason}."
    section = listed_section(note.listed)
    if section:
        body += f"\n\n{section}"
    return (
        body + "\n\nThis note stands for the review of this head commit; a new push is reviewed "
        "again, and a maintainer can ask for a review now with `swarm run --pr ... --force`."
    )


async def post_note(
    note: PullNote,
    gateway: ReviewWrites,
    claims: Claims,
    *,
    holder: str,
    bot_login: str,
) -> Written:
    """Post ``note`` once, as ``bot_login`` (verified by the caller: whose markers count
    depends on it)."""
    key = note.key
    body = with_marker(note_body(note), key)

    async def find() -> Mapping[str, Any] | None:
        return find_marked(await gateway.list_reviews(note.repo, note.number), key, bot_login)

    async def create() -> Mapping[str, Any]:
        return await gateway.create_review(
            note.repo, note.number, body, event="COMMENT", commit_id=note.head_sha
        )

    # A run posts its notes within seconds of claiming them; nothing else holds these keys
    # for long, so a claim is taken over once GitHub shows no marker.
    return await write_once(
        claims, key, holder, find=find, create=create, alive=lambda _c: False, what=f"note {key}"
    )
