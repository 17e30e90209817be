"""Work discovery for a swarm run: plain Python, no Prefect.

Discovery answers "which open PRs need this role's review now?" Two independent records say a
PR was already reviewed at its head SHA: the store's review keys (fast, no GitHub call) and the
hidden marker the worker writes into every review body (survives a lost or fresh store). Either
one is enough to skip. A PR reviewed at an older SHA is re-reviewed with ``since_sha`` set, so the
worker looks only at what changed.

The repository's ``.github/swarm.yaml`` (read at the default branch) decides what is skipped
(roles, authors, labels, drafts) and which files a review covers; every skip has its reason.
Sharding a task into workers is :mod:`agents.planning.shards`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from agents.github.errors import IdentityPaused, TokenRefused
from agents.github.models import Pull, author_login, base_sha, head_sha, label_names
from agents.planning.config_notice import ConfigNotice
from agents.planning.files import ChangedFile, split_files
from agents.planning.repo_config import CONFIG_PATH, RepoConfig, RepoConfigError, parse_repo_config
from agents.planning.repo_policy import PolicySkip, guidance_for, scope_problem, skip_rule
from agents.planning.shards import SHARD_TOKENS
from agents.posting.keys import marked_at, marked_keys, parse_review_key, review_key
from agents.posting.notes import PullNote
from agents.work import RepoRules, Task

log = logging.getLogger("swarm.planning")


# -- what discovery reads ------------------------------------------------------------------------


class ExistingReview(BaseModel):
    """A review already on a PR: who wrote it, at which commit, and its body (for the marker)."""

    model_config = ConfigDict(frozen=True)

    user_login: str | None = None
    commit_id: str | None = None
    body: str = ""


class PullSource(Protocol):
    """The GitHub reads discovery needs. Implemented over the bot's gateway."""

    async def open_pulls(self, repo: str) -> list[Pull]:
        """The open pull requests of ``repo`` as the list endpoint describes them."""
        ...

    async def reviews(self, repo: str, number: int) -> list[ExistingReview]: ...

    async def changed_files(self, repo: str, number: int) -> list[ChangedFile]: ...

    async def repo_config(self, repo: str) -> str | None:
        """The text of ``.github/swarm.yaml`` at the default branch, None when absent."""
        ...


class ReviewLedger(Protocol):
    """What the store remembers about posted reviews."""

    def has_review(self, key: str) -> bool: ...

    def last_reviewed_sha(self, repo: str, number: int, roles: Sequence[str]) -> str | None: ...

    def agrees(self, key: str) -> bool:
        """Whether a marker of ``key`` found on GitHub agrees with the store: the store holds
        the key (claimed before posting, so a crash after GitHub accepted the review left it),
        or it holds no key of that pull request at all (a fresh or lost store)."""
        ...

    def unfinished(self, key: str) -> bool:
        """Whether ``key``'s review was posted and the work after it (the summary) was not
        done: an interrupted run left it for the next one."""
        ...


class NoLedger:
    """A ledger that remembers nothing: discovery then relies on review markers alone."""

    def has_review(self, key: str) -> bool:
        return False

    def last_reviewed_sha(self, repo: str, number: int, roles: Sequence[str]) -> str | None:
        return None

    def agrees(self, key: str) -> bool:
        return True

    def unfinished(self, key: str) -> bool:
        return False


# -- what discovery produces ---------------------------------------------------------------------

SkipReason = (
    Literal[
        "already_reviewed",
        "unreadable",
        "nothing_to_answer",
        # The writer's (agents.kinds.implement): a draft PR is open for the issue already, the
        # store says the writer opened one before (a person may have closed it since), the
        # label was not added by someone with write access, or the run's PR cap was reached.
        "pull_request_open",
        "implemented_before",
        "label_not_by_writer",
        "run_cap",
        # The writer's fix rounds (agents.kinds.fix): a person approved the pull request, its
        # rounds are settled, the loop is off here, the reviewer has not reviewed its head yet,
        # code marked it ready now, or its rounds are spent and what is open was listed now.
        "approved_by_person",
        "fix_rounds_done",
        "fix_rounds_off",
        "waiting_for_review",
        "marked_ready",
        "rounds_exhausted",
    ]
    | PolicySkip
)


