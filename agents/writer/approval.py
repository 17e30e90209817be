"""Plan approval: the writer's plan waits for a maintainer before anything is written.

Optional per repository (``writer.approval`` in the base branch's ``.github/swarm.yaml``). The
flow (:mod:`flows.run.gate`) runs a planning session (it reads and proposes; no branch, no
commit), posts its plan on the issue once, and suspends its flow run until someone with write
access decides: in the Prefect UI's form, or with ``/swarm approve`` / ``/swarm reject NOTE`` on
the issue. A rejection with a note plans once more; a second rejection stops, and a decision
that never comes fails closed. Nothing is written to the repository before an approval.

A suspended flow run runs again from the start when resumed, so every step before the wait is
idempotent: the gate's row in the store (key ``OWNER/NAME#N/plan:ROLE``) keeps each attempt's
plan (no second planning session), each comment has its own key and hidden marker (posted
once), and the wait itself is keyed by attempt, so Prefect hands a re-run the decision it has.
The row also names the suspended flow run, which is how a ``/swarm approve`` comment finds the
run to resume.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from agents.planning.repo_config import WriterRules
from agents.posting.keys import find_own_comment, inert, with_comment_marker
from agents.posting.once import Claims, create_or_find, write_once
from agents.redact import redact

# Where a gate stands; "waiting" is the only state a decision may resume.
GateState = Literal["planning", "waiting", "approved", "rejected", "timed_out", "ended"]
FINAL_STATES: frozenset[str] = frozenset({"approved", "rejected", "timed_out", "ended"})
# What marks a gate's row among the store's keys.
GATE_MARK = "/plan:"
# A plan is planned twice at most: once, and once more after a rejection with a note.
MAX_ATTEMPTS = 2
NOTE_CHARS = 2000


def gate_key(repo: str, number: int, role: str) -> str:
    """The store key of issue ``number``'s gate for ``role``: one per issue and role."""
    return f"{repo}#{number}{GATE_MARK}{role}"


@dataclass
class Gate:
    """One issue's gate as the store keeps it. ``holder`` is the flow run that waits (the one a
    decision resumes); ``plans`` and ``notes`` are each attempt's plan and rejection note;
    ``deadline`` is when the current wait times out (epoch seconds, 0 before any wait)."""

    key: str
    holder: str
    state: str
    run_id: str
    timeout_s: int
    plans: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    deadline: float = 0.0

    @property
    def expired(self) -> bool:
        return bool(self.deadline) and time.time() >= self.deadline

    @property
    def target(self) -> tuple[str, int, str]:
        """(repo, issue number, role) from the key."""
        where, _, role = self.key.partition(GATE_MARK)
        repo, _, number = where.rpartition("#")
        return repo, int(number), role

    def doc(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "timeout_s": self.timeout_s,
            "plans": list(self.plans),
            "notes": list(self.notes),
            "deadline": self.deadline,
        }

    @classmethod
    def of(cls, key: str, holder: str, state: str, doc: Mapping[str, Any] | None) -> Gate:
        doc = doc or {}
        return cls(
            key=key,
            holder=holder,
            state=state,
            run_id=str(doc.get("run_id") or ""),
            timeout_s=int(doc.get("timeout_s") or 0),
            plans=[str(p) for p in doc.get("plans") or ()],
            notes=[str(n) for n in doc.get("notes") or ()],
            deadline=float(doc.get("deadline") or 0.0),
        )


class GateRows(Protocol):
    """The store's rows a gate lives in (:mod:`agents.store.reviews`)."""

    def get_review_key(self, key: str) -> Any: ...

    def put_gate(self, key: str, holder: str, state: str, doc: Mapping[str, Any]) -> None: ...


async def read_gate(store: GateRows, key: str) -> Gate | None:
    found = await asyncio.to_thread(store.get_review_key, key)
    if found is None:
        return None
    return Gate.of(key, str(found.worker_id), str(found.state), found.unfinished)


async def save_gate(store: GateRows, gate: Gate) -> None:
    await asyncio.to_thread(store.put_gate, gate.key, gate.holder, gate.state, gate.doc())


