"""Discovery under a repository's ``.github/swarm.yaml``: skips with reasons, narrowed files,
guidance on the task, an invalid file skipping its repository, and forced one-PR runs."""

from __future__ import annotations

import asyncio
import hashlib

from agents.github.models import Pull
from agents.planning.discover import DiscoveryAsk, ExistingReview, discover_work
from agents.posting.keys import marker, review_key
from tests.planning.test_discover import BOT, REPO, SHA_NEW, KeySet, ListedGitHub

CONFIG = """\
skip:
  authors: ["dependabot[bot]"]
  labels: [wip]
instructions:
  - paths: ["src/db/**"]
    text: Every query must use bound parameters.
language: English
"""


def _pull(number: int, author: str = "alice", labels: tuple[str, ...] = ()) -> Pull:
    return {
        "number": number,
        "head": {"sha": SHA_NEW},
        "user": {"login": author},
        "labels": [{"name": name} for name in labels],
    }


def _github(config: str | None = CONFIG) -> ListedGitHub:
    return ListedGitHub(
        pulls={REPO: [_pull(1), _pull(2, "dependabot[bot]"), _pull(3, labels=("WIP",)), _pull(4)]},
        files_by_pr={1: ["src/db/q.py", "uv.lock"], 4: ["uv.lock", "web/package-lock.json"]},
        config_text=config,
    )


def test_skipped_authors_labels_and_lockfile_only_prs_are_not_reviewed_and_say_why() -> None:
    found = asyncio.run(discover_work(_github(), [REPO], DiscoveryAsk("reviewer", bot_login=BOT)))
    assert [t.number for t in found.items] == [1]
    reasons = {s.number: s.reason for s in found.skipped}
    assert reasons == {2: "author_skipped", 3: "label_skipped", 4: "no_reviewable_files"}
    lockfiles = next(s for s in found.skipped if s.number == 4)
    assert lockfiles.detail == (
        "all 2 changed file(s) are listed only (uv.lock, web/package-lock.json)"
    )


def test_the_task_covers_only_included_files_and_carries_the_matching_guidance() -> None:
    [task] = asyncio.run(
        discover_work(_github(), [REPO], DiscoveryAsk("reviewer", bot_login=BOT))
    ).items
    assert task.files == ("src/db/q.py",)
    assert task.rules.guidance == "Every query must use bound parameters."
    assert task.rules.language == "English"


def test_without_a_file_the_defaults_still_leave_lockfiles_out() -> None:
    found = asyncio.run(
        discover_work(_github(None), [REPO], DiscoveryAsk("reviewer", bot_login=BOT))
    )
    assert sorted(t.number or 0 for t in found.items) == [1, 2, 3]
    assert [s.reason for s in found.skipped] == ["no_reviewable_files"]


def test_an_invalid_file_skips_its_repository_and_reads_no_pull_request() -> None:
    github = _github("skip:\n  authorz: [x]\n")
    found = asyncio.run(discover_work(github, [REPO], DiscoveryAsk("reviewer", bot_login=BOT)))
    assert found.items == [] and found.skipped == []
    assert found.config_errors == {REPO: [".github/swarm.yaml:2: skip.authorz: unknown key"]}
    assert [c for c in github.calls if c.startswith(("reviews", "files"))] == []
    # Its open PRs are to be told, under the digest of this version of the file.
    [notice] = found.config_notices
    assert (notice.repo, notice.numbers) == (REPO, (1, 2, 3, 4))
    assert notice.digest == hashlib.sha256(b"skip:\n  authorz: [x]\n").hexdigest()
    assert notice.problems == (".github/swarm.yaml:2: skip.authorz: unknown key",)


def test_a_file_that_cannot_be_read_skips_the_repository_rather_than_using_defaults() -> None:
    class Failing(ListedGitHub):
        async def repo_config(self, repo: str) -> str | None:
            raise RuntimeError("GitHub GET contents failed with 502")

    github = Failing(pulls={REPO: [_pull(1)]})
    found = asyncio.run(discover_work(github, [REPO], DiscoveryAsk("reviewer", bot_login=BOT)))
    assert found.items == []
    assert "could not be read" in found.config_errors[REPO][0]
    assert found.config_notices == []  # a GitHub hiccup is not the repository's mistake


def test_targets_narrow_discovery_to_the_named_pull_requests() -> None:
    found = asyncio.run(
        discover_work(
            _github(),
            [REPO],
            DiscoveryAsk("reviewer", bot_login=BOT, targets=[(REPO, 4), (REPO, 1)]),
        )
    )
    assert [t.number for t in found.items] == [1]
    assert [s.number for s in found.skipped] == [4]


