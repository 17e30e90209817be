"""Discovery's data sources: the GitHub reads it makes as the role's bot, the store's review keys
seen as its ledger, and the feedback read before a review run. Plain Python over the gateway and
the store, so each kind of work (:mod:`agents.kinds`) finds its items without the flow."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, Unpack

from agents.json_value import JSONObject, as_object, text_or_none
from agents.planning.discover import ExistingReview
from agents.planning.files import ChangedFile
from agents.planning.triage import OpenIssue
from agents.posting.keys import latest_reviewed_sha, parse_review_key, review_key_prefix
from agents.redact import redact

if TYPE_CHECKING:
    from agents.github.gateway import GitHubGateway
    from agents.github.models import Issue, Pull
    from agents.github.pull_listing import Listing
    from agents.github.pull_snapshots import Parts, PullSnapshots
    from agents.store.records import ReviewKeyRecord
    from agents.store.store import Store
    from agents.wiring import Runtime

log = logging.getLogger("swarm.planning")


class PullReads(Protocol):
    """The gateway reads discovery makes (``GitHubGateway`` provides them), GitHub's JSON."""

    async def list_open_pulls(self, repo: str, config_path: str) -> Listing: ...

    async def list_reviews(self, repo: str, number: int) -> Sequence[Mapping[str, object]]: ...

    async def list_pull_files(self, repo: str, number: int) -> Sequence[JSONObject]: ...


class GatewayPullSource:
    """Discovery's GitHub reads, made through the bot identity's throttled gateway.

    The open PRs come in one GraphQL listing a page with each PR's latest reviews and the
    repository's file (:mod:`agents.github.pull_listing`); a PR's reviews are asked over REST
    only when it has more than the listing holds. What it reads of a PR is kept in the
    gateway's snapshots (when it has them) under the PR's head as listed, for the workers that
    review it (:mod:`agents.github.pull_snapshots`)."""

    def __init__(self, gateway: PullReads) -> None:
        self.gateway = gateway
        # Each repository's listing (its open pull requests, their reviews, its file), for the
        # replies poll of the same discovery (one listing per run, not one per poll).
        self.listings: dict[str, Listing] = {}
        self._heads: dict[tuple[str, int], str] = {}

    def _keep(self, repo: str, number: int, **read: Unpack[Parts]) -> None:
        snapshots: PullSnapshots | None = getattr(self.gateway, "snapshots", None)
        head = self._heads.get((repo, number))
        if snapshots is not None and head:
            snapshots.keep(str(getattr(self.gateway, "identity", "")), repo, number, head, **read)

    async def open_pulls(self, repo: str) -> list[Pull]:
        from agents.planning.repo_config import CONFIG_PATH

        listing = self.listings[repo] = await self.gateway.list_open_pulls(repo, CONFIG_PATH)
        pulls = listing.pulls
        for p in pulls:
            self._heads[repo, int(p["number"])] = str(p["head"]["sha"])
            self._keep(repo, int(p["number"]), pull=p)
        return list(pulls)

    async def reviews(self, repo: str, number: int) -> list[ExistingReview]:
        listing = self.listings.get(repo)
        listed = listing.reviews.get(number) if listing is not None else None
        found: Sequence[Mapping[str, object]] = (
            listed if listed is not None else await self.gateway.list_reviews(repo, number)
        )
        self._keep(repo, number, reviews=found)
        return [
            ExistingReview(
                user_login=text_or_none(as_object(r.get("user")).get("login")),
                commit_id=text_or_none(r.get("commit_id")),
                body=str(r.get("body") or ""),
            )
            for r in found
        ]

    async def changed_files(self, repo: str, number: int) -> list[ChangedFile]:
        files = await self.gateway.list_pull_files(repo, number)
        self._keep(repo, number, files=files)
        return [ChangedFile.from_api(f) for f in files]

    async def repo_config(self, repo: str) -> str | None:
        """``.github/swarm.yaml`` at the default branch: never a PR's head. The repository's
        listing read it (discovery lists a repository before it reads its file)."""
        from agents.planning.repo_config import CONFIG_PATH

        listing = self.listings[repo]
        if listing.config_binary:
            raise ValueError(f"{CONFIG_PATH} is a binary file, not YAML")
        return listing.config


class ReplyReads(Protocol):
    """The gateway reads the replies poll makes (``GitHubGateway`` provides them)."""

    identity: str

    async def list_open_pulls(self, repo: str, config_path: str) -> Listing: ...

    async def list_pull_review_comments(
        self, repo: str, number: int
    ) -> Sequence[Mapping[str, object]]: ...

    async def read_repo_review_comments(
        self, repo: str, since: str | None = None
    ) -> tuple[list[JSONObject], bool]: ...

    async def collaborator_permission(self, repo: str, login: str) -> str: ...