def guidance_for(gate: Gate) -> str:
    """What the next planning session is told: the plan a maintainer rejected and their note
    ("" on the first attempt)."""
    if not gate.notes:
        return ""
    note = gate.notes[-1].strip() or "(no note)"
    return f"Your earlier plan:\n{gate.plans[-1]}\n\nThe maintainer's note:\n{note}"


def comment_key(gate: Gate, what: str) -> str:
    """The key of one of the gate's comments: per waiting flow run, so a later gate on the same
    issue (after a timeout, say) speaks again."""
    return f"{gate.key}/{gate.holder}/{what}"


def _hours(seconds: int) -> str:
    if seconds % 3600 == 0:
        return f"{seconds // 3600} hour(s)"
    if seconds % 60 == 0:
        return f"{seconds // 60} minute(s)"
    return f"{seconds} second(s)"


def plan_text(gate: Gate, attempt: int, plan: str, flow_run: str) -> str:
    """The plan comment: the model's plan (redacted, made inert, quoted) and how to decide."""
    quoted = "\n".join(f"> {line}" for line in inert(redact(plan)).strip().splitlines())
    again = " (planned again after a rejection)" if attempt > 1 else ""
    return (
        f"The swarm's writer plans to implement this issue as follows{again}:\n\n{quoted}\n\n"
        "Nothing is written to the repository until someone with write access decides: "
        "comment `/swarm approve`, or `/swarm reject` with a note for one more plan; or "
        f"approve or reject it in the Prefect UI (flow run `{flow_run}`). Without a decision "
        f"within {_hours(gate.timeout_s)} nothing is written."
    )


def stopped_text() -> str:
    return (
        "The writer's plan was rejected twice, so it stops here: nothing was written to the "
        "repository. Ask again with `/swarm implement` when the issue says more."
    )


def timed_out_text(gate: Gate) -> str:
    return (
        f"No one decided on the writer's plan within {_hours(gate.timeout_s)}, so it stops "
        "here: nothing was written to the repository. Ask again with `/swarm implement`."
    )


class IssueComments(Protocol):
    """The gateway's issue-comment calls, made as the bot."""

    async def list_issue_comments(self, repo: str, number: int) -> list[dict[str, Any]]: ...

    async def create_issue_comment(
        self, repo: str, number: int, body: str, *, mentions: Collection[str] = ()
    ) -> dict[str, Any]: ...


async def comment_once(
    claims: Claims,
    gateway: IssueComments,
    repo: str,
    number: int,
    key: str,
    text: str,
    *,
    login: str,
    holder: str,
    mentions: Collection[str] = (),
) -> None:
    """Comment ``text`` on issue ``number`` once under ``key``: the store's claim, then the
    bot's own hidden marker on GitHub, decide whether it was written already."""
    body = with_comment_marker(text, key)

    async def find() -> dict[str, Any] | None:
        found = find_own_comment(await gateway.list_issue_comments(repo, number), key, login)
        return dict(found) if found is not None else None

    async def create() -> dict[str, Any]:
        async def post() -> dict[str, Any]:
            made = await gateway.create_issue_comment(repo, number, body, mentions=mentions)
            return {"id": made.get("id"), "html_url": made.get("html_url")}

        return dict(await create_or_find(post, find, f"comment {key}"))

    # The flow writes these within seconds of claiming them: a claim nobody finished is taken
    # over once GitHub shows no marker.
    await write_once(claims, key, holder, find=find, create=create, alive=lambda _claim: False)


async def writer_rules(gateway: Any, repo: str) -> WriterRules:
    """The ``writer:`` rules of ``repo``'s default branch head (the defaults when the file is
    missing or invalid: an invalid file stops the writer at its bench, with the reason)."""
    from agents.github.branches import branch_head, default_branch
    from agents.github.errors import GitHubApiError
    from agents.planning.repo_config import CONFIG_PATH, RepoConfigError, parse_repo_config

    base = await default_branch(gateway, repo)
    sha = await branch_head(gateway, repo, base)
    try:
        text = await gateway.get_file(repo, CONFIG_PATH, ref=sha or base)
        return parse_repo_config(text).writer
    except GitHubApiError as exc:
        if exc.status != 404:
            raise
    except RepoConfigError:
        pass
    return WriterRules()