def test_a_target_that_is_not_open_is_named_not_silently_dropped() -> None:
    targets = [(REPO, 999), (REPO, 4)]  # 4 is open (and skipped: lockfiles only)
    found = asyncio.run(
        discover_work(_github(), [REPO], DiscoveryAsk("reviewer", bot_login=BOT, targets=targets))
    )
    assert found.items == []
    assert found.not_found(targets) == [f"{REPO}#999"]


def test_a_file_naming_an_unknown_role_is_invalid_instead_of_switching_every_role_off() -> None:
    github = _github("roles: [reviewr]\n")
    found = asyncio.run(
        discover_work(
            github,
            [REPO],
            DiscoveryAsk("reviewer", bot_login=BOT, known_roles={"reviewer", "summarizer"}),
        )
    )
    assert found.items == []
    [problem] = found.config_errors[REPO]
    assert problem == (
        ".github/swarm.yaml:1: roles.0: unknown role 'reviewr' (did you mean 'reviewer'?) "
        "(known: reviewer, summarizer)"
    )
    assert found.config_notices, "the PRs are told, as for any invalid file"


def test_a_forced_run_re_reviews_a_reviewed_head_under_a_new_key_and_overrides_skip_rules() -> None:
    github = _github()
    github.reviews_by_pr[1] = [
        ExistingReview(
            user_login="swarm-reviewer[bot]",
            commit_id=SHA_NEW,
            body=marker(review_key(REPO, 1, SHA_NEW, "reviewer")),
        )
    ]
    ledger = KeySet(set())
    plain = asyncio.run(
        discover_work(
            github, [REPO], DiscoveryAsk("reviewer", bot_login=BOT, targets=[(REPO, 1)]), ledger
        )
    )
    assert [s.reason for s in plain.skipped] == ["already_reviewed"]
    forced = asyncio.run(
        discover_work(
            github,
            [REPO],
            DiscoveryAsk("reviewer", bot_login=BOT, targets=[(REPO, 1), (REPO, 2)], rerun="d1"),
            ledger,
        )
    )
    by_number = {t.number: t for t in forced.items}
    assert by_number[1].rerun == "d1"
    # Not reviewed yet at its head: the normal key, so later runs see it as done.
    assert by_number[2].rerun is None


def test_a_rerun_key_differs_from_the_plain_key_and_does_not_count_as_the_roles_review() -> None:
    plain = review_key(REPO, 1, SHA_NEW, "reviewer")
    again = review_key(REPO, 1, SHA_NEW, "reviewer", "d1")
    assert again == f"{plain}/rerun-d1"


def _reviewed(*numbers: int) -> KeySet:
    return KeySet({review_key(REPO, n, SHA_NEW, "reviewer") for n in numbers})


def test_a_repository_whose_every_pr_is_reviewed_at_its_head_is_not_asked_for_its_file() -> None:
    github = _github("skip:\n  authorz: [x]\n")  # invalid, and nothing left for it to stop
    found = asyncio.run(
        discover_work(
            github, [REPO], DiscoveryAsk("reviewer", bot_login=BOT), _reviewed(1, 2, 3, 4)
        )
    )
    assert github.calls == [f"pulls {REPO}"]
    assert [(s.number, s.reason) for s in found.skipped] == [
        (n, "already_reviewed") for n in (1, 2, 3, 4)
    ]
    assert found.items == [] and found.config_errors == {} and found.config_notices == []


def test_one_pr_needing_work_reads_the_file_and_an_invalid_one_is_told_to_every_open_pr() -> None:
    github = _github("skip:\n  authorz: [x]\n")
    found = asyncio.run(
        discover_work(github, [REPO], DiscoveryAsk("reviewer", bot_login=BOT), _reviewed(1, 2, 3))
    )
    assert f"config {REPO}" in github.calls
    assert list(found.config_errors) == [REPO]
    [notice] = found.config_notices
    assert notice.numbers == (1, 2, 3, 4)


def test_a_forced_run_reads_the_file_though_every_pr_is_reviewed_at_its_head() -> None:
    github = _github()
    found = asyncio.run(
        discover_work(
            github,
            [REPO],
            DiscoveryAsk("reviewer", bot_login=BOT, rerun="d2"),
            _reviewed(1, 2, 3, 4),
        )
    )
    assert f"config {REPO}" in github.calls
    # The file's skip rules give way to a forced run; its path rules still hold.
    assert [t.number for t in found.items] == [1, 2, 3]
