"""Kinds of work: each kind one module, found through a role's ``kind:`` in its YAML.

Discovery, event routing, ``/swarm`` commands, shard planning and the webhook sink ask the
registry and the role book which role does which work; none of them names a role. A new role of
an existing kind is one YAML file; a new kind is one module here declaring ``KIND`` (found and
registered when the package is imported), plus its role file.

- ``kind.py``: A kind of work (what starts it, how its items are found) and the registry of kinds
- ``book.py``: The loaded roles by kind and by ``/swarm`` word: which role answers which work
- ``review.py``: Review a pull request: discovered open PRs, the PR events, ``/swarm review``
- ``summarize.py``: Merge a sharded pull request's reviews into one: planned inside a review run
- ``triage.py``: Triage a new issue: discovered open issues, the ``issues`` event
- ``respond.py``: Answer a reply in one of the bot's review threads, once
- ``implement.py``: Implement a labelled issue as one signed draft pull request by the writer bot
- ``fix.py``: Answer the reviewer's blocking findings on the writer's own pull request, in rounds
"""

from __future__ import annotations

import importlib
import pkgutil

from agents.kinds.kind import for_task, kind_names, register

__all__ = ["for_task", "kind_names", "register"]

# Every module here that declares a ``KIND`` is a kind: a new kind is a new module, nothing else.
for _found in pkgutil.iter_modules(__path__):
    _kind = getattr(importlib.import_module(f"{__name__}.{_found.name}"), "KIND", None)
    if _kind is not None:
        register(_kind)
