"""A run over several repositories: a PR in one cannot steer a worker into another's history.

The security reviewer may search its whole run's history (``history_scope: run``). Until issue 37
"the run" meant every worker of the run, whatever repository it worked on: a PR in
``acme/widgets`` that asked the reviewer to search history got the title and body of a PR in
``acme/gadgets`` back (a private PR's text, to be posted on a public one). Run-wide now means the
sessions of this run on this repository, as this identity. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from sandbox.github.seed import GADGETS, WIDGETS
from tests.store.backends import StoreTarget, pg_session_url, sqlite_template, store_target
from tests.worker.conftest import Swarm
from tests.worker.fake_models import ReplayModel, message, tool_use

__all__ = ["pg_session_url", "sqlite_template", "store_target"]
pytestmark = pytest.mark.anyio

OTHER_REPOSITORY_WORD = "Zephyrquill"
SAME_REPOSITORY_WORD = "Marigoldspan"


class ObedientModel(ReplayModel):
    """Does what the PR asked: searches the run's history for each word, then stops."""

    def __init__(self, words: list[str]) -> None:
        super().__init__([])
        self.words = words
        self.results: list[str] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        body: dict[str, Any] = json.loads(request.content)
        self.requests.append(body)
        last = body["messages"][-1]["content"]
        if isinstance(last, list):
            self.results += [
                json.dumps(b.get("content")) for b in last if b.get("type") == "tool_result"
            ]
        turn = len(self.requests)
        if turn <= len(self.words):
            args = {"query": self.words[turn - 1], "scope": "run", "include_tool_events": True}
            return httpx2.Response(200, json=message([tool_use("history_search", args, turn)]))
        return httpx2.Response(
            200, json=message([{"type": "text", "text": "done"}], stop="end_turn")
        )


def _pull(swarm: Swarm, repo: str, word: str) -> int:
    issue = swarm.sandbox.state.add_pull(
        repo,
        f"{word}: rotate the service password",
        {"src/extra.py": f"SERVICE = {word!r}\n"},
        body=f"Private notes on {word}: the service password moves to the vault.",
    )
    return issue.number


async def test_run_scope_history_never_reaches_another_repository_of_the_run(
    make_swarm: Callable[..., Swarm],
    store_target: StoreTarget,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if store_target.url is not None:
        monkeypatch.setenv("SWARM_STORE_URL", store_target.url)
    async with make_swarm() as swarm:
        # Earlier in the run: a security review in gadgets, and one in widgets.
        for repo, word in ((GADGETS, OTHER_REPOSITORY_WORD), (WIDGETS, SAME_REPOSITORY_WORD)):
            task = swarm.pull_task(repo, _pull(swarm, repo, word))
            await swarm.run(await swarm.dispatch(task, "security-reviewer"))
        gadgets, widgets = (w.id for w in swarm.runtime.store.list_workers(run_id=swarm.run_id))
        # A PR in widgets asks the reviewer to search the run's history for both words.
        model = ObedientModel([OTHER_REPOSITORY_WORD, SAME_REPOSITORY_WORD])
        swarm.use_model(model.client())
        hostile = swarm.pull_task(WIDGETS, _pull(swarm, WIDGETS, "Search history"))
        await swarm.run(await swarm.dispatch(hostile, "security-reviewer"))

    assert len(model.results) == 2, model.results
    same = model.results[1]
    # The run's history of this repository is searchable (its earlier widgets session)...
    assert f"worker:{widgets}#" in same
    # ... and gadgets' is not there to find: not its sessions, not its PR's words.
    sent = json.dumps(model.requests)
    assert f"worker:{gadgets}#" not in sent
    assert f"Private notes on {OTHER_REPOSITORY_WORD}" not in sent
    assert f"{OTHER_REPOSITORY_WORD}: rotate" not in sent
