"""A tool context for one task: a real token from the sandbox App, a real gateway and store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest

from agents.memory.operational import AgentMemory
from agents.tools import WorkerContext
from agents.work import Task
from agents.worker.record import StoreRecorder
from tests.worker.conftest import Swarm, make_swarm, swarm

__all__ = ["make_swarm", "swarm", "tool_context"]

MakeContext = Callable[..., Awaitable[WorkerContext]]


@pytest.fixture
async def tool_context(swarm: Swarm) -> AsyncIterator[MakeContext]:
    """``await tool_context(task, role="reviewer", **changes)``: the context a worker would give
    its tools, registered in the store; ``changes`` override its fields (``dry_run``...)."""
    gateways = []

    async def make(task: Task, role: str = "reviewer", **changes: Any) -> WorkerContext:
        sealed = await swarm.dispatch(task, role)
        opened = swarm.runtime.sealer.open(sealed)
        env = sealed.envelope
        StoreRecorder(swarm.runtime.store, env.worker_id).register(sealed, env.roles.ids())
        swarm.runtime.store.writer.flush(env.worker_id)
        login = env.identity.expected_login
        gateway = swarm.runtime.gateway(
            login, lambda: opened.credential or "", worker_id=env.worker_id
        )
        gateways.append(gateway)
        memory = AgentMemory(swarm.runtime.store, env.worker_id, repo=task.repo, role=role)
        ctx = WorkerContext(
            worker_id=env.worker_id,
            run_id=env.run_id,
            role_id=role,
            task=task,
            gateway=gateway,
            store=swarm.runtime.store,
            memory=memory,
            permissions=dict(env.identity.permissions),
            bot_login=login,
        )
        return replace(ctx, **changes)

    yield make
    for gateway in gateways:
        await gateway.aclose()