@dataclass(frozen=True)
class SkippedItem:
    """A PR discovery left out, and why (shown in the run summary); number 0 stands for a whole
    repository whose pull requests could not be listed."""

    repo: str
    number: int
    head_sha: str
    reason: SkipReason
    detail: str | None = None

    @property
    def where(self) -> str:
        return f"{self.repo}#{self.number}" if self.number else self.repo


@dataclass
class Discovery:
    """Discovery's answer: the review tasks to do (one per PR) and what was skipped.

    ``config_errors``: per repository whose ``.github/swarm.yaml`` is invalid, its problems as
    ``file:line: what``; such a repository is skipped until the file is fixed, and
    ``config_notices`` name the pull requests to tell (once per version of the file).
    """

    items: list[Task]
    skipped: list[SkippedItem]
    config_errors: dict[str, list[str]] = field(default_factory=dict)
    config_notices: list[ConfigNotice] = field(default_factory=list)
    # The PRs (``acme/widgets#3``) the run has just told about an invalid file.
    config_told: list[str] = field(default_factory=list)
    # PRs that get a note instead of a review, decided before any model call: nothing of
    # theirs is left to read in full, or too much is.
    notes: list[PullNote] = field(default_factory=list)
    # (repo, number) -> path -> about how many tokens reading that file's patch costs.
    sizes: dict[tuple[str, int], dict[str, int]] = field(default_factory=dict)
    # Replies in the bot's threads for the responder to answer (agents.planning.replies).
    replies: list[Task] = field(default_factory=list)
    # The role that answers them: the respond kind's (agents.kinds.respond).
    reply_role: str | None = None

    @property
    def already_reviewed(self) -> int:
        """Items already done: reviewed at their head, or (the writer's) a draft already open."""
        done = ("already_reviewed", "pull_request_open", "implemented_before")
        return sum(1 for s in self.skipped if s.reason in done)

    @property
    def unreadable(self) -> list[SkippedItem]:
        return [s for s in self.skipped if s.reason == "unreadable"]

    def not_found(self, targets: Iterable[tuple[str, int]]) -> list[str]:
        """The targets (``OWNER/NAME#N``) that are not open: neither work nor skipped for a
        reason, in a repository that was read (a repository that could not be listed, or whose
        file is invalid, says so itself)."""
        seen = {(t.repo.lower(), t.number) for t in [*self.items, *self.replies]}
        seen |= {(s.repo.lower(), s.number) for s in self.skipped}
        blind = {s.repo.lower() for s in self.skipped if not s.number}
        blind |= {repo.lower() for repo in self.config_errors}
        return [
            f"{repo}#{number}"
            for repo, number in targets
            if (repo.lower(), number) not in seen and repo.lower() not in blind
        ]


@dataclass(frozen=True)
class DiscoveryAsk:
    """What one discovery looks for, beside where (the source, the repositories, the ledger).

    ``role`` is the role whose work is found. ``posting_roles`` are other roles whose review
    stands for this role's: the summarizer posts the single review of a sharded PR under its own
    key. ``bot_login`` is the login verified for the bot discovery reads as (None: unverified):
    only its markers count (:func:`agents.posting.keys.marker_counts`), so a marker pasted by a PR
    author neither skips the PR nor moves its re-review base.
    ``targets`` narrows discovery to those (repo, number) pairs. ``rerun`` forces a review:
    a PR already reviewed at its head gets a new one under the key's re-review form, and the
    repository's skip rules (authors, labels, drafts) give way; its path rules still hold.
    ``known_roles``: the roles that exist; a repository's file naming another is invalid.
    A file whose patch alone costs more than ``max_file_tokens`` is listed, not read in full.
    ``draft_authors``: logins whose drafts are reviewed whatever ``skip.drafts`` says: the
    swarm's own writer bots, whose every pull request is a draft that waits for a person, not
    work in progress. ``draft_authors_of`` answers them instead, asked only once a listed pull
    request is a draft: a writer's login costs its App a ``GET /app`` (App JWT), which a
    repository with no draft never needs (issue 33's call bench counted one per run).
    """

    role: str
    bot_login: str | None
    posting_roles: Sequence[str] = ()
    include_drafts: bool = False
    targets: Collection[tuple[str, int]] | None = None
    rerun: str | None = None
    known_roles: Collection[str] | None = None
    max_file_tokens: int = SHARD_TOKENS
    draft_authors: Collection[str] = ()
    draft_authors_of: Callable[[], Awaitable[Collection[str]]] | None = None

    @property
    def roles(self) -> tuple[str, ...]:
        """The role, then the other roles whose review stands for its."""
        return (self.role, *[r for r in self.posting_roles if r != self.role])

    def drafts_of(self, author: str | None) -> bool:
        """Whether a draft by ``author`` is work."""
        return self.include_drafts or author in self.draft_authors


