"""``swarm run --retry RUN`` as a person runs it (the ``swarm`` command against a real Prefect
server, the sandbox GitHub, the scripted model), on SQLite and PostgreSQL: of a run whose one
worker of two failed, only that worker's pull request is done again, as a new run; the one that
succeeded is not redone, and a second retry finds the work done and posts nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.github.seed import WIDGETS
from sandbox.server import SandboxServer
from tests.json_access import obj
from tests.prefect_server import PrefectServer
from tests.run.real_server.conftest import ObservedSwarm
from tests.store.backends import StoreTarget, pg_session_url, sqlite_template, store_target

__all__ = ["pg_session_url", "sqlite_template", "store_target"]

pytestmark = [pytest.mark.prefect, pytest.mark.slow]
EXIT_FAILED = 1
GOOD, BAD = 1, 2  # the PR whose worker succeeds, and the one whose review post is refused


@pytest.fixture
def swarm(
    real_prefect: PrefectServer, store_target: StoreTarget, tmp_path: Path
) -> Iterator[tuple[ObservedSwarm, dict[str, str], StoreTarget]]:
    with SandboxServer() as sandbox:
        store_env = {"SWARM_DATA_DIR": str(store_target.data_dir)}
        if store_target.url:
            store_env["SWARM_STORE_URL"] = store_target.url
        yield ObservedSwarm(real_prefect, sandbox, tmp_path), store_env, store_target


def _bot_reviews(swarm: ObservedSwarm, number: int) -> int:
    pull = swarm.sandbox.state.pull(WIDGETS, number).pull
    assert pull is not None
    return sum(1 for r in pull.reviews if r.user_login.endswith("[bot]") and not r.files_a_reply)


def _cli(swarm: ObservedSwarm, store_env: dict[str, str], *args: str) -> str:
    done = swarm.command(*args, **store_env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_retry_reruns_only_the_failed_worker_and_nothing_twice(
    swarm: tuple[ObservedSwarm, dict[str, str], StoreTarget],
) -> None:
    observed, store_env, target = swarm
    # GitHub refuses the bad PR's review post once with 401 (the worker's own token refused):
    # that worker fails; the other PR's worker succeeds.
    observed.sandbox.state.inject_failure(
        method="POST", path=f"/repos/{WIDGETS}/pulls/{BAD}/reviews", status=401, count=1
    )
    first = observed.run("--pr", f"{WIDGETS}#{GOOD}", "--pr", f"{WIDGETS}#{BAD}", **store_env)
    assert first.returncode == EXIT_FAILED, first.output
    with target.open() as store:
        first_run = store.run_for_flow_run(first.flow_run_id)
        assert first_run is not None
        ends = {w.task["number"]: w.status for w in store.list_workers(run_id=first_run.id)}
    assert ends == {GOOD: "succeeded", BAD: "failed"}
    assert (_bot_reviews(observed, GOOD), _bot_reviews(observed, BAD)) == (1, 0)

    # The start of the id, as `swarm runs` shows it.
    retried = observed.run("--retry", first_run.id[:10], **store_env)
    assert retried.returncode == 0, retried.output
    asked = f"retrying the failed work of run {first_run.id}: {WIDGETS}#{BAD}"
    assert asked in retried.output.splitlines(), retried.output
    with target.open() as store:
        second_run = store.run_for_flow_run(retried.flow_run_id)
        assert second_run is not None and second_run.trigger == "retry"
        again = [(w.task["number"], w.status) for w in store.list_workers(run_id=second_run.id)]
    assert again == [(BAD, "succeeded")]
    # The PR that succeeded was not asked for at all (not even found done and skipped).
    assert obj(second_run.totals["report"])["left_alone"] == []
    assert (_bot_reviews(observed, GOOD), _bot_reviews(observed, BAD)) == (1, 1)

    # Retried once more, the failed worker's PR is found reviewed at its head: nothing twice.
    twice = observed.run("--retry", first_run.id, **store_env)
    assert twice.returncode == 0, twice.output
    with target.open() as store:
        third_run = store.run_for_flow_run(twice.flow_run_id)
        assert third_run is not None and store.list_workers(run_id=third_run.id) == []
    assert (_bot_reviews(observed, GOOD), _bot_reviews(observed, BAD)) == (1, 1)

    # `swarm runs` says what each retry was a retry of, and the third why it did nothing.
    runs = json.loads(_cli(observed, store_env, "runs", "--json").splitlines()[0])
    notes = {r["run"]: (r["trigger"], r["note"], r["role"]) for r in runs["rows"]}
    assert notes[second_run.id] == ("retry", f"retry of {first_run.id}", "reviewer")
    shown = _cli(observed, store_env, "runs", third_run.id, "--json").splitlines()
    left = json.loads(shown[-1])
    [row] = left["rows"]
    assert row["item"].startswith(f"{WIDGETS}#{BAD}@"), row
    assert row["reason"] == "already done at this head", row
