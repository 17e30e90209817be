"""After a worker run, no planted secret is anywhere the run wrote."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from sandbox.github.records import TOKEN_FORMATS, TokenFormat
from sandbox.github.seed import WIDGETS, WIDGETS_PR_DEBUG_PRINT
from tests.conftest import HOST_GH_TOKEN
from tests.leakscan import database_text, files_text, leaks
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("token_format", TOKEN_FORMATS)
async def test_no_token_key_or_jwt_reaches_store_logs_or_model(
    swarm: Swarm, caplog: pytest.LogCaptureFixture, tmp_path: Path, token_format: TokenFormat
) -> None:
    caplog.set_level(logging.DEBUG)
    swarm.sandbox.state.knobs.token_format = token_format
    sealed = await swarm.dispatch(swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT))
    credential = swarm.runtime.sealer.open(sealed).credential
    assert credential is not None
    # Both installation token formats GitHub mints work end to end (issue 36): stateless
    # ``ghs_<app id>_<JWT>`` on github.com, classic ``ghs_`` + 36 on GHES ("ghes").
    if token_format == "stateless":
        assert credential.get_secret_value().startswith("ghs_1001_eyJ")
    if token_format == "ghes":
        assert re.fullmatch(r"ghs_[A-Za-z0-9]{36}", credential.get_secret_value())
    outcome = await swarm.run(sealed)
    await swarm.runtime.dispatcher.release(sealed)
    assert outcome.status == "succeeded"

    key_pem = swarm.sandbox.state.private_key_pem(1001)
    key_body = "".join(key_pem.strip().splitlines()[1:-1])[:64]
    planted = [credential.get_secret_value(), key_body, HOST_GH_TOKEN]
    store_url = swarm.runtime.settings.resolved_store_url()
    model_requests = str(swarm.scripted.requests)
    texts = [
        database_text(store_url),
        files_text(swarm.runtime.settings.data_dir),
        caplog.text,
        model_requests,
        outcome.model_dump_json(),
        repr(sealed),
        sealed.model_dump_json(),
    ]
    assert leaks(planted, *texts) == []
