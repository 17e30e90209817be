"""Real pull requests nobody here wrote, reviewed end to end: adjacent releases of well-known
packages from PyPI (``sandbox.github.releases``), served with GitHub's file-listing conventions
and review validation, reviewed by the ``swarm-run`` flow with the scripted model.

What a maintainer relies on: every PR ends with exactly one review or one note, GitHub refuses
nothing (no 422), no finding contradicts the PR as a whole (no "no test changes" on a PR that
changes tests), the files not read in full are named, and a second run posts nothing and ends
well. The sdists are downloaded once into a cache; without PyPI the test skips and says so,
unless ``SWARM_TEST_REQUIRE_PYPI=1`` (CI) makes that a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agents.posting.render import SUMMARY_TITLE
from flows.run.report import RunReport
from sandbox.github.releases import RELEASES, ReleasesUnavailable, add_release_pull, sdist
from sandbox.github.seed import REVIEWER_BOT
from sandbox.model.diffscan import is_test
from tests.run.conftest import Swarm, run_swarm

pytestmark = [pytest.mark.prefect, pytest.mark.timeout(900)]

REQUIRE_PYPI = os.environ.get("SWARM_TEST_REQUIRE_PYPI") == "1"


@pytest.fixture(scope="module")
def release_cache() -> Path | None:
    """The sdists, downloaded once (None: the default cache folder)."""
    try:
        for release in RELEASES:
            sdist(release.name, release.base)
            sdist(release.name, release.head)
    except ReleasesUnavailable as exc:
        if REQUIRE_PYPI:
            pytest.fail(f"PyPI is required here (SWARM_TEST_REQUIRE_PYPI=1): {exc}")
        pytest.skip(f"PyPI is unreachable, so the real-diff set cannot be built: {exc}")
    return None


def _summary(swarm: Swarm, repo: str) -> str:
    """The bot's summary comment on the repository's one PR."""
    issue = swarm.state.pull(repo, 1)
    [summary] = [c.body for c in issue.comments if c.user_login == REVIEWER_BOT]
    assert summary.startswith(SUMMARY_TITLE)
    return summary


def _bot_writes(swarm: Swarm) -> list[str]:
    return [f"{r.method} {r.path}" for r in swarm.writes_by(REVIEWER_BOT)]


def test_release_sized_real_prs_each_end_in_one_review_or_note_and_a_rerun_posts_nothing(
    swarm: Swarm, release_cache: Path | None
) -> None:
    pulls = {r.repo: add_release_pull(swarm.state, r, release_cache) for r in RELEASES}
    files = {repo: issue.pull.files for repo, issue in pulls.items() if issue.pull is not None}
    # The set is what the issue asks of it: 100+ files, and a file whose patch GitHub omits.
    assert max(len(f) for f in files.values()) >= 100
    assert any(f.patch is None and f.additions for fs in files.values() for f in fs)

    state, report = run_swarm(repos=list(pulls))
    assert isinstance(report, RunReport)
    assert state.is_completed(), report.headline()
    assert report.ok, [f"{o.target}: {o.status}: {o.reason}" for o in report.failed]

    refused = [r for r in swarm.state.requests if r.status == 422]
    assert refused == []
    for repo, issue in pulls.items():
        reviews = swarm.bot_reviews(repo, issue.number)
        assert len(reviews) == 1, (repo, [r.body[:200] for r in reviews])
        body = reviews[0].body
        assert len(body) <= 65_536
        pull = issue.pull
        assert pull is not None
        if any(is_test(f.filename) for f in pull.files):
            comments = [c.body for c in pull.review_comments] + [c.body for c in issue.comments]
            assert not any("no test changes" in text for text in [body, *comments]), repo
    # Files a review did not read in full are named in its summary: the pure renames of
    # requests' move to src/, the data module whose patch GitHub omits, pycountry's binary
    # translations.
    assert "content unchanged" in _summary(swarm, "acme/requests")
    emoji = _summary(swarm, "acme/emoji")
    assert "`emoji/unicode_codes/data_dict.py`: GitHub shows no patch" in emoji
    assert ".mo`: binary file" in _summary(swarm, "acme/pycountry")

    writes = _bot_writes(swarm)
    again_state, again = run_swarm(repos=list(pulls))
    assert again_state.is_completed() and again.ok
    assert again.new_reviews == 0 and again.notes == []
    assert _bot_writes(swarm) == writes
