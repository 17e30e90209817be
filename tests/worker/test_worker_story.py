"""A worker's story in its log: the lines a person reads in the worker's task-run log."""

from __future__ import annotations

import logging
import re

import pytest

from sandbox.github.seed import WIDGETS, WIDGETS_PR_DEBUG_PRINT
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio


async def test_a_reviewers_log_tells_who_it_was_what_it_read_called_decided_and_posted(
    swarm: Swarm, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="agents.worker")
    outcome = await swarm.review(WIDGETS, WIDGETS_PR_DEBUG_PRINT)
    assert outcome.status == "succeeded", outcome.reason

    lines = [r.getMessage() for r in caplog.records if r.name == "agents.worker"]
    story = "\n".join(lines)
    assert lines[0].startswith(f"worker {outcome.worker_id} starts: {outcome.target} as reviewer")
    assert re.search(
        r"identity verified: swarm-reviewer\[bot\] \(\w+\); permissions .*pull_requests:write"
        rf".*; repositories {WIDGETS}",
        story,
    ), story
    assert "read the pull request: PR #" in story
    assert "read the changed files: page 1/1, 1 file(s): src/widgets/core.py" in story
    assert re.search(r"LLM call 1 \(.+\): \d+ prompt tokens \(\d+ cached.*cache hit \d+%\)", story)
    assert re.search(r"\$\d+\.\d{4}", story)
    assert re.search(r"^(goal|checkpoint|decision): \S", story, re.MULTILINE), story
    posted = rf"review posted: {re.escape(str(outcome.review_url))}; \d+ finding\(s\) inline"
    assert re.search(posted, story), story
    assert lines[-1].startswith("ended succeeded: ")
    assert lines[-1].endswith(f"; review {outcome.review_url}")
    assert f"{outcome.llm_calls} LLM call(s)" in lines[-1]
    # Which findings, each on its line, not only how many.
    assert outcome.findings, "the debug-print PR has findings"
    listed = [line for line in lines if line.startswith("finding ")]
    assert len(listed) == len(outcome.findings), story
    first = outcome.findings[0]
    assert listed[0].startswith(
        f"finding 1 of {len(outcome.findings)}: {first.path}:{first.line}: {first.severity} "
    )
    # A few readable lines, not a dump: one per step, none longer than a screen line or two.
    assert len(lines) <= 3 + 2 * outcome.llm_calls + 8 + len(listed)
    assert all(len(line) < 400 for line in lines)
