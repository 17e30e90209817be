"""Trust class 5, outbound text: a PR that commits a token must not get it republished.

The attack: a pull request adds a file holding a live-looking token. A reviewer that quotes the
offending line (as the scripted reviewer does, like a real one) would post the token back to
GitHub under the bot's name, and the model would have read it. Two choke points close it: every
request to the model is redacted (:mod:`agents.llm.outbound`) and every JSON body sent to GitHub
is redacted (:meth:`agents.github.throttled_client.ThrottledClient.request`). Each is tested on
its own path, and the whole run end to end.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import string
from typing import Any

import pytest

from sandbox.github.state import SandboxState
from sandbox.github.tokens import stateless_token
from sandbox.model import ScriptedModel, ScriptedServer
from sandbox.server import SandboxServer
from tests.github.sandbox_helpers import reviewer_gateway
from tests.run.conftest import Swarm, run_swarm, swarm

__all__ = ["swarm"]  # the flow tests' sandbox fixture (the Prefect harness is a root plugin)

WIDGETS = "acme/widgets"
ALNUM = string.ascii_letters + string.digits


def _random(n: int) -> str:
    return "".join(secrets.choice(ALNUM) for _ in range(n)) + "9Z"


PLANTED = {
    "classic PAT": "ghp_" + _random(34),
    "installation token": "ghs_" + _random(34),
    "fine-grained PAT": "github_pat_" + _random(20) + "_" + _random(57),
    "stateless installation token": stateless_token(1001, 2001, 2e9),
    "anthropic key": "sk-ant-api03-" + _random(60),
}
ATTACK_FILE = "\n".join(
    [
        '"""Deployment settings."""',
        f'GITHUB_TOKEN = "{PLANTED["classic PAT"]}"',
        f"CLONE_URL = 'https://x-access-token:{PLANTED['installation token']}@github.com/acme/w'",
        f'FALLBACK = {{"note": "rotated\\n{PLANTED["fine-grained PAT"]}"}}',
        f"ANTHROPIC = 'my_{PLANTED['anthropic key']}'",
        f"INSTALLATION = '{PLANTED['stateless installation token']}'",
        "",
    ]
)


def _leaks(text: str) -> list[str]:
    return [name for name, value in PLANTED.items() if value[-24:] in text]


def _bot_written(state: SandboxState) -> str:
    """Everything a bot wrote on the sandbox: reviews, inline comments, comments, labels."""
    parts: list[str] = []
    for repo in state.repos.values():
        for issue in repo.issues.values():
            parts += [c.body for c in issue.comments if c.user_login.endswith("[bot]")]
            parts += [label.name for label in issue.labels]
            if issue.pull is not None:
                parts += [r.body for r in issue.pull.reviews if r.user_login.endswith("[bot]")]
                parts += [
                    c.body for c in issue.pull.review_comments if c.user_login.endswith("[bot]")
                ]
    return "\n".join(parts)


@pytest.mark.prefect
def test_a_token_committed_in_a_pr_reaches_neither_the_model_nor_the_review(
    swarm: Swarm, monkeypatch: pytest.MonkeyPatch
) -> None:
    pull = swarm.state.add_pull(WIDGETS, "Add deployment settings", {"deploy.py": ATTACK_FILE})
    model = ScriptedModel()
    with ScriptedServer(model) as server:
        # A real model id: the run talks to the scripted model over HTTP through the real SDK.
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        _state, report = run_swarm(repos=[WIDGETS], model="claude-sonnet-4-6")
    assert report.new_reviews >= 1

    seen_by_model = json.dumps(model.requests)
    assert "deploy.py" in seen_by_model, "the model should have read the attacking file"
    assert _leaks(seen_by_model) == []

    [review] = swarm.bot_reviews(WIDGETS, pull.number)
    assert pull.pull is not None
    inline = [c.body for c in pull.pull.review_comments if c.review_id == review.id]
    posted = "\n".join([review.body, *inline])
    # The reviewer did quote the line, as a reviewer would: with the token redacted.
    assert "Hard-coded credential" in posted
    assert "[REDACTED:" in posted
    assert _leaks(posted) == []
    assert _leaks(_bot_written(swarm.state)) == []


def _write_everything(server: SandboxServer, number: int, text: str) -> None:
    async def go() -> None:
        async with reviewer_gateway(server) as gateway:
            pull = await gateway.get_pull(WIDGETS, number)
            await gateway.create_review(
                WIDGETS,
                number,
                f"Summary quoting {text}",
                commit_id=pull["head"]["sha"],
                comments=[
                    {"path": "deploy.py", "line": 2, "side": "RIGHT", "body": f"inline {text}"}
                ],
            )
            await gateway.create_issue_comment(WIDGETS, number, f"comment: {text}")
            await gateway.add_labels(WIDGETS, number, [text[:50]])

    asyncio.run(go())


@pytest.mark.parametrize(
    "shape",
    [
        lambda t: t,
        lambda t: f"token={t}",
        lambda t: json.dumps({"quoted": f"\n{t}"}),
        lambda t: f"`{t[:20]}\n{t[20:]}`",
    ],
    ids=["bare", "assignment", "json-escaped", "wrapped"],
)
def test_every_body_the_gateway_sends_to_github_is_redacted(
    sandbox: SandboxServer, shape: Any
) -> None:
    # A model that writes a token by itself (it was never shown one) is the worst case: the
    # GitHub side must hold on its own.
    pull = sandbox.state.add_pull(WIDGETS, "Deploy", {"deploy.py": ATTACK_FILE})
    _write_everything(sandbox, pull.number, " and ".join(shape(v) for v in PLANTED.values()))
    written = _bot_written(sandbox.state)
    # Review body, inline comment and issue comment each hold every value, redacted.
    assert written.count("[REDACTED:") >= 3 * len(PLANTED)
    assert _leaks(written) == []


def send_to_model(model: ScriptedModel, request: dict[str, Any]) -> None:
    """``request`` sent once through the real LLM client and SDK to the scripted model."""
    from agents.llm.client import LLMClient

    async def go() -> None:
        client = LLMClient(api_key="sk-ant-api03-outbound-test", http_client=model.async_client())
        try:
            await client.create(request)
        finally:
            await client.aclose()

    asyncio.run(go())


def test_every_request_to_the_model_is_redacted_whoever_built_it() -> None:
    model = ScriptedModel()
    diff = json.dumps([{"filename": "deploy.py", "status": "added", "patch": ATTACK_FILE}])
    request: dict[str, Any] = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 256,
        "system": [{"type": "text", "text": f"context {PLANTED['classic PAT']}"}],
        "messages": [
            {"role": "user", "content": f"Review pull request {WIDGETS}#1"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "list_pr_files",
                        "input": {"repo": WIDGETS, "note": PLANTED["anthropic key"]},
                    }
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": diff}],
            },
        ],
    }

    send_to_model(model, request)
    assert len(model.requests) == 1
    assert _leaks(json.dumps(model.requests)) == []
    assert "deploy.py" in json.dumps(model.requests)
