"""One GitHub write exactly once, under a store claim and a hidden marker of the bot's own.

Reviews, the triager's comment and the notice about an invalid ``.github/swarm.yaml`` all follow
the same steps, so they are written once, here:

1. the store says the key was posted: done, nothing is sent;
2. claim the key in the store (an atomic insert): of two writers at the same moment, on SQLite
   or PostgreSQL, exactly one wins;
3. look on GitHub for the bot's own marker of the key (only the verified login's count): a
   write GitHub accepted but the store never heard of (a crash, a lost store) is adopted;
4. write; record it posted, or give the claim back when the write failed, so a retry may try.

A claim whose holder is still alive stops the second writer; one whose holder is gone (a crashed
worker, a run killed minutes ago) is taken over once GitHub shows no marker. A worker whose work
costs (a review: the model's tokens) claims its key before that work begins
(:func:`claim_ahead`), so a second run at the same moment stops before it spends anything.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from agents.github.errors import GitHubApiError, TokenRefused
from agents.store.base import UnknownWorkerError
from agents.transport import GitHubUnreachable

if TYPE_CHECKING:
    from agents.tools.context import WorkerContext

log = logging.getLogger("swarm.review")

# Every claim step is a store query: run in a thread, it holds up no other worker on the loop.
_off = asyncio.to_thread


class PostingRefused(Exception):
    """A write this worker must not make: the tool that asked for it tells the model why."""


class Claim(Protocol):
    """A claimed or posted key, as the store keeps it."""

    @property
    def worker_id(self) -> str: ...

    @property
    def state(self) -> str: ...

    @property
    def review_id(self) -> int | None: ...

    @property
    def review_url(self) -> str | None: ...

    @property
    def at(self) -> datetime: ...


class Claims(Protocol):
    """The store's keys (``agents.store.reviews``): one row per key, inserted atomically."""

    def claim_review_key(self, key: str, worker_id: str) -> bool: ...

    def get_review_key(self, key: str) -> Claim | None: ...

    def mark_review_posted(self, key: str, review_id: int, url: str) -> None: ...

    def release_review_key(self, key: str, worker_id: str) -> bool: ...


@dataclass(frozen=True)
class Written:
    """What became of the write: ``posted`` by this call, or already there (``id``/``url`` of
    the existing one), or ``held_by`` another live holder that is writing it now."""

    posted: bool
    id: int | None = None
    url: str | None = None
    held_by: str | None = None

    @property
    def already(self) -> bool:
        return not self.posted and self.held_by is None


Find = Callable[[], Awaitable[Mapping[str, Any] | None]]
Create = Callable[[], Awaitable[Mapping[str, Any]]]


def answered(existing: Mapping[str, Any] | None) -> Find:
    """A ``find`` whose answer is known already (``write_once``'s ``find_first``): no call."""

    async def find() -> Mapping[str, Any] | None:
        return existing

    return find


async def write_once(
    claims: Claims,
    key: str,
    holder: str,
    *,
    find: Find,
    create: Create,
    alive: Callable[[Claim], bool],
    find_first: Find | None = None,
    what: str | None = None,
) -> Written:
    """Write under ``key`` at most once; ``find`` looks for the bot's own marker of ``key`` on
    GitHub, ``create`` writes (with the marker), ``alive`` says whether another holder's claim
    still stands. ``what``, when given, names the write and makes it :func:`create_or_find`'s:
    an answer GitHub lost is looked for by its marker, and tried once more when missing.
    ``find_first``, when given, stands for ``find`` once ``holder`` holds the key and no other
    holder had it: the caller knows GitHub's answer already (what discovery read this run,
    before any writer held the key), so asking again would cost a call for nothing."""
    known = await _off(claims.get_review_key, key)
    if known is not None and known.state == "posted":
        return Written(False, known.review_id, known.review_url)
    # Claimed by this holder already, before its work began (claim_ahead): it goes on to write.
    ours = known is not None and known.worker_id == holder
    if not ours and not await _off(claims.claim_review_key, key, holder):
        known = await _off(claims.get_review_key, key)
        if known is not None and known.state == "posted":
            return Written(False, known.review_id, known.review_url)
        # Claimed but not posted: GitHub has the last word on whether it was written.
        existing = await find()
        if existing is not None:
            return await _off(_adopt, claims, key, holder, existing)
        if known is not None:
            if known.worker_id != holder and await _off(alive, known):
                return Written(False, held_by=known.worker_id)
            await _off(claims.release_review_key, key, known.worker_id)
        if not await _off(claims.claim_review_key, key, holder):
            return Written(False, held_by="another writer, a moment ago")
    else:
        existing = await (find_first or find)()
        if existing is not None:
            return await _off(_adopt, claims, key, holder, existing)
    try:
        created = await (create_or_find(create, find, what) if what else create())
    except BaseException:
        # Not written (or not known to be): the next attempt's marker check decides.
        # Shielded: a worker cancelled by its wall-time budget still gives the claim back.
        await asyncio.shield(_off(claims.release_review_key, key, holder))
        raise
    written_id, url = int(created.get("id") or 0), str(created.get("html_url") or "")
    await _off(claims.mark_review_posted, key, written_id, url)
    return Written(True, written_id, url)


