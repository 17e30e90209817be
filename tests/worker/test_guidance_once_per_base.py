"""Repository guidance is read once per base commit, not once per PR (issue 23): reviewers of
PRs off one base share one read of ``AGENTS.md`` and one of ``CONTRIBUTING.md`` (a 404 too),
and a new base commit is read anew, so a change to the guidance reaches the next review."""

from __future__ import annotations

import asyncio
import json

import pytest

from sandbox.github.seed import GADGETS, WIDGETS
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio


def _guidance_reads(swarm: Swarm, repo: str) -> dict[str, int]:
    """How often each guidance file was asked for, by whether it was there at the commit."""
    state = swarm.sandbox.state
    reads: dict[str, int] = {}
    for _login, where, expression in state.blob_reads:
        ref, _, name = expression.partition(":")
        if where != repo or name not in ("AGENTS.md", "CONTRIBUTING.md"):
            continue
        there = name in state.repo(repo).commits[ref].tree
        key = f"{name} {200 if there else 404}"
        reads[key] = reads.get(key, 0) + 1
    # None of it over REST: the files of one commit come in one GraphQL query.
    assert not [r for r in state.requests if r.path.startswith(f"/repos/{repo}/contents/")]
    return reads


async def test_reviewers_of_prs_off_one_base_read_each_guidance_file_once(swarm: Swarm) -> None:
    state = swarm.sandbox.state
    numbers = [
        state.add_pull(WIDGETS, f"Change {n}", {f"src/widgets/m{n}.py": f"M = {n}\n"}).number
        for n in range(3)
    ]
    for number in numbers:
        assert (await swarm.review(WIDGETS, number)).status == "succeeded"
    assert _guidance_reads(swarm, WIDGETS) == {"AGENTS.md 200": 1, "CONTRIBUTING.md 200": 1}
    # Every reviewer still had the guidance in its prompt.
    firsts = [json.dumps(r["messages"][0]) for r in swarm.scripted.requests]
    assert sum('source=\\"AGENTS.md\\"' in text for text in firsts) >= len(numbers)


async def test_a_file_absent_at_the_base_is_asked_once_too(swarm: Swarm) -> None:
    state = swarm.sandbox.state
    assert "AGENTS.md" not in state.repo(GADGETS).commits[state.repo(GADGETS).branches["main"]].tree
    for n in range(2):
        number = state.add_pull(GADGETS, f"G {n}", {f"src/g{n}.py": "G = 1\n"}).number
        assert (await swarm.review(GADGETS, number)).status == "succeeded"
    assert _guidance_reads(swarm, GADGETS) == {"AGENTS.md 404": 1, "CONTRIBUTING.md 200": 1}


async def test_a_new_base_commit_is_read_anew(swarm: Swarm) -> None:
    state = swarm.sandbox.state
    first = state.add_pull(WIDGETS, "Before", {"src/widgets/a.py": "A = 1\n"}).number
    assert (await swarm.review(WIDGETS, first)).status == "succeeded"
    state.commit_to_branch(WIDGETS, {"AGENTS.md": "# Agents\n\nNEW-BASE-RULE: name things well.\n"})
    second = state.add_pull(WIDGETS, "After", {"src/widgets/b.py": "B = 1\n"}).number
    assert (await swarm.review(WIDGETS, second)).status == "succeeded"
    assert _guidance_reads(swarm, WIDGETS)["AGENTS.md 200"] == 2
    assert "NEW-BASE-RULE" in json.dumps(swarm.scripted.requests[-1]["messages"][0])


async def test_reviewers_starting_together_wait_for_one_read(swarm: Swarm) -> None:
    state = swarm.sandbox.state
    numbers = [
        state.add_pull(WIDGETS, f"Together {n}", {f"src/widgets/t{n}.py": f"T = {n}\n"}).number
        for n in range(4)
    ]
    outcomes = await asyncio.gather(*(swarm.review(WIDGETS, n) for n in numbers))
    assert [o.status for o in outcomes] == ["succeeded"] * len(numbers)
    assert _guidance_reads(swarm, WIDGETS) == {"AGENTS.md 200": 1, "CONTRIBUTING.md 200": 1}
