"""The implement kind end to end through the real Prefect engine, the sandbox GitHub serving
the reviewer's and the writer's Apps, and the scripted model, on SQLite and PostgreSQL: a
labelled issue becomes exactly one signed draft pull request by the writer bot, its tests run
in the sandbox and pass, the reviewer bot reviews it; a second run changes nothing; a run cut
off mid-way and run again leaves one branch and one pull request."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from agents.kinds.implement import LABEL
from sandbox.github.seed import (
    MAINTAINER,
    READER,
    REVIEWER_BOT,
    WIDGETS,
    WRITER_APP_ID,
    WRITER_BOT,
    WRITER_BUG_PATH,
    WRITER_SLUG,
    plant_writer_issue,
)
from tests.bwrap import require_bwrap
from tests.cli.conftest import swarm as swarm_cli
from tests.run.conftest import Swarm, run_swarm
from tests.run.pool import fresh_database


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The store the runs share: the data directory's SQLite file, or a fresh PostgreSQL
    database."""
    if request.param == "sqlite":
        yield "sqlite"
        return
    pg_url = request.getfixturevalue("pg_url")
    with fresh_database(pg_url, "postgresql+psycopg") as url:
        monkeypatch.setenv("SWARM_STORE_URL", url)
        yield "postgresql"


def labelled_issue(swarm: Swarm, *, by: str = MAINTAINER) -> int:
    number = plant_writer_issue(swarm.state)
    swarm.state.label_issue(WIDGETS, number, LABEL, by=by)
    return number


def writers_pulls(swarm: Swarm) -> list[Any]:
    return [
        i
        for i in swarm.state.repo(WIDGETS).pulls()
        if i.pull is not None and i.user_login == WRITER_BOT
    ]


def branches(swarm: Swarm) -> list[str]:
    return sorted(b for b in swarm.state.repo(WIDGETS).branches if b.startswith("swarm/"))


def implement_run() -> tuple[Any, Any]:
    return run_swarm(role="implementer", repos=(WIDGETS,))


def test_a_labelled_issue_becomes_one_draft_the_reviewer_reviews_and_a_rerun_changes_nothing(
    swarm: Swarm, store: str
) -> None:
    require_bwrap()
    number = labelled_issue(swarm)

    state, report = implement_run()

    assert state.is_completed(), state.message
    [opened] = writers_pulls(swarm)
    pull = opened.pull
    assert pull.draft and pull.head_ref == f"swarm/issue-{number}"
    head = swarm.state.repo(WIDGETS).commits[pull.head_sha]
    assert head.signed_by == WRITER_SLUG, "not committed through createCommitOnBranch"
    fixed = head.tree[WRITER_BUG_PATH]
    assert "range(len(widgets))" in (fixed.decode() if isinstance(fixed, bytes) else fixed)
    body = opened.body or ""
    assert f"Closes #{number}." in body
    assert "Tests at the last run: **passing**" in body, body
    [outcome] = report.outcomes
    assert outcome.status == "succeeded", outcome.reason
    # The run speaks of what it wrote: a draft pull request, not a review.
    assert report.headline() == (
        "1 new draft pull request opened, 0 already answered by a pull request"
    )
    assert outcome.review_url and outcome.review_url.endswith(f"/pull/{opened.number}")
    # `swarm runs` names the pull request the run's writer opened.
    seen = swarm_cli("runs")
    assert seen.code == 0, seen.output
    assert f"{WIDGETS}#{number} (" in seen.output and outcome.review_url in seen.output
    # Every write of the run was the writer bot's: never the reviewer's, never a person's.
    assert swarm.writes_by(WRITER_BOT)
    assert not swarm.writes_by(REVIEWER_BOT) and not swarm.writes_by(MAINTAINER)

    state, _ = run_swarm(role="reviewer", repos=(WIDGETS,))

    assert state.is_completed(), state.message
    reviews = swarm.bot_reviews(WIDGETS, opened.number)
    assert [r.user_login for r in reviews] == [REVIEWER_BOT]
    assert all(r.state != "APPROVED" for r in reviews)

    writes = len(swarm.writes_by(WRITER_BOT))
    state, again = implement_run()

    assert state.is_completed(), state.message
    assert len(writers_pulls(swarm)) == 1
    assert branches(swarm) == [f"swarm/issue-{number}"]
    assert len(swarm.writes_by(WRITER_BOT)) == writes, "a second run wrote to GitHub"
    assert again.outcomes == [], "a worker was started for an issue with its draft open"
    assert again.headline().startswith("0 new draft pull requests opened, 1 already answered")


