"""``swarm memory review``: learnings proposed from review feedback wait here for a person.

Listing shows each proposal with who said it, where (the review comment and reply links) and on
which pull request; ``--accept ID`` makes it a memory workers of that repository recall (quoted,
never as an instruction), ``--reject ID`` keeps it only so the same feedback is not proposed
again.
"""

from __future__ import annotations

from flows.cli.memory_actions import origin
from flows.cli.store_actions import open_store


def review_list(*, repo: str | None) -> None:
    from flows.cli.console import print_table, say
    from flows.cli.memory_actions import check_scope

    check_scope(repo, None)
    with open_store() as store:
        proposals = store.list_memories(repo=repo, include_global=False, states=("proposed",))
    rows = (
        [
            m.id,
            m.repo or "-",
            m.body,
            str((m.source or {}).get("reply_url") or (m.source or {}).get("comment_url") or "-"),
            origin(m),
            m.created_at,
        ]
        for m in proposals
    )
    columns = ["id", "repo", "learning (quoted)", "link", "from", "when"]
    print_table(
        "proposed learnings",
        columns,
        rows,
        wraps={"learning (quoted)", "link", "from"},
        empty="no proposed learnings; replies, reactions and resolved threads on the bot's "
        "review comments are read at each run",
    )
    if proposals:
        say("accept with `swarm memory review --accept ID`, reject with `--reject ID`")


def review_decide(memory_id: int, *, accept: bool) -> None:
    from agents.settings.model import ConfigError
    from agents.store import UnknownMemoryError
    from flows.cli.console import say
    from flows.cli.memory_actions import person

    with open_store() as store:
        try:
            memory = store.get_memory(memory_id)
        except UnknownMemoryError:
            raise ConfigError(
                f"no memory {memory_id}; `swarm memory review` lists the proposals"
            ) from None
        if memory.state != "proposed" or not memory.active:
            raise ConfigError(
                f"memory {memory_id} is not a proposal (it is {memory.state}); "
                "`swarm memory review` lists the proposals"
            )
        store.set_memory_state(memory_id, "active" if accept else "rejected", by=person())
    say(f"{'accepted' if accept else 'rejected'} learning {memory_id}")
