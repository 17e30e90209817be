"""A live sandbox GitHub plus a Runtime wired to it (scripted model, SQLite store in tmp)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agents.config import load_settings
from agents.dispatch import WorkTask
from agents.envelope import SealedEnvelope
from agents.wiring import Runtime, build_runtime
from sandbox.server import SandboxServer


@dataclass
class Swarm:
    sandbox: SandboxServer
    runtime: Runtime
    run_id: str

    async def dispatch(self, task: WorkTask, role: str = "reviewer", **kw: Any) -> SealedEnvelope:
        return await self.runtime.dispatcher.dispatch(self.run_id, task, role, **kw)

    def pull_task(self, repo: str, number: int, **kw: Any) -> WorkTask:
        pull = self.sandbox.state.pull(repo, number).pull
        assert pull is not None
        return WorkTask(kind="review_pr", repo=repo, number=number, head_sha=pull.head_sha, **kw)

    def writes(self) -> list[Any]:
        """Writes to repository content (token mint/revoke are App calls, not content)."""
        return [
            r for r in self.sandbox.state.requests if r.is_write and r.route.startswith("/repos")
        ]


def settings_env(sandbox: SandboxServer, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_file = sandbox.state.write_credentials(tmp / "keys", sandbox.url)
    for line in env_file.read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            monkeypatch.setenv(key, value)
    monkeypatch.setenv("SWARM_DATA_DIR", str(tmp / "data"))
    monkeypatch.setenv("SWARM_ROLES_DIR", str(Path(__file__).resolve().parents[2] / "roles"))
    monkeypatch.delenv("SWARM_STORE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


@pytest.fixture
def make_swarm(
    sandbox: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Swarm]:
    settings_env(sandbox, tmp_path, monkeypatch)
    built: list[Runtime] = []

    def make(**overrides: Any) -> Swarm:
        runtime = build_runtime(load_settings(), model="scripted", **overrides)
        built.append(runtime)
        return Swarm(sandbox, runtime, runtime.store.create_run("test"))

    return make


@pytest.fixture
async def swarm(make_swarm: Callable[..., Swarm]) -> AsyncIterator[Swarm]:
    made = make_swarm()
    yield made
    await made.runtime.aclose()
