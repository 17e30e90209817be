"""The notes of a run: one per pull request that ends without a full review, posted as its bot.

A note stands for the PR's review at its head (:mod:`agents.posting.notes`): discovery decided
there is nothing to read in full or too much, or the review could not finish for a reason the
next run would meet again. It is posted with a token for that repository that may write pull
requests and nothing more; only a verified bot posts (whose markers count rests on the login).
A note that cannot be posted is logged and left for the next run, never the run's end.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agents.posting.notes import PullNote, note_body
from agents.redact import redact
from flows.run.adapters import repos_by_owner, role_identity

if TYPE_CHECKING:
    from agents.wiring import Runtime

log = logging.getLogger("flows.run.notes")

NOTE_PERMISSIONS = {"metadata": "read", "pull_requests": "write"}


async def post_pr_notes(runtime: Runtime, role: str, notes: Sequence[PullNote]) -> list[str]:
    """Post each note once; the labels (``acme/x#3@abc1234``) of the PRs that now carry one (posted
    now or already there). A dry run posts nothing and returns none."""
    if runtime.dry_run or not notes:
        return []
    from agents.github.errors import GitHubApiError, TokenRefused
    from agents.posting.notes import post_note
    from agents.transport import GitHubUnreachable

    identity = role_identity(runtime, role)
    holder = f"notes-{uuid.uuid4().hex[:12]}"
    settled: list[str] = []
    for repos in repos_by_owner([n.repo for n in notes]).values():
        mine = [n for n in notes if n.repo in repos]
        try:
            async with runtime.discovery(identity, repos, NOTE_PERMISSIONS) as (gateway, login):
                if login is None:
                    log.warning("notes not posted: the bot's login is not verified")
                    continue
                for note in mine:
                    try:
                        await post_note(
                            note, gateway, runtime.store, holder=holder, bot_login=login
                        )
                    except TokenRefused:
                        raise
                    except (GitHubApiError, GitHubUnreachable) as exc:
                        log.warning("%s: note not posted: %s", note.label, redact(str(exc)))
                        continue
                    settled.append(note.label)
        except Exception as exc:
            log.warning("notes not posted: %s", redact(str(exc)))
    return settled


def note_previews(notes: Sequence[PullNote]) -> dict[str, str]:
    """What a dry run would post, per PR label."""
    return {n.label: note_body(n) for n in notes}
