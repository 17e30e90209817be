"""The worker's context budget, end to end: a small-window model (a registry override) reviews
a 300-file PR and a 5,000-line file through the real SDK against the scripted model over
loopback HTTP, and no request ever passes the window."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace

import pytest

from agents.llm.client import LLMClient
from agents.llm.compaction import STUB_PREFIX
from agents.llm.models import ModelRegistry
from agents.outcome import WorkerOutcome
from agents.roles import Role
from sandbox.github.model import Issue
from sandbox.github.seed import WIDGETS
from sandbox.github.seed_large import add_long_file_pull, add_wide_pull
from sandbox.model import ScriptedModel
from sandbox.model.cache import request_blocks
from sandbox.model.server import ScriptedServer
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio

SMALL = "small-16k"
WINDOW = 16_000
SMALL_SPEC = {
    "context_window": WINDOW,
    "max_output_tokens": 2048,
    "input_per_mtok": 3.0,
    "output_per_mtok": 15.0,
}


def roomy(role: Role) -> Role:
    """The role with enough turns and tokens to read a very large change page by page."""
    limits = role.limits.model_copy(update={"max_turns": 80, "max_tokens": 5_000_000})
    return role.model_copy(update={"limits": limits, "model": SMALL})


@pytest.fixture
async def small_swarm(
    make_swarm: Callable[..., Swarm],
) -> AsyncIterator[tuple[Swarm, ScriptedModel]]:
    swarm = make_swarm()
    scripted = ScriptedModel(context_windows={SMALL: WINDOW}, read_files=True)
    server = ScriptedServer(scripted).start()
    client = LLMClient(
        api_key="sk-test-small-window",
        base_url=server.url,
        registry=ModelRegistry({SMALL: SMALL_SPEC}),
    )
    swarm.runtime.roles["reviewer"] = roomy(swarm.runtime.roles["reviewer"])
    swarm.runtime.worker = replace(
        swarm.runtime.worker,
        model=client,
        registry=client.registry,
        calibrations=client.calibrations,
    )
    try:
        yield swarm, scripted
    finally:
        await client.aclose()
        server.close()
        await swarm.runtime.aclose()


def provider_tokens(body: dict[str, object]) -> int:
    """Input tokens as the scripted provider counts them."""
    return sum(block.tokens for block in request_blocks(body))


async def reviewed_within_the_window(
    swarm: Swarm, scripted: ScriptedModel, pull: Issue
) -> WorkerOutcome:
    """Review ``pull``: the worker succeeds and no request it sent passes the window."""
    outcome = await swarm.review(WIDGETS, pull.number)
    assert outcome.status == "succeeded", outcome.reason
    for request in scripted.requests:
        assert provider_tokens(request) + int(str(request["max_tokens"])) <= WINDOW
    return outcome


async def test_a_300_file_pr_is_reviewed_without_a_request_over_the_window(
    small_swarm: tuple[Swarm, ScriptedModel],
) -> None:
    swarm, scripted = small_swarm
    pull = add_wide_pull(swarm.sandbox.state, WIDGETS, files=300)
    outcome = await reviewed_within_the_window(swarm, scripted, pull)

    assert scripted.status_counts.get(400) is None
    # Older pages were stubbed, and the review still names findings from every part of the PR.
    assert any(STUB_PREFIX in str(r["messages"]) for r in scripted.requests)
    review = swarm.sandbox.state.pull(WIDGETS, pull.number).pull
    assert review is not None and len(review.reviews) == 1
    reported = {f.path for f in outcome.findings}  # inline, the cap allowing, or in the summary
    assert "src/widgets/wide/mod_003.py" in reported
    assert "src/widgets/wide/mod_297.py" in reported
    assert 0 < len(review.review_comments) <= 10  # max_comments' default
    worker = swarm.runtime.store.get_worker(outcome.worker_id)
    assert worker.budgets_used["context_tier"] == "small"
    assert worker.budgets_used["context_window"] == WINDOW
    assert int(worker.budgets_used["compactions"]) >= 1


async def test_a_5000_line_file_is_read_in_pages_never_cut(
    small_swarm: tuple[Swarm, ScriptedModel],
) -> None:
    swarm, scripted = small_swarm
    pull = add_long_file_pull(swarm.sandbox.state, WIDGETS, lines=5000)
    await reviewed_within_the_window(swarm, scripted, pull)

    reads = [
        block["input"]
        for r in scripted.responses
        for block in r["content"]
        if block.get("type") == "tool_use" and block["name"] == "read_file"
    ]
    pages = sorted(int(args.get("page", 1)) for args in reads)
    assert len(pages) > 5 and pages == list(range(1, len(pages) + 1))
    review = swarm.sandbox.state.pull(WIDGETS, pull.number).pull
    assert review is not None
    assert {c.path for c in review.review_comments} == {"src/widgets/table.py"}
