"""Flow tests: one Prefect test harness for the session, a sandbox GitHub and swarm settings each.

The harness starts a temporary Prefect server (about 20 s), so it is shared by every flow test;
each test gets its own sandbox, data directory and store, so tests do not see each other's work.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from sandbox.github.seed import REPOS, credentials_env
from sandbox.github.state import SandboxState
from sandbox.server import SandboxServer
from tests.paths import ROOT
from tests.sandbox_fixtures import SANDBOX_PACING

if TYPE_CHECKING:
    from flows.run.request import RunRequest
    from tests.events.harness import Events

SEALING_KEY = "qJzH8m5cF1oYbXw2V0kT9rE3uN6pL4sAaGdQeWiZyMc="
PLANTED_ANTHROPIC_KEY = "sk-ant-api03-PLANTEDdoNotLeakThisKey0123456789abcdefABCDEF"


@dataclass
class Swarm:
    """A sandbox GitHub plus the settings a flow run reads from the environment."""

    server: SandboxServer
    data_dir: Path
    keys_dir: Path

    @property
    def state(self) -> SandboxState:
        return self.server.state

    def bot_reviews(self, repo: str, number: int) -> list[Any]:
        pull = self.state.pull(repo, number).pull
        assert pull is not None
        return [r for r in pull.reviews if r.user_login.endswith("[bot]") and not r.files_a_reply]

    def review_counts(self) -> dict[str, int]:
        counts = {}
        for repo in REPOS:
            for number, issue in sorted(self.state.repo(repo).issues.items()):
                if issue.pull is not None:
                    counts[f"{repo}#{number}"] = len(self.bot_reviews(repo, number))
        return counts

    def writes_by(self, login: str) -> list[Any]:
        """Requests that changed something on GitHub (revoking one's own token does not count)."""
        return [
            r
            for r in self.state.requests_by(login)
            if r.is_write and r.route != "/installation/token"
        ]


def use_sandbox_settings(
    monkeypatch: pytest.MonkeyPatch, server: SandboxServer, root: Path
) -> Swarm:
    for key in list(os.environ):
        if key.startswith("SWARM_"):
            monkeypatch.delenv(key)
    keys_dir = root / "keys"
    for key, value in credentials_env(server.state, keys_dir, server.url).items():
        monkeypatch.setenv(key, value)
    data_dir = root / "data"
    monkeypatch.setenv("SWARM_DATA_DIR", str(data_dir))
    monkeypatch.setenv("SWARM_ROLES_DIR", str(ROOT / "roles"))
    monkeypatch.setenv("SWARM_REPOS", ",".join(REPOS))
    monkeypatch.setenv("SWARM_SEALING_KEY", SEALING_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED_ANTHROPIC_KEY)
    monkeypatch.setenv("SWARM_MODEL", "scripted")
    for key, value in SANDBOX_PACING.items():
        monkeypatch.setenv(key, value)
    return Swarm(server, data_dir, keys_dir)


@pytest.fixture
def swarm(
    prefect_harness: None, sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Swarm:
    return use_sandbox_settings(monkeypatch, sandbox, tmp_path)


def run_swarm(**parameters: Any) -> tuple[Any, Any]:
    """Run the flow in this process on a request of ``parameters`` (the scripted model unless
    they name one); returns (final state, RunReport)."""
    from flows.run.flow import swarm_run
    from flows.run.request import RunRequest

    flow = swarm_run
    options = parameters.pop("flow_options", None)
    if options:
        flow = swarm_run.with_options(**options)
    request = RunRequest(**{"model": "scripted", **parameters})

    async def run() -> Any:
        return await flow(request, return_state=True)

    state = asyncio.run(run())
    return state, state.result(raise_on_failure=False)


def events_scenario(swarm: Swarm, body: Callable[[Events], Awaitable[None]]) -> list[RunRequest]:
    """Run ``body`` against a webhook receiver whose runs are real flow runs (in process, the
    scripted model); the runs it started."""
    from agents.store import Store
    from flows.webhook.enqueue import run_flow_here
    from tests.events.harness import receiver_over

    started: list[RunRequest] = []

    async def main() -> None:
        with Store.open(None, swarm.data_dir) as store:
            async with receiver_over(swarm.server, store) as events:

                async def really_run(request: RunRequest) -> None:
                    started.append(request)
                    await run_flow_here(request.model_copy(update={"model": "scripted"}))

                events.enqueuer.runner = really_run
                await body(events)

    asyncio.run(main())
    return started


def task_runs_of(flow_run_id: Any) -> list[Any]:
    """Task runs of one flow run, as the Prefect API stores them."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    async def read() -> list[Any]:
        async with get_client() as client:
            return list(
                await client.read_task_runs(
                    flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id]))
                )
            )

    return asyncio.run(read())
