"""Discovery skips what this role already reviewed at a PR's head SHA; big PRs are sharded."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from agents.github.models import Pull
from agents.planning.discover import DiscoveryAsk, ExistingReview, discover_work
from agents.planning.files import ChangedFile
from agents.planning.shards import ReadPlan, ShardCuts, plan_assignments
from agents.posting.keys import marker, review_key
from agents.work import Task

REPO = "acme/widgets"
SHA_OLD = "a" * 40
SHA_NEW = "b" * 40
BOT = "swarm-reviewer[bot]"


def changed(path: str, lines: int = 1) -> ChangedFile:
    """A changed file as GitHub lists one: ``lines`` added lines of plain code."""
    patch = f"@@ -0,0 +1,{lines} @@\n" + "".join(f"+x{i} = {i}\n" for i in range(lines))
    return ChangedFile(path, "added", lines, 0, len(patch), patch[:2000])


@dataclass
class ListedGitHub:
    """The three reads discovery makes, answered from lists (GitHub's shape, already parsed)."""

    pulls: dict[str, list[Pull]]
    reviews_by_pr: dict[int, list[ExistingReview]] = field(default_factory=dict)
    files_by_pr: dict[int, list[str]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    config_text: str | None = None

    async def open_pulls(self, repo: str) -> list[Pull]:
        self.calls.append(f"pulls {repo}")
        return self.pulls.get(repo, [])

    async def reviews(self, repo: str, number: int) -> list[ExistingReview]:
        self.calls.append(f"reviews {number}")
        return self.reviews_by_pr.get(number, [])

    async def changed_files(self, repo: str, number: int) -> list[ChangedFile]:
        self.calls.append(f"files {number}")
        return [changed(path) for path in self.files_by_pr.get(number, ["src/a.py"])]

    async def repo_config(self, repo: str) -> str | None:
        self.calls.append(f"config {repo}")
        return self.config_text


@dataclass
class KeySet:
    keys: set[str]

    def has_review(self, key: str) -> bool:
        return key in self.keys

    def last_reviewed_sha(self, repo: str, number: int, roles: Sequence[str]) -> str | None:
        return None

    def agrees(self, key: str) -> bool:
        return key in self.keys or not self.keys

    def unfinished(self, key: str) -> bool:
        return key in self.left

    # Posted keys whose work after the review (the summary) was left undone.
    left: set[str] = field(default_factory=set)


def _pull(number: int, sha: str = SHA_NEW, draft: bool = False, author: str = "alice") -> Pull:
    """An open pull request as the listing gives one (GitHub's REST field names)."""
    return {
        "number": number,
        "title": f"PR {number}",
        "head": {"sha": sha},
        "draft": draft,
        "user": {"login": author},
    }


def _marked(key: str, commit: str) -> ExistingReview:
    return ExistingReview(
        user_login=BOT,
        commit_id=commit,
        body=f"Looks fine.\n\n{marker(key)}",
    )


def test_discovery_skips_a_pr_whose_key_is_in_the_store_without_asking_github() -> None:
    github = ListedGitHub({REPO: [_pull(1), _pull(2)]})
    ledger = KeySet({review_key(REPO, 1, SHA_NEW, "reviewer")})
    found = asyncio.run(
        discover_work(github, [REPO], DiscoveryAsk("reviewer", bot_login=BOT), ledger)
    )
    assert [i.number for i in found.items] == [2]
    assert found.already_reviewed == 1
    assert "reviews 1" not in github.calls


def test_discovery_skips_a_pr_carrying_this_roles_marker_at_the_head_sha() -> None:
    key = review_key(REPO, 1, SHA_NEW, "reviewer")
    github = ListedGitHub({REPO: [_pull(1)]}, reviews_by_pr={1: [_marked(key, SHA_NEW)]})
    found = asyncio.run(discover_work(github, [REPO], DiscoveryAsk("reviewer", bot_login=BOT)))
    assert found.items == []
    assert found.already_reviewed == 1


def test_another_roles_marker_does_not_count_as_reviewed() -> None:
    key = review_key(REPO, 1, SHA_NEW, "security-reviewer")
    github = ListedGitHub({REPO: [_pull(1)]}, reviews_by_pr={1: [_marked(key, SHA_NEW)]})
    found = asyncio.run(discover_work(github, [REPO], DiscoveryAsk("reviewer", bot_login=BOT)))
    assert [i.number for i in found.items] == [1]
    assert found.items[0].since_sha is None


def test_new_commits_are_re_reviewed_since_the_last_reviewed_sha() -> None:
    old_key = review_key(REPO, 1, SHA_OLD, "reviewer")
    github = ListedGitHub(
        {REPO: [_pull(1, SHA_NEW)]}, reviews_by_pr={1: [_marked(old_key, SHA_OLD)]}
    )
    found = asyncio.run(discover_work(github, [REPO], DiscoveryAsk("reviewer", bot_login=BOT)))
    assert len(found.items) == 1
    assert found.items[0].head_sha == SHA_NEW
    assert found.items[0].since_sha == SHA_OLD


def test_the_ledgers_last_reviewed_sha_for_any_posting_role_sets_since() -> None:
    class Remembers(KeySet):
        def last_reviewed_sha(self, repo: str, number: int, roles: Sequence[str]) -> str | None:
            return SHA_OLD if "summarizer" in roles else None

    github = ListedGitHub({REPO: [_pull(1, SHA_NEW)]})
    ledger = Remembers(set())
    found = asyncio.run(
        discover_work(
            github,
            [REPO],
            DiscoveryAsk("reviewer", bot_login=BOT, posting_roles=("summarizer",)),
            ledger,
        )
    )
    assert found.items[0].since_sha == SHA_OLD
    assert (
        asyncio.run(discover_work(github, [REPO], DiscoveryAsk("reviewer", bot_login=BOT), ledger))
        .items[0]
        .since_sha
        is None
    )


def test_drafts_are_skipped_unless_asked_for() -> None:
    github = ListedGitHub({REPO: [_pull(1, draft=True)]})
    assert (
        asyncio.run(discover_work(github, [REPO], DiscoveryAsk("reviewer", bot_login=BOT))).items
        == []
    )
    found = asyncio.run(
        discover_work(github, [REPO], DiscoveryAsk("reviewer", bot_login=BOT, include_drafts=True))
    )
    assert [i.number for i in found.items] == [1]


def test_the_writer_bots_drafts_are_reviewed_though_other_drafts_are_skipped() -> None:
    """The writer opens every pull request as a draft that waits for a person: its drafts are
    work for the reviewer, while a person's draft stays work in progress."""
    writer = "acme-writer[bot]"
    mine = _pull(1, draft=True, author=writer)
    theirs = _pull(2, draft=True, author="octo-dev")
    github = ListedGitHub({REPO: [mine, theirs]})
    found = asyncio.run(
        discover_work(
            github, [REPO], DiscoveryAsk("reviewer", bot_login=BOT, draft_authors={writer})
        )
    )
    assert [i.number for i in found.items] == [1]
    skipped = asyncio.run(discover_work(github, [REPO], DiscoveryAsk("reviewer", bot_login=BOT)))
    assert skipped.items == []


def test_the_writer_bots_logins_are_asked_once_and_only_when_a_listed_pull_is_a_draft() -> None:
    """A writer's login costs its App a GET /app: a listing with no draft never asks it, and
    listings with drafts ask it once for every repository of the discovery."""
    writer = "acme-writer[bot]"
    asked: list[str] = []

    async def writers() -> frozenset[str]:
        asked.append(writer)
        return frozenset({writer})

    ask = DiscoveryAsk("reviewer", bot_login=BOT, draft_authors_of=writers)
    plain = ListedGitHub({REPO: [_pull(1), _pull(2)]})
    found = asyncio.run(discover_work(plain, [REPO], ask))
    assert [i.number for i in found.items] == [1, 2]
    assert asked == []

    other = "acme/other"
    drafts = ListedGitHub(
        {
            REPO: [_pull(1, draft=True, author=writer), _pull(2, draft=True, author="octo-dev")],
            other: [_pull(3, draft=True, author=writer)],
        }
    )
    found = asyncio.run(discover_work(drafts, [REPO, other], ask))
    assert [(i.repo, i.number) for i in found.items] == [(REPO, 1), (other, 3)]
    assert asked == [writer]


def test_a_review_posted_without_its_summary_is_planned_once_more_as_one_finishing_worker() -> None:
    """Interrupted between its review and its summary: the PR is not "already reviewed" but
    finished by one worker of the role that posted it (the summarizer's on a sharded PR)."""
    mine = review_key(REPO, 1, SHA_NEW, "reviewer")
    merged = review_key(REPO, 2, SHA_NEW, "summarizer")
    done = review_key(REPO, 3, SHA_NEW, "reviewer")
    files = {2: [f"src/f{i:02d}.py" for i in range(23)]}
    github = ListedGitHub({REPO: [_pull(1), _pull(2), _pull(3)]}, files_by_pr=files)
    ledger = KeySet({mine, merged, done}, left={mine, merged})
    found = asyncio.run(
        discover_work(
            github,
            [REPO],
            DiscoveryAsk("reviewer", bot_login=BOT, posting_roles=("summarizer",)),
            ledger,
        )
    )
    assert [(i.number, i.kind, i.finishing) for i in found.items] == [
        (1, "review_pr", True),
        (2, "summarize", True),
    ]
    assert [(s.number, s.reason) for s in found.skipped] == [(3, "already_reviewed")]
    planned = plan_assignments(
        found.items,
        "reviewer",
        summarizer_role="summarizer",
        cuts=ShardCuts(threshold_files=10, size=5),
    )
    assert [[(a.role, a.task.shard) for a in p.assignments] for p in planned] == [
        [("reviewer", None)],
        [("summarizer", None)],
    ]


def _item(number: int, files: int) -> Task:
    return Task(
        kind="review_pr",
        repo=REPO,
        number=number,
        head_sha=SHA_NEW,
        files=tuple(f"src/f{i:02d}.py" for i in range(files)),
    )


def test_a_small_pr_gets_one_reviewer_and_no_summarizer() -> None:
    [planned] = plan_assignments(
        [_item(1, 3)],
        "reviewer",
        summarizer_role="summarizer",
        cuts=ShardCuts(threshold_files=10, size=5),
    )
    assert planned.summarizer is None
    [only] = planned.reviewers
    assert (only.role, only.task.kind, only.task.shard) == ("reviewer", "review_pr", None)
    assert only.run_name == f"review {REPO}#1@{SHA_NEW[:7]} as reviewer"


def test_a_pr_with_many_files_is_sharded_in_balanced_parts_with_one_summarizer() -> None:
    [planned] = plan_assignments(
        [_item(7, 23)],
        "reviewer",
        summarizer_role="summarizer",
        cuts=ShardCuts(threshold_files=10, size=10),
    )
    shards = planned.reviewers
    assert [len(s.task.files) for s in shards] == [8, 8, 7]
    assert [s.task.shard.index for s in shards if s.task.shard] == [0, 1, 2]
    assert {s.task.shard.count for s in shards if s.task.shard} == {3}
    covered = [f for s in shards for f in s.task.files]
    assert covered == list(_item(7, 23).files)
    summarizer = planned.summarizer
    assert summarizer is not None
    assert (summarizer.role, summarizer.task.kind) == ("summarizer", "summarize")
    assert summarizer.task.files == _item(7, 23).files and summarizer.task.shard is None
    assert shards[1].run_name == f"review {REPO}#7@{SHA_NEW[:7]} [shard 2/3] as reviewer"


def test_shards_are_cut_by_the_tokens_their_patches_cost_not_by_a_count_of_files() -> None:
    task = _item(8, 12)
    big = {path: 200 for path in task.files} | {"src/f03.py": 30_000, "src/f09.py": 25_000}
    read = ReadPlan(shard_tokens=40_000, max_calls=40)
    [planned] = plan_assignments(
        [task], "reviewer", summarizer_role="summarizer", sizes={(REPO, 8): big}, read=read
    )
    cost = [sum(big[p] for p in s.task.files) for s in planned.reviewers]
    assert len(cost) == 2 and max(cost) <= 40_000
    # Each worker's plan carries what it is expected to spend; its budget follows from it.
    assert all(a.expected_tokens > c for a, c in zip(planned.reviewers, cost, strict=True))
    # Twelve small files are one worker's work, however many they are.
    [small] = plan_assignments(
        [task], "reviewer", summarizer_role="summarizer", sizes={(REPO, 8): {}}
    )
    assert small.summarizer is None and len(small.reviewers) == 1


def test_a_shard_is_held_to_the_calls_its_pages_take_within_its_turns() -> None:
    # Three 20,000-token patches in 6,000-character pages: about twelve calls each.
    task = _item(10, 3)
    sizes = {(REPO, 10): {path: 20_000 for path in task.files}}
    read = ReadPlan(patch_page_chars=6000, file_page_chars=20_000, max_calls=20)
    planned = plan_assignments(
        [task], "reviewer", summarizer_role="summarizer", sizes=sizes, read=read
    )[0].reviewers
    assert len(planned) == 3
    assert all(read.calls([20_000]) <= read.reading_calls for _ in planned)
    assert read.max_file_tokens < 20_000 * 2  # a patch past one worker's calls is listed


def test_a_pr_that_would_need_more_shards_than_the_cap_is_planned_as_too_large() -> None:
    task = _item(9, 30)
    sizes = {(REPO, 9): {path: 30_000 for path in task.files}}
    [planned] = plan_assignments(
        [task], "reviewer", summarizer_role="summarizer", sizes=sizes, cuts=ShardCuts(max_shards=12)
    )
    assert planned.assignments == []
    assert planned.too_large is not None and "need 30 shards; at most 12" in planned.too_large


def test_sharding_settings_that_cannot_work_are_refused_with_their_names() -> None:
    with pytest.raises(ValueError, match=r"shard_size must be at least 1 \(0\)"):
        plan_assignments(
            [], "reviewer", summarizer_role="summarizer", cuts=ShardCuts(threshold_files=10, size=0)
        )
    with pytest.raises(
        ValueError, match=r"shard_threshold_files \(5\) must be at least shard_size \(10\)"
    ):
        plan_assignments(
            [], "reviewer", summarizer_role="summarizer", cuts=ShardCuts(threshold_files=5, size=10)
        )


def test_a_pr_that_cannot_be_read_is_skipped_as_unreadable_not_fatal() -> None:
    class Flaky(ListedGitHub):
        async def changed_files(self, repo: str, number: int) -> list[ChangedFile]:
            if number == 1:
                raise RuntimeError("GitHub GET files failed with 502")
            return await super().changed_files(repo, number)

    found = asyncio.run(
        discover_work(
            Flaky({REPO: [_pull(1), _pull(2)]}), [REPO], DiscoveryAsk("reviewer", bot_login=BOT)
        )
    )
    assert [i.number for i in found.items] == [2]
    [unreadable] = found.unreadable
    assert (unreadable.number, unreadable.detail) == (1, "GitHub GET files failed with 502")