class GatewayReplySource:
    """The responder's discovery reads: open PRs, their review comments, who may be answered.

    ``listings``: each repository's listing (open PRs and their reviews) as this run's review
    discovery read it; ``read``: each repository's review comments as the same bot's learning
    poll read them whole in this run. Either spares the poll a read of its own (issue 23)."""

    def __init__(
        self,
        gateway: ReplyReads,
        read: Mapping[str, Sequence[Mapping[str, object]]] | None = None,
        *,
        listings: Mapping[str, Listing] | None = None,
        store: Store | None = None,
    ) -> None:
        self.gateway = gateway
        self.read = read or {}
        self.listings: dict[str, Listing] = dict(listings or {})
        self.store = store
        self._marks: dict[str, JSONObject] = {}

    def _marks_key(self, repo: str) -> str:
        return f"replies-read:{str(self.gateway.identity).lower()}:{repo.lower()}"

    def _newest(self, repo: str, number: int) -> tuple[bool, str | None]:
        from agents.planning.replies import newest_reply

        listing = self.listings[repo]  # listed by open_pull_heads, which the poll asks first
        read_up_to: str | None = None
        if self.store is not None:
            if repo not in self._marks:  # read once a run per repository
                key = self._marks_key(repo)
                self._marks[repo] = self.store.transact_state(key, lambda doc: (dict(doc), doc))
            found = self._marks[repo].get(str(number))
            read_up_to = found if isinstance(found, str) else None
        return newest_reply(listing.reviews.get(number), str(self.gateway.identity), read_up_to)

    def waits(self, repo: str, number: int) -> bool:
        """Whether a reply may wait on the PR, by its reviews as this run listed them."""
        return self._newest(repo, number)[0]

    def settled(self, repo: str, number: int) -> None:
        """The PR was read with no reply left to answer: until someone reviews or replies
        after the newest review listed now, it need not be read again."""
        newest = self._newest(repo, number)[1]
        if self.store is None or newest is None:
            return

        def step(doc: JSONObject) -> tuple[None, JSONObject]:
            return None, {**doc, str(number): newest}

        self.store.transact_state(self._marks_key(repo), step)

    async def open_pull_heads(self, repo: str) -> list[tuple[int, str]]:
        """From the review discovery's listing when this run made one, else listed now."""
        from agents.planning.repo_config import CONFIG_PATH

        listing = self.listings.get(repo)
        if listing is None:
            listing = self.listings[repo] = await self.gateway.list_open_pulls(repo, CONFIG_PATH)
        return [(int(p["number"]), str(p["head"]["sha"])) for p in listing.pulls]

    async def review_comments(
        self, repo: str, numbers: Sequence[int]
    ) -> dict[int, list[Mapping[str, object]]]:
        """Each of ``numbers``' (open PRs of ``repo``) review comments, replies included: one
        read of the repository's for them all, not one per PR. Where that read would not hold
        them all (more pages than one read takes), or only one PR is asked for, PR by PR."""
        from agents.memory.learning import pull_number

        listing = self.read.get(repo)
        if listing is None and len(numbers) > 1:
            listing = await self._since_opened(repo, numbers)
        if listing is None:
            return {n: list(await self.gateway.list_pull_review_comments(repo, n)) for n in numbers}
        found: dict[int, list[Mapping[str, object]]] = {n: [] for n in numbers}
        for comment in listing:
            bucket = found.get(pull_number(comment))
            if bucket is not None:
                bucket.append(comment)
        return found

    async def _since_opened(self, repo: str, numbers: Sequence[int]) -> list[JSONObject] | None:
        """The repository's review comments updated since the oldest of ``numbers`` was opened,
        which holds every comment of theirs (none is older than its PR); None when not whole."""
        wanted = set(numbers)
        listing = self.listings.get(repo)
        opened = [
            str(p.get("created_at") or "")
            for p in (listing.pulls if listing is not None else ())
            if int(p["number"]) in wanted
        ]
        since = min(opened) if opened and all(opened) else None
        comments, whole = await self.gateway.read_repo_review_comments(repo, since)
        return comments if whole else None

    async def permission(self, repo: str, login: str) -> str:
        return await self.gateway.collaborator_permission(repo, login)


class IssueReads(Protocol):
    """The gateway reads triage discovery makes (``GitHubGateway`` provides them)."""

    async def list_issues(
        self, repo: str, state: str = "open", labels: list[str] | None = None
    ) -> list[Issue]: ...

    async def list_issue_comments(self, repo: str, number: int) -> list[JSONObject]: ...