@pytest.mark.parametrize("lost", ["refused", "answer_lost"])
def test_a_run_cut_off_before_its_pull_request_and_run_again_leaves_one_branch_and_one_pull(
    swarm: Swarm, store: str, lost: str
) -> None:
    """GitHub fails the pull request's creation after the commit landed: refused outright, or
    carried out with its answer lost. The next run continues the same branch; one draft."""
    require_bwrap()
    number = labelled_issue(swarm)
    swarm.state.inject_failure(
        "/repos/{owner}/{repo}/pulls",
        method="POST",
        status=502,
        count=20,
        after_handling=lost == "answer_lost",
    )

    state, report = implement_run()

    assert [o.status for o in report.outcomes] != ["succeeded"] or lost == "answer_lost"
    assert branches(swarm) == [f"swarm/issue-{number}"]
    committed = swarm.state.repo(WIDGETS).branches[f"swarm/issue-{number}"]
    with swarm.state.lock:
        swarm.state.failures.clear()

    state, _ = implement_run()

    assert state.is_completed(), state.message
    assert branches(swarm) == [f"swarm/issue-{number}"]
    [opened] = writers_pulls(swarm)
    assert opened.pull.head_sha == committed, "the re-run committed again"


def test_a_label_added_by_a_reader_starts_nothing(swarm: Swarm, store: str) -> None:
    require_bwrap()
    labelled_issue(swarm, by=READER)

    state, report = implement_run()

    assert state.is_completed(), state.message
    assert writers_pulls(swarm) == [] and branches(swarm) == []
    assert not swarm.writes_by(WRITER_BOT)
    assert report.outcomes == []
    [refused] = report.refused
    assert "label_not_by_writer" in refused and READER in refused, refused
    assert "1 refused to start" in report.headline()


def test_the_writers_page_shows_its_plan_size_and_test_runs_and_no_secret_leaks(
    swarm: Swarm, caplog: pytest.LogCaptureFixture
) -> None:
    """The flow run's artifacts: the writer's page holds the plan, the change's size and each
    test run's result; the run summary names the pull request. Nothing the run wrote (store,
    Prefect's database and results, logs, artifacts) holds a planted secret: the writer's
    token, the reviewer's, the App keys, the sealing key, the model key."""
    from tests.run.test_leaks import _api_texts, _files_under, _planted, _prefect_db_files

    caplog.set_level(logging.DEBUG)
    require_bwrap()
    labelled_issue(swarm)

    state, _ = implement_run()

    assert state.is_completed(), state.message
    [opened] = writers_pulls(swarm)
    texts, _ = _api_texts(state.state_details.flow_run_id)
    [page] = [t for t in texts if "## The change" in t]
    assert "size against the base: 1 file(s), +1 -1" in page, page
    assert "Find `largest`" not in page and "Find 'largest'" in page, "the plan as text"
    assert "**passed**" in page and "python3 -m unittest discover" in page
    assert any(f"/pull/{opened.number}" in t for t in texts), "no artifact names the PR"

    planted = _planted(swarm)
    pem = swarm.state.private_key_pem(WRITER_APP_ID).splitlines()
    planted["writer App private key"] = pem[len(pem) // 2]
    blobs = {str(p): p.read_bytes() for p in _files_under(swarm.data_dir) + _prefect_db_files()}
    blobs |= {f"api text {n}": t.encode() for n, t in enumerate(texts)}
    blobs |= {f"log {r.name}": r.getMessage().encode() for r in caplog.records}
    found = [
        f"{name} in {where}"
        for name, secret in planted.items()
        for where, blob in blobs.items()
        if secret and secret.encode() in blob
    ]
    assert found == []
