"""A repository, role or identity typed with a typo is refused with a "did you mean" (one line,
exit 2), never taken at its word: a memory under a misspelt repository is one no worker sees, and
an audit of a misspelt login would answer "no recorded writes"."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agents.store import NewWorker, Store
from tests.cli.conftest import EXIT_USAGE, assert_error, swarm


@pytest.fixture(autouse=True)
def recorded() -> None:
    """One run of swarm-reviewer[bot] over acme/widgets, as the store keeps it."""
    with Store.open(None, Path(os.environ["SWARM_DATA_DIR"])) as store:
        run_id = store.create_run("manual")
        task = {"kind": "review_pr", "repo": "acme/widgets", "number": 1, "head_sha": "abc1234"}
        worker = store.create_worker(
            NewWorker(
                run_id,
                role_chain=["reviewer"],
                task=task,
                identity_login="swarm-reviewer[bot]",
                status="running",
            )
        )
        store.finish_worker(worker, "succeeded")
        store.finish_run(run_id, "succeeded", {"workers": 1})


def test_a_memory_for_a_misspelt_repository_is_refused() -> None:
    assert_error(
        swarm("memory", "add", "Use tabs", "--repo", "acme/widgts"),
        "error: --repo: acme/widgts is neither in SWARM_REPOS nor in any run "
        "(did you mean 'acme/widgets'?)",
        EXIT_USAGE,
    )
    assert "Use tabs" not in swarm("memory", "list").output


def test_a_memory_for_a_new_repository_is_welcome() -> None:
    seen = swarm("memory", "add", "Use tabs", "--repo", "other/project")
    assert seen.code == 0, seen.output


def test_a_memory_for_a_misspelt_role_is_refused() -> None:
    seen = swarm("memory", "add", "Use tabs", "--role", "reviwer")
    assert_error(seen, seen.first_line, EXIT_USAGE)
    assert seen.first_line.startswith("error: --role: no role 'reviwer' in "), seen.output
    assert seen.first_line.endswith(" (did you mean 'reviewer'?)"), seen.output


def test_an_audit_of_a_login_swarm_never_used_is_refused() -> None:
    assert_error(
        swarm("audit", "--identity", "my-reviewer[bot]"),
        "error: --identity: swarm never worked as 'my-reviewer[bot]' "
        "(did you mean 'swarm-reviewer[bot]'?)",
        EXIT_USAGE,
    )
    seen = swarm("audit", "--identity", "swarm-reviewer[bot]")
    assert seen.code == 0 and "no recorded writes by swarm-reviewer[bot]" in seen.output