class GatewayIssueSource:
    """Triage discovery's reads, as the triager's bot."""

    def __init__(self, gateway: IssueReads) -> None:
        self.gateway = gateway

    async def open_issues(self, repo: str) -> list[OpenIssue]:
        issues = await self.gateway.list_issues(repo, "open")
        return [
            OpenIssue(repo=repo, number=int(i["number"]), is_pull="pull_request" in i)
            for i in issues
        ]

    async def comment_authors(self, repo: str, number: int) -> list[str]:
        comments = await self.gateway.list_issue_comments(repo, number)
        return [str(as_object(c.get("user")).get("login")) for c in comments]


def repos_by_owner(repos: Sequence[str]) -> dict[str, list[str]]:
    """One installation token covers one owner: discovery reads owner by owner."""
    grouped: dict[str, list[str]] = {}
    for repo in repos:
        grouped.setdefault(repo.split("/", 1)[0].lower(), []).append(repo)
    return grouped


class ReviewKeys(Protocol):
    """The store's review keys, as far as discovery reads them."""

    def get_review_key(self, key: str) -> ReviewKeyRecord | None: ...

    def posted_review_keys(self, prefix: str) -> list[str]: ...

    def has_review_keys(self, prefix: str) -> bool: ...


class StoreLedger:
    """The store's review keys, seen as discovery's ledger."""

    def __init__(self, store: ReviewKeys) -> None:
        self.store = store

    def has_review(self, key: str) -> bool:
        record = self.store.get_review_key(key)
        return record is not None and record.state == "posted"

    def last_reviewed_sha(self, repo: str, number: int, roles: Sequence[str]) -> str | None:
        posted = self.store.posted_review_keys(review_key_prefix(repo, number))
        return latest_reviewed_sha(posted, repo, number, roles)

    def unfinished(self, key: str) -> bool:
        record = self.store.get_review_key(key)
        return record is not None and record.state == "posted" and bool(record.unfinished)

    def agrees(self, key: str) -> bool:
        if self.store.get_review_key(key) is not None:
            return True
        parts = parse_review_key(key)
        if parts is None:
            return False
        return not self.store.has_review_keys(review_key_prefix(parts.repo, parts.number))


def role_identity(runtime: Runtime, role: str) -> str:
    """The identity name a role acts as (``default`` when the role does not say)."""
    found = runtime.roles.get(role) if isinstance(runtime.roles, Mapping) else None
    if found is None:
        from agents.settings.model import ConfigError

        known = ", ".join(sorted(runtime.roles)) if isinstance(runtime.roles, Mapping) else ""
        raise ConfigError(f"role {role!r} is not defined in the roles directory (known: {known})")
    return str(getattr(found, "identity", None) or "default")


def _learning_due(store: Store, bot: str, repo: str, interval: float) -> bool:
    """Whether ``bot``'s feedback poll of ``repo`` is due: ``interval`` seconds since the last
    one, counted from a run that found no review of the bot's in the store to learn from too
    (nothing of the bot's on GitHub to react to; the interval starts there). The moment is
    taken when the poll starts, so a poll that fails is not tried again before the interval
    either: a learning waits for a maintainer in any case, and the next poll reads it all."""
    import time

    now = time.time()

    def step(doc: JSONObject) -> tuple[bool, JSONObject]:
        last = doc.get("at")
        if isinstance(last, (int, float)) and now - float(last) < interval:
            return False, doc
        return True, {"at": now}

    due = store.transact_state(f"learning-poll:{bot.lower()}:{repo.lower()}", step)
    return due and store.has_review_keys(f"{repo}#")


async def read_review_feedback(
    runtime: Runtime, gateway: GitHubGateway, repos: Sequence[str], role: str
) -> dict[str, list[JSONObject]]:
    """Replies and reactions to the bot's review comments become proposed learnings before the
    run's reviews start (polling; a webhook can call
    ``agents.memory.learning.learn_from_comments``), for a role that declares
    ``feedback_signals``. A GitHub error here is logged and never stops the run. Returns each
    repository's review comments it read whole, for the replies poll of the same bot."""
    from agents.github.errors import GitHubApiError, TokenRefused
    from agents.memory.learning import learn_from_repo
    from agents.transport import GitHubUnreachable

    read: dict[str, list[JSONObject]] = {}
    found = runtime.roles.get(role) if isinstance(runtime.roles, Mapping) else None
    if found is None or not found.feedback_signals:
        return read

    interval = runtime.settings.learning_poll_interval_s
    for repo in repos:
        if not _learning_due(runtime.store, gateway.identity, repo, interval):
            continue
        try:
            comments, whole = await gateway.read_repo_review_comments(repo)
            if whole:
                read[repo] = comments
            await learn_from_repo(
                gateway,
                runtime.store,
                repo,
                bot_logins={gateway.identity},
                auto_accept=runtime.settings.memory_auto_accept,
                comments=comments,
            )
        except (GitHubApiError, GitHubUnreachable, TokenRefused) as exc:
            log.warning("%s: review feedback not read: %s", repo, redact(str(exc)))
    return read
