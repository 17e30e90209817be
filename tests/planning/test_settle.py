"""What a sharded review does once its shards have ended (agents/planning/shards.py ``settle``):
decided from each outcome's end code, never from the words of its reason."""

from __future__ import annotations

from agents.outcome import EndCode, OutcomeStatus, WorkerOutcome
from agents.planning.shards import PlannedPR, settle
from agents.work import Assignment, Shard, Task

HEAD = "0123456789abcdef0123456789abcdef01234567"


def _planned(shards: int, *, summarizer: bool = True) -> PlannedPR:
    def task(n: int | None) -> Task:
        shard = Shard(index=n, count=shards) if n is not None and shards > 1 else None
        files = (f"src/part{n}.py",) if n is not None else ()
        return Task(
            kind="review_pr", repo="acme/widgets", number=7, head_sha=HEAD, files=files, shard=shard
        )

    reviewers = [Assignment(role="reviewer", task=task(n)) for n in range(shards)]
    merger = Assignment(role="reviewer", task=task(None)) if summarizer else None
    return PlannedPR(reviewers, merger)


def _ended(status: OutcomeStatus, code: EndCode | None = None, reason: str = "-") -> WorkerOutcome:
    return WorkerOutcome(
        worker_id="w",
        role="reviewer",
        target="acme/widgets#7",
        status=status,
        reason=reason,
        code=code,
    )


def test_every_shard_done_goes_to_the_summarizer_with_nothing_left() -> None:
    settled = settle(_planned(2), [_ended("succeeded"), _ended("succeeded")])
    assert (settled.action, settled.left, settled.note) == ("summarize", (), None)


def test_a_shard_out_of_its_turn_budget_is_summarized_around_and_its_files_named() -> None:
    settled = settle(
        _planned(3), [_ended("succeeded"), _ended("budget_exhausted", "turns"), _ended("succeeded")]
    )
    assert settled.action == "summarize"
    assert [f.path for f in settled.left] == ["src/part1.py"]
    assert "shard 2 of 3 ended budget_exhausted" in settled.left[0].reason


def test_a_shard_out_of_wall_time_may_finish_next_time_so_nothing_is_summarized() -> None:
    settled = settle(_planned(2), [_ended("succeeded"), _ended("budget_exhausted", "wall_time")])
    assert (settled.action, settled.unfinished) == ("retry", 1)
    assert settled.note is None


def test_every_shard_ended_for_a_lasting_reason_gets_a_note_and_no_summary() -> None:
    outcomes = [_ended("failed", "context_full"), _ended("failed", "output_limit")]
    settled = settle(_planned(2), outcomes)
    assert settled.action == "note" and settled.note is not None
    assert settled.note.number == 7 and "could not finish" in settled.note.reason


def test_the_words_of_a_reason_decide_nothing_only_its_code_does() -> None:
    # A GitHub error whose text reads like a full context window (a file named so, a message
    # quoted) may pass: the PR is retried, never noted as lasting.
    worded = _ended("failed", None, "context window full: GitHub error 502")
    assert settle(_planned(2), [_ended("succeeded"), worded]).action == "retry"
    lone = settle(_planned(1, summarizer=False), [worded])
    assert (lone.action, lone.note) == ("done", None)


def test_a_single_reviewer_ended_for_a_lasting_reason_leaves_a_note() -> None:
    lone = settle(_planned(1, summarizer=False), [_ended("budget_exhausted", "cost")])
    assert lone.action == "done" and lone.note is not None