async def discover_work(
    source: PullSource,
    repos: Sequence[str],
    ask: DiscoveryAsk,
    ledger: ReviewLedger | None = None,
) -> Discovery:
    """Open PRs of ``repos`` that ``ask.role`` has not yet reviewed at their head SHA."""
    ledger = ledger or NoLedger()
    roles, rerun = ask.roles, ask.rerun
    wanted = {(r.lower(), n) for r, n in ask.targets} if ask.targets is not None else None
    found = Discovery(items=[], skipped=[])
    for repo in repos:
        try:
            pulls = await source.open_pulls(repo)
        except (TokenRefused, IdentityPaused):
            raise  # our own identity's failure or pause: every repository would fail alike
        except Exception as exc:
            # One repository that cannot be listed must not hide the others' pull requests.
            log.warning("%s: cannot list its pull requests: %s", repo, exc)
            found.skipped.append(SkippedItem(repo, 0, "", "unreadable", f"cannot list PRs: {exc}"))
            continue
        if wanted is not None:
            pulls = [p for p in pulls if (repo.lower(), p["number"]) in wanted]
            if not pulls:
                continue
        if rerun is None and all(_done_here(ledger, repo, p, roles) for p in pulls):
            # The store has every listed PR reviewed at its head and nothing forces another
            # review: whatever the repository's file says, no PR of it gets work, so it is not
            # read (one GitHub call per re-poll of an unchanged repository, issue 23). An
            # invalid file is reported, and told, when a PR next needs work.
            found.skipped += [
                SkippedItem(repo, p["number"], head_sha(p), "already_reviewed") for p in pulls
            ]
            continue
        try:
            config = await _repo_config(source, repo, ask.known_roles)
        except RepoConfigError as exc:
            log.warning("%s: %s; the repository is skipped", repo, exc)
            found.config_errors[repo] = exc.problems
            if exc.digest is not None:  # read but invalid (not unreadable): tell its PRs
                numbers = tuple(
                    p["number"] for p in pulls if ask.include_drafts or not p.get("draft")
                )
                notice = ConfigNotice(repo, exc.digest, tuple(exc.problems), numbers)
                found.config_notices.append(notice)
            continue
        if (
            ask.draft_authors_of is not None
            and not ask.include_drafts
            and any(p.get("draft") for p in pulls)
        ):
            # Asked once, at the first draft of any repository; the rest reuse the answer.
            authors = {*ask.draft_authors, *await ask.draft_authors_of()}
            ask = replace(ask, draft_authors=frozenset(authors), draft_authors_of=None)
        for pull in pulls:
            await _consider(found, source, ledger, config, (repo, pull), ask)
    return found


async def _repo_config(
    source: PullSource, repo: str, known_roles: Collection[str] | None
) -> RepoConfig:
    try:
        text = await source.repo_config(repo)
    except Exception as exc:
        # Unreadable is not "absent": reviewing with defaults could undo the repository's skips.
        raise RepoConfigError([f"{CONFIG_PATH}: could not be read: {exc}"]) from None
    return RepoConfig() if text is None else parse_repo_config(text, known_roles=known_roles)


