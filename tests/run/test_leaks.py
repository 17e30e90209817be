"""After a demo-like swarm run, no planted secret is anywhere the run wrote.

Planted: every token the sandbox minted during the run (installation tokens), the sandbox's
maintainer and bot PATs, the host's GH_TOKEN, the App private key, the envelope sealing key and
an Anthropic API key. Scanned: the store's database files, Prefect's database files, Prefect's
result storage, the flow and task run logs and every artifact of the run (read back through the
Prefect API), the run's task states, and every log record Python emitted.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

from sandbox.github.records import TokenFormat
from sandbox.github.seed import REPOS, REVIEWER_APP_ID
from tests.conftest import HOST_GH_TOKEN
from tests.run.conftest import (
    PLANTED_ANTHROPIC_KEY,
    SEALING_KEY,
    Swarm,
    run_swarm,
    task_runs_of,
)

pytestmark = pytest.mark.prefect


def _planted(swarm: Swarm) -> dict[str, str]:
    secrets = {
        "host GH_TOKEN": HOST_GH_TOKEN,
        "sealing key": SEALING_KEY,
        "anthropic key": PLANTED_ANTHROPIC_KEY,
        "maintainer PAT": swarm.state.maintainer_pat,
        "bot PAT": swarm.state.bot_pat,
    }
    pem_lines = swarm.state.private_key_pem(REVIEWER_APP_ID).splitlines()
    secrets["App private key"] = pem_lines[len(pem_lines) // 2]
    for n, value in enumerate(swarm.state.tokens):
        secrets[f"minted token {n}"] = value
        if value.startswith("ghs_") and value.count(".") == 2:
            # A stateless token's JWT is the credential too: no part of it may survive.
            secrets[f"minted token {n}'s JWT"] = value.split("_", 2)[2]
    return secrets


def _files_under(*roots: Path) -> list[Path]:
    return [p for root in roots if root.exists() for p in root.rglob("*") if p.is_file()]


def _prefect_db_files() -> list[Path]:
    from prefect.settings import PREFECT_API_DATABASE_CONNECTION_URL, PREFECT_HOME

    url = str(PREFECT_API_DATABASE_CONNECTION_URL.value())
    db = Path(url.split(":///", 1)[1])
    files = [p for p in db.parent.glob(db.name + "*") if p.is_file()]
    assert files, f"no Prefect database at {db}"
    return files + _files_under(Path(str(PREFECT_HOME.value())) / "storage")


def _api_texts(flow_run_id: Any) -> tuple[list[str], set[str]]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterFlowRunId,
        FlowRunFilter,
        FlowRunFilterId,
        LogFilter,
        LogFilterFlowRunId,
    )
    from prefect.logging.handlers import APILogWorker

    # Prefect ships a run's logs in batches, every 2 s: a run shorter than that, as the
    # writer's became once the sandbox stopped pacing writes a second apart, had none on the
    # server yet when read. Send what is queued first, as Prefect's own test harness does.
    APILogWorker.drain_all(timeout=30, at_exit=False)

    async def read() -> tuple[list[str], set[str]]:
        async with get_client() as client:
            logs = await client.read_logs(
                log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id]))
            )
            artifacts = await client.read_artifacts(
                artifact_filter=ArtifactFilter(
                    flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id])
                )
            )
            flow_run = await client.read_flow_run(flow_run_id)
            runs = await client.read_task_runs(
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id]))
            )
        texts = [log.message for log in logs]
        texts += [str(a.data) + str(a.description) for a in artifacts]
        texts.append(flow_run.model_dump_json())
        texts += [t.model_dump_json() for t in runs]
        assert logs and artifacts, "the run should have logs and artifacts to scan"
        return texts, {log.name for log in logs}

    return asyncio.run(read())


@pytest.mark.parametrize("token_format", ["classic", "stateless"])
def test_no_planted_secret_in_store_prefect_db_logs_or_artifacts(
    swarm: Swarm, caplog: pytest.LogCaptureFixture, token_format: TokenFormat
) -> None:
    caplog.set_level(logging.DEBUG)
    # GitHub's installation tokens in both shapes: ghs_ + 36 characters, and the stateless
    # ghs_<app id>_<JWT> of ~520 characters with dots, dashes and underscores.
    swarm.state.knobs.token_format = token_format
    state, report = run_swarm(repos=list(REPOS), shard_threshold_files=30, shard_size=15)
    assert report.new_reviews == 6
    assert len(swarm.state.tokens) > 3, "the run should have minted tokens"
    if token_format == "stateless":
        assert all(len(t) > 400 for t in swarm.state.tokens if t.startswith("ghs_"))
    flow_run_id = state.state_details.flow_run_id
    assert task_runs_of(flow_run_id)

    planted = _planted(swarm)
    blobs: dict[str, bytes] = {}
    for path in _files_under(swarm.data_dir) + _prefect_db_files():
        blobs[str(path)] = path.read_bytes()
    texts, logger_names = _api_texts(flow_run_id)
    # The project's own loggers reach the run logs (through the redacting filter).
    assert {"flows.run.flow", "agents.worker"} <= logger_names
    for n, text in enumerate(texts):
        blobs[f"prefect api text {n}"] = text.encode()
    for record in caplog.records:
        blobs[f"log {record.name}"] = (record.getMessage() + (record.exc_text or "")).encode()

    found = [
        f"{name} in {where}"
        for name, secret in planted.items()
        for where, blob in blobs.items()
        if secret and secret.encode() in blob
    ]
    assert found == []
