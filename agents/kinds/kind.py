"""A kind of work, and the registry of kinds a role's ``kind:`` names.

A kind says in one place what starts its work (the routed webhook work it answers, whether
scheduled discovery finds its items, whether its work is on pull requests or issues) and how its
items are found. Tools and permissions come from the role, never from the kind. The registry is
plain data filled when :mod:`agents.kinds` is imported; a kind defined elsewhere (a test's, the
next product kind's) registers itself with :func:`register` the same way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from agents.permissions import DEFAULT_CEILING, CeilingName
from agents.work import WorkWords

if TYPE_CHECKING:
    from agents.events.routing import Delivery, Routed
    from agents.planning.discover import Discovery
    from agents.tools.context import WorkerContext
    from agents.wiring import Runtime
    from agents.work import Task


@dataclass(frozen=True)
class Route:
    """An event a kind of work starts on beyond the built-in handlers of
    :mod:`agents.events.routing` (:attr:`Kind.routes`): the event, the actions that mean work,
    and its handler, which reads the payload and asks for work (``Delivery.asks``) or ignores
    it with the reason."""

    event: str
    actions: frozenset[str]
    handler: Callable[[Delivery], Routed]


@dataclass(frozen=True)
class Ask:
    """What a run asks discovery for: its repositories, its role (and the role that merges a
    sharded PR's reviews), its targets (None: every open item) and a forced re-run's key."""

    repos: Sequence[str]
    role: str
    summarizer_role: str | None = None
    targets: list[tuple[str, int]] | None = None
    rerun: str | None = None


Discover = Callable[["Runtime", Ask], Awaitable["Discovery"]]
# What a kind's worker sets up before its session and takes down after it, whichever way the
# session ends (the writer's working copy and branch), on the worker's own context.
Workbench = Callable[["WorkerContext"], AbstractAsyncContextManager[None]]


@dataclass(frozen=True)
class Kind:
    """One kind of work.

    ``answers``: the routed webhook work (:data:`agents.events.routing.WorkKind`) the kind's role
    takes (a ``review`` role also learns from feedback); ``on``: what its items are, so a
    ``/swarm`` word starting it is refused on the other; ``discover``: how a run of one of its
    roles finds its items (None: it is only ever planned inside another kind's run, as the
    summarizer is inside a review's); ``task``: the kind of task its workers get
    (:data:`agents.work.TaskKind`) and ``describe`` the trusted task line a worker of it reads
    first; ``routes``: webhook events it starts on that no built-in handler takes (a label
    added to an issue, say); ``writers_only``: the work its routes ask for counts only from
    someone with write access, asked of GitHub as the bot before anything runs; ``write_key``:
    the store key of the one write its task ends in, claimed before the first model call so a
    second run at the same moment stops before it spends (None: the review kinds' own keys);
    ``workbench``: what its worker sets up around the session (None: nothing); ``ceiling``: the
    permission ceiling its roles are checked against when they load (its identity's own ceiling
    is checked again before a token is minted); ``words``: how a run's report speaks of its
    writes (a review, a draft pull request); ``plan_approval``: an item of it waits for a
    maintainer's approval of its plan before anything is written, where its repository asks
    for that (``writer.approval``, carried in the task's rules: :mod:`agents.writer.approval`),
    and a run of its role first ends the approvals that waited too long."""

    name: str
    summary: str
    on: Literal["pulls", "issues"] = "pulls"
    answers: frozenset[str] = frozenset()
    discover: Discover | None = None
    task: str | None = None
    describe: Callable[[Task], str] | None = None
    routes: tuple[Route, ...] = ()
    writers_only: bool = False
    write_key: Callable[[Task, str], str | None] | None = None
    workbench: Workbench | None = None
    ceiling: CeilingName = DEFAULT_CEILING
    words: WorkWords = field(default_factory=WorkWords)
    plan_approval: bool = False


_KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Add ``kind`` (again: replaced, so a module reloaded in a test registers once)."""
    _KINDS[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Remove a kind (a test's, when it is done with it)."""
    _KINDS.pop(name, None)


def kind_named(name: str) -> Kind:
    """The kind ``name``; :class:`KeyError` when none is registered by that name."""
    return _KINDS[name]


def for_task(task: str) -> Kind | None:
    """The kind whose workers get tasks of kind ``task``."""
    return next((k for k in _KINDS.values() if k.task == task), None)


def kind_names() -> list[str]:
    """The registered kinds' names, sorted."""
    return sorted(_KINDS)
