"""No secret reaches a real Prefect server: its logs, artifacts, events, run parameters, states,
automations, or its database file, after swarm runs with secrets planted everywhere a run sees.

Planted: the host's GH_TOKEN and GITHUB_TOKEN (set for the whole suite), the maintainer's and the
bot's PATs, the App private key, the envelope sealing key, the Anthropic API key, every token the
sandbox minted, and a token-shaped string committed into a PR the reviewer reads. Read back
through the server's REST API, as the UI reads it, and from the database file itself.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from sandbox.github.seed import DOCS, DOCS_PR_CLEAN, REVIEWER_APP_ID
from tests.conftest import HOST_GH_TOKEN
from tests.leakscan import files_text, leaks
from tests.run.conftest import PLANTED_ANTHROPIC_KEY, SEALING_KEY
from tests.run.real_server.conftest import ObservedSwarm

pytestmark = [pytest.mark.prefect, pytest.mark.slow]

COMMITTED_TOKEN = "ghp_" + "CommittedIntoThePullRequest0123456789"


def _planted(observed: ObservedSwarm) -> list[str]:
    state = observed.sandbox.state
    pem = state.private_key_pem(REVIEWER_APP_ID).splitlines()
    secrets = [HOST_GH_TOKEN, SEALING_KEY, PLANTED_ANTHROPIC_KEY, COMMITTED_TOKEN]
    secrets += [state.maintainer_pat, state.bot_pat, pem[len(pem) // 2], *state.tokens]
    return [s for s in secrets if s]


def _all(observed: ObservedSwarm, path: str, body: dict[str, Any]) -> str:
    """Every page of a filter endpoint, as the raw JSON text the UI receives."""
    texts = []
    offset = 0
    while True:
        text = observed.server.api_text(path, {**body, "limit": 200, "offset": offset})
        texts.append(text)
        if text.count('"id"') < 200:
            return "\n".join(texts)
        offset += 200


def _events(observed: ObservedSwarm) -> str:
    page = observed.server.api("POST", "/events/filter", {"limit": 50})
    texts = [str(page["events"])]
    while page.get("next_page"):
        page = httpx.get(page["next_page"], timeout=30).json()
        texts.append(str(page["events"]))
    return "\n".join(texts)


def test_no_planted_secret_reaches_the_servers_logs_artifacts_events_or_parameters(
    observed: ObservedSwarm,
) -> None:
    observed.sandbox.state.push_commit(
        DOCS, DOCS_PR_CLEAN, {"docs/deploy.md": f"export GITHUB_TOKEN={COMMITTED_TOKEN}\n"}
    )
    run = observed.run("--repo", DOCS, GH_TOKEN=HOST_GH_TOKEN, GITHUB_TOKEN=HOST_GH_TOKEN)
    assert run.returncode == 0, run.output
    assert len(observed.sandbox.state.tokens) > 3, "the runs should have minted tokens"

    logs = _all(observed, "/logs/filter", {})
    assert "identity verified" in logs and "LLM call 1" in logs
    places = {
        "logs": logs,
        "artifacts": _all(observed, "/artifacts/filter", {}),
        "events": _events(observed),
        "flow runs (parameters, states)": _all(observed, "/flow_runs/filter", {}),
        "task runs (parameters, states)": _all(observed, "/task_runs/filter", {}),
        "automations": observed.server.api_text("/automations/filter", {}),
        "server database": files_text(observed.server.home),
        "cli output": "\n".join(r.output for r in observed.runs),
    }
    assert "swarm.review.posted" in places["events"]
    found = {where: leaks(_planted(observed), text) for where, text in places.items()}
    assert {where: hits for where, hits in found.items() if hits} == {}