async def claim_ahead(
    claims: Claims, key: str, holder: str, *, alive: Callable[[Claim], bool]
) -> Written | None:
    """Claim ``key`` before the work that ends in its write begins (a review costs the model's
    tokens long before it is posted): None when ``holder`` holds it now, else why not, as
    :func:`write_once` would say at write time (posted already, or ``held_by`` a live holder).
    A gone holder's claim is taken over; GitHub's marker is still looked for at write time."""
    for _ in range(2):
        if await _off(claims.claim_review_key, key, holder):
            return None
        known = await _off(claims.get_review_key, key)
        if known is None:
            continue  # given back a moment ago: claim again
        if known.state == "posted":
            return Written(False, known.review_id, known.review_url)
        if known.worker_id == holder:
            return None  # this holder's own claim, from an earlier attempt
        if await _off(alive, known):
            return Written(False, held_by=known.worker_id)
        await _off(claims.release_review_key, key, known.worker_id)
    return Written(False, held_by="another writer, a moment ago")


def _adopt(claims: Claims, key: str, holder: str, existing: Mapping[str, Any]) -> Written:
    written_id, url = int(existing.get("id") or 0), str(existing.get("html_url") or "")
    if claims.get_review_key(key) is None:
        claims.claim_review_key(key, holder)
    claims.mark_review_posted(key, written_id, url)
    return Written(False, written_id, url)


async def create_or_find(create: Create, find: Find, what: str) -> Mapping[str, Any]:
    """``create``; when GitHub's answer is lost (5xx, timeout) the bot's own marker decides:
    found means written, missing means one more try under the same marker, never a third."""
    for attempt in (1, 2):
        try:
            return await create()
        except (GitHubApiError, GitHubUnreachable, TokenRefused) as exc:
            if not answer_lost(exc):
                raise
            log.warning("%s: GitHub's answer was lost (%s); looking for it", what, exc)
            found = await find()
            if found is not None:
                return found
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def answer_lost(exc: Exception) -> bool:
    """Whether a failed write may still have been carried out: GitHub answered 5xx, or the answer
    never came (timeout, connection cut). A 4xx is a refusal; a missing token sent nothing."""
    if isinstance(exc, GitHubApiError):
        return exc.status >= 500
    return isinstance(exc, GitHubUnreachable)


def holder_alive(ctx: WorkerContext, claim: Claim) -> bool:
    """Whether the worker holding a claim is still at work (pending or running)."""
    try:
        return ctx.store.get_worker(claim.worker_id).status in ("pending", "running")
    except UnknownWorkerError:
        return False


async def worker_writes_once(
    ctx: WorkerContext,
    key: str,
    find: Find,
    create: Create,
    what: str,
    find_first: Find | None = None,
) -> Written:
    """``write_once`` as a worker: its store, its id, a claim that stands while its holder is
    still at work, and a lost answer looked for (``what`` names the write in the log)."""
    return await write_once(
        ctx.store,
        key,
        ctx.worker_id,
        find=find,
        create=create,
        alive=lambda claim: holder_alive(ctx, claim),
        find_first=find_first,
        what=what,
    )


def task_number(ctx: WorkerContext) -> int:
    """The number of the task's pull request or issue; a write for a task without one is
    refused before any call."""
    if ctx.task.number is None:
        raise PostingRefused("this task has no pull request or issue number")
    return ctx.task.number
