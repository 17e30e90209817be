"""Which reported findings are posted inline, which fold into the summary, which threads close.

Pure: the findings the model reported, the ones the bot posted before (read back from GitHub),
how lines moved since (:mod:`agents.posting.lines`) and the repository's noise settings in;
the decision out. In order:

1. **the same finding once**: a finding reported twice (two shards, a summarizer repeating
   them) is one; a finding the bot already posted, at this head or an earlier one on lines
   that only moved, is not posted again (its thread stays open). A finding on lines the push
   changed is about new code, and is posted;
2. **the threshold**: below ``min_severity``: folded into the summary by count;
3. **the diff**: a finding no line of which can hold a comment is listed in the summary;
4. **the cap**: the most severe ``max_comments`` go inline, the rest fold by count.

A finding posted at an earlier head whose lines the push changed, and which the re-review no
longer reports, is *resolvable*: its thread is resolved by :mod:`agents.posting.threads`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from agents.posting.findings import (
    Finding,
    Severity,
    at_least,
    finding_identity,
    finding_key,
    severity_rank,
)
from agents.posting.lines import LineMap, Moves
from agents.posting.render import Placement, PostedFinding


@dataclass
class Selection:
    inline: list[tuple[Finding, Placement]] = field(default_factory=list)
    outside: list[Finding] = field(default_factory=list)
    below: list[Finding] = field(default_factory=list)
    over_cap: list[Finding] = field(default_factory=list)
    # Already posted (this head or an earlier one): (the new report, the posted one).
    repeated: list[tuple[Finding, PostedFinding]] = field(default_factory=list)

    def below_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for f in self.below:
            counts[f.severity] = counts.get(f.severity, 0) + 1
        return counts


def most_severe_first(findings: Sequence[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (severity_rank(f.severity), f.path, f.line))


def unique(findings: Sequence[Finding]) -> list[Finding]:
    """One of each key (path, lines, category, normalised message), the first reported."""
    seen: dict[str, Finding] = {}
    for f in findings:
        seen.setdefault(finding_key(f), f)
    return list(seen.values())


MovesOf = Callable[[str], Moves]  # commit SHA -> how lines moved from it to the head


def where_now(posted: PostedFinding, moves_of: MovesOf, head: str) -> tuple[LineMap, str]:
    """How the posted finding's file moved since it was posted, and its path at the head."""
    if posted.mark.sha == head:
        return LineMap(), posted.finding.path
    moved = moves_of(posted.mark.sha).of(posted.finding.path)
    return moved, moved.new_path or posted.finding.path


def _same_identity(new: Finding, posted: PostedFinding, path: str) -> bool:
    return path == new.path and finding_identity(posted.finding.at(path, posted.lines)) == (
        finding_identity(new)
    )


def same_finding(new: Finding, posted: PostedFinding, moves_of: MovesOf, head: str) -> bool:
    """Whether ``new`` (at the head) is ``posted`` (at its commit) again: the same identity on
    the lines ``posted``'s lines moved to. Lines the push changed are new code: a finding on
    them is a new finding (posted again, the old thread left as it is)."""
    moved, path = where_now(posted, moves_of, head)
    followed = moved.follow(*posted.lines)
    return followed == new.lines and _same_identity(new, posted, path)


def still_reported(new: Finding, posted: PostedFinding, moves_of: MovesOf, head: str) -> bool:
    """Whether ``new`` keeps ``posted`` alive: the same finding where its lines went, or on
    the code that replaced them."""
    moved, path = where_now(posted, moves_of, head)
    if not _same_identity(new, posted, path):
        return False
    followed = moved.follow(*posted.lines)
    if followed is not None:
        return followed == new.lines
    low, high = moved.region(*posted.lines)
    return new.first_line <= high and new.line >= low


def select(
    findings: Sequence[Finding],
    *,
    place: Callable[[Finding], Placement],
    min_severity: Severity,
    max_comments: int,
    earlier: Sequence[PostedFinding] = (),
    moves_of: MovesOf = lambda _sha: Moves(),
    head: str = "",
) -> Selection:
    chosen = Selection()
    fresh: list[Finding] = []
    for f in unique(findings):
        before = next((p for p in earlier if same_finding(f, p, moves_of, head)), None)
        if before is not None:
            chosen.repeated.append((f, before))
        else:
            fresh.append(f)
    placed: list[tuple[Finding, Placement]] = []
    for f in most_severe_first(fresh):
        if not at_least(f.severity, min_severity):
            chosen.below.append(f)
            continue
        where = place(f)
        if where == "outside":
            chosen.outside.append(f)
        else:
            placed.append((f, where))
    chosen.inline = placed[:max_comments]
    chosen.over_cap = [f for f, _ in placed[max_comments:]]
    return chosen


@dataclass(frozen=True)
class ThreadState:
    """What the resolver needs to know of the thread a posted finding starts."""

    node_id: str
    resolved: bool
    # The bot already resolved it once (its resolution reply is there): now open again, a
    # person reopened it, and it is theirs.
    reopened: bool = False
    # The bot replied that the finding is fixed and could not resolve the thread: settled,
    # neither open nor resolved.
    fixed_open: bool = False


def resolvable(
    earlier: Sequence[PostedFinding],
    threads: Mapping[int, ThreadState],
    reported: Sequence[Finding],
    moves_of: MovesOf,
    head: str,
) -> list[PostedFinding]:
    """The posted findings whose thread may be resolved at ``head``: open, never reopened by a
    person, on lines the push changed, and not reported by the re-review (at any severity)."""
    out: list[PostedFinding] = []
    for posted in earlier:
        thread = threads.get(posted.comment_id)
        if thread is None or thread.resolved or thread.reopened or thread.fixed_open:
            continue
        if posted.mark.sha == head:
            continue
        moved, _path = where_now(posted, moves_of, head)
        if not moved.changed(*posted.lines):
            continue
        if any(still_reported(f, posted, moves_of, head) for f in reported):
            continue
        out.append(posted)
    return out