async def _consider(
    found: Discovery,
    source: PullSource,
    ledger: ReviewLedger,
    config: RepoConfig,
    listed: tuple[str, Pull],
    ask: DiscoveryAsk,
) -> None:
    """Add ``listed`` (a repository and one of its pull requests) to ``found`` as a task, or as
    skipped with its reason (and a note)."""
    repo, pull = listed
    number, head, author = pull["number"], head_sha(pull), author_login(pull)
    role, roles = ask.role, ask.roles
    bot_login, rerun, include_drafts = ask.bot_login, ask.rerun, ask.drafts_of(author)
    max_file_tokens = ask.max_file_tokens

    def skip(reason: SkipReason, detail: str | None = None) -> None:
        found.skipped.append(SkippedItem(repo, number, head, reason, detail))

    rule = skip_rule(
        config,
        role=role,
        author=author,
        labels=label_names(pull),
        draft=bool(pull.get("draft")) and not include_drafts,
    )
    if rule is not None and (rerun is None or rule[0] == "role_disabled"):
        skip(rule[0], rule[1])
        return
    keys = {review_key(repo, number, head, r) for r in roles}
    reviewed_here = any(ledger.has_review(k) for k in keys)
    # Reviewed at this head by a run interrupted before its summary: planned as ever (the
    # summary reads the repository's settings and files), and the role that posted the review
    # finishes it from the store's record, with no model call.
    left = None if rerun is not None else _left_unfinished(ledger, repo, pull, roles)
    if reviewed_here and left is None and rerun is None:
        skip("already_reviewed")
        return
    since = ledger.last_reviewed_sha(repo, number, roles)
    try:
        reviews = await source.reviews(repo, number)
        files = await source.changed_files(repo, number)
    except Exception as exc:
        # One unreadable PR must not hide the others; the next run tries it again.
        log.warning("%s#%d: cannot read it for planning: %s", repo, number, exc)
        skip("unreadable", str(exc))
        return
    marked_here, marker_since = _scan_markers(reviews, (repo, number), keys, roles, bot_login)
    if marked_here and not any(ledger.agrees(k) for k in keys):
        # The bot's login wrote it, but no worker of ours claimed it: not our review.
        log.warning("%s#%d: a review marker the store never claimed is ignored", repo, number)
        marked_here = False
    if marked_here and left is None and rerun is None:
        log.info("%s#%d already carries a review marker at this SHA", repo, number)
        skip("already_reviewed")
        return
    split = split_files(files, config, max_file_tokens)
    forced = rerun if (reviewed_here or marked_here) else None
    problem = scope_problem(config, split)
    if problem is not None:
        skip(problem[0], problem[1])
        found.notes.append(PullNote(repo, number, head, role, problem[1], split.listed, forced))
        return
    since = since or marker_since
    read = tuple(f.path for f in split.read)
    found.sizes[(repo, number)] = {f.path: f.tokens for f in split.read}
    found.items.append(
        Task(
            repo=repo,
            number=number,
            head_sha=head,
            base_sha=base_sha(pull),
            since_sha=since if since != head else None,
            files=read,
            listed=split.listed,
            rules=RepoRules(
                guidance=guidance_for(config, read),
                language=config.language,
                min_severity=config.review.min_severity,
                max_comments=config.review.max_comments,
            ),
            rerun=forced,
            kind="review_pr" if left in (None, role) else "summarize",
            finishing=left is not None,
        )
    )


def _left_unfinished(
    ledger: ReviewLedger, repo: str, pull: Pull, roles: Sequence[str]
) -> str | None:
    """The role whose review of ``pull`` at its head was posted with its rest left undone."""
    keys = {r: review_key(repo, pull["number"], head_sha(pull), r) for r in roles}
    return next((r for r, key in keys.items() if ledger.unfinished(key)), None)


def _done_here(ledger: ReviewLedger, repo: str, pull: Pull, roles: Sequence[str]) -> bool:
    """Whether the store has ``pull`` reviewed at its head, with nothing left after the review."""
    keys = [review_key(repo, pull["number"], head_sha(pull), r) for r in roles]
    # The store is asked what was left undone only about a PR it has a review of.
    return (
        any(ledger.has_review(k) for k in keys)
        and _left_unfinished(ledger, repo, pull, roles) is None
    )


def _scan_markers(
    reviews: Iterable[ExistingReview],
    where: tuple[str, int],
    keys: set[str],
    roles: Sequence[str],
    bot_login: str | None,
) -> tuple[bool, str | None]:
    """(a review with one of these keys exists, the commit of these roles' latest review).

    A marker counts only in the review it names (:func:`agents.posting.keys.marked_at`): this
    PR (``where``: repository and number), at the commit GitHub records for that review."""
    repo, number = where
    latest: str | None = None
    for review in reviews:
        for found in marked_keys(review.user_login, review.body, bot_login):
            if not marked_at(found, repo, number, review.commit_id):
                log.warning(
                    "%s#%d: ignored a review marker for %s in a review at %s",
                    repo,
                    number,
                    found,
                    review.commit_id,
                )
                continue
            if found in keys:
                return True, None
            parts = parse_review_key(found)
            if parts is not None and parts.role in roles:
                latest = review.commit_id
    return False, latest
