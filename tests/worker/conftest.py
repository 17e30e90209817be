"""A live sandbox GitHub plus a Runtime wired to it (scripted model, SQLite store in tmp)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from agents.dispatch.envelope import DispatchEnvelope, SealedEnvelope
from agents.identity import IdentityClaim
from agents.llm.client import LLMClient
from agents.outcome import WorkerOutcome
from agents.roles import RoleRefs
from agents.settings.model import load_settings
from agents.wiring import Runtime, build_runtime
from agents.work import Task
from agents.worker.run import run_worker
from flows.run.models import scripted_model
from sandbox.github.feedback import grant, reply
from sandbox.github.model import ReviewComment
from sandbox.github.seed import MAINTAINER, credentials_env
from sandbox.model import ScriptedModel
from sandbox.server import SandboxServer
from tests.paths import ROLES_DIR
from tests.sandbox_fixtures import SANDBOX_PACING

# What a PR's first review writes: the review itself, then the summary comment (written once,
# after it, with its final text; a later review edits it).
REVIEW_WRITE_ROUTES = frozenset(
    {
        "/repos/{owner}/{repo}/pulls/{pull_number}/reviews",
        "/repos/{owner}/{repo}/issues/{issue_number}/comments",
    }
)


@dataclass
class Swarm:
    sandbox: SandboxServer
    runtime: Runtime
    run_id: str
    # The offline model the runtime's client talks to (until a test swaps the model).
    scripted: ScriptedModel

    async def __aenter__(self) -> Swarm:
        return self

    async def __aexit__(self, *_exc_info: object) -> None:
        """``async with make_swarm(...) as swarm:`` closes the runtime it built."""
        await self.runtime.aclose()

    async def run(self, sealed: SealedEnvelope) -> WorkerOutcome:
        return await run_worker(sealed, self.runtime.worker)

    async def run_with_credential(
        self, task: Task, role: str = "reviewer"
    ) -> tuple[WorkerOutcome, SecretStr]:
        """Dispatch ``task`` and run its worker; with the credential its envelope sealed, for the
        tests that look for it where it must never appear."""
        sealed = await self.dispatch(task, role)
        credential = self.runtime.sealer.open(sealed).credential
        assert credential is not None
        return await self.run(sealed), credential

    async def review(self, repo: str, number: int) -> WorkerOutcome:
        """Dispatch and run one reviewer of the pull request at its head SHA."""
        return await self.run(await self.dispatch(self.pull_task(repo, number)))

    def use_model(self, client: LLMClient) -> None:
        """Workers from now on talk to ``client`` instead of the scripted model."""
        self.runtime.worker = replace(self.runtime.worker, model=client)

    async def dispatch(
        self, task: Task, role: str = "reviewer", session_role: str | None = None, **kw: Any
    ) -> SealedEnvelope:
        refs = RoleRefs(agent=role, session=session_role)
        return await self.runtime.dispatcher.dispatch(self.run_id, task, refs, **kw)

    def seal_by_hand(
        self, task: Task, claim: IdentityClaim, credential: str, worker_id: str
    ) -> SealedEnvelope:
        """A reviewer envelope sealed past the dispatcher, which would have refused it: for what
        the worker itself does with a claim or credential it should never have been sent."""
        envelope = DispatchEnvelope.issue(
            run_id=self.run_id,
            worker_id=worker_id,
            task=task,
            roles=RoleRefs(agent="reviewer"),
            identity=claim,
        )
        return self.runtime.sealer.seal(envelope, SecretStr(credential), MAINTAINER)

    def pull_task(self, repo: str, number: int, **kw: Any) -> Task:
        pull = self.sandbox.state.pull(repo, number).pull
        assert pull is not None
        return Task(kind="review_pr", repo=repo, number=number, head_sha=pull.head_sha, **kw)

    async def maintainers_question(
        self, repo: str, number: int, text: str
    ) -> tuple[ReviewComment, int, Task]:
        """The PR reviewed, then a maintainer (granted admin) replies ``text`` in the bot's thread
        on its debug print: that thread's first comment, the reply's id, and the responder's task
        to answer it."""
        assert (await self.review(repo, number)).posted
        grant(self.sandbox.state, repo, MAINTAINER, "admin")
        pull = self.sandbox.state.pull(repo, number).pull
        assert pull is not None
        root = next(c for c in pull.review_comments if "print(" in c.body)
        asked = reply(self.sandbox.state, repo, root.id, text, MAINTAINER)
        task = Task(
            kind="respond", repo=repo, number=number, head_sha=pull.head_sha, reply_to=asked
        )
        return root, asked, task

    def writes(self) -> list[Any]:
        """Writes to repository content (token mint/revoke are App calls, not content)."""
        return [
            r for r in self.sandbox.state.requests if r.is_write and r.route.startswith("/repos")
        ]


def settings_env(sandbox: SandboxServer, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in credentials_env(sandbox.state, tmp / "keys", sandbox.url).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("SWARM_DATA_DIR", str(tmp / "data"))
    monkeypatch.setenv("SWARM_ROLES_DIR", str(ROLES_DIR))
    monkeypatch.delenv("SWARM_STORE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for key, value in SANDBOX_PACING.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def make_swarm(
    sandbox: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Swarm]:
    settings_env(sandbox, tmp_path, monkeypatch)
    built: list[Runtime] = []

    def make(**overrides: Any) -> Swarm:
        model = scripted_model()
        runtime = build_runtime(load_settings(), model.client, model.model_id, **overrides)
        built.append(runtime)
        assert model.scripted is not None
        return Swarm(sandbox, runtime, runtime.store.create_run("test"), model.scripted)

    return make


@pytest.fixture
async def swarm(make_swarm: Callable[..., Swarm]) -> AsyncIterator[Swarm]:
    made = make_swarm()
    yield made
    await made.runtime.aclose()
