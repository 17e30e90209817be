"""The scripted model: provider-like validation and usage, task-driven tool calls."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest

from agents.llm.client import LLMClient
from agents.llm.untrusted import wrap_untrusted
from agents.roles import Role, RoleChain
from sandbox.model import ScriptedModel
from tests.llm.harness import FakeRepo, ToolFailed, build_prefix, run_scripted


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _post(model: ScriptedModel, body: dict[str, Any], key: str | None = "k") -> httpx2.Response:
    headers = {"x-api-key": key} if key else {}
    with httpx2.Client(transport=httpx2.MockTransport(model.handle)) as http:
        return http.post("https://api.anthropic.com/v1/messages", json=body, headers=headers)


def _drive(
    model: ScriptedModel, role: Role, task: str, repo: FakeRepo, tools: list[str] | None = None
) -> list[dict[str, Any]]:
    """One session of the worker loop over the real SDK; returns the model's replies."""
    if tools is not None:
        role = role.model_copy(update={"tools": tuple(tools)})

    async def go() -> list[Any]:
        client = LLMClient(api_key="k", http_client=model.async_client())
        try:
            return await run_scripted(
                client,
                build_prefix(role),
                RoleChain(role),
                task,
                repo,
                max_turns=15,
                max_tokens=900,
            )
        finally:
            await client.aclose()

    turns = asyncio.run(go())
    return [{"content": t.result.content, "stop_reason": t.result.stop_reason} for t in turns]


def _tool_names(replies: list[dict[str, Any]]) -> list[str]:
    return [b["name"] for r in replies for b in r["content"] if b["type"] == "tool_use"]


def test_reviewer_reads_the_diff_and_comments_on_concrete_findings(roles: dict[str, Role]) -> None:
    repo = FakeRepo()
    replies = _drive(ScriptedModel(), roles["reviewer"], "Review pull request acme/app#7", repo)
    assert _tool_names(replies) == [
        "get_pull",
        "list_pull_files",
        "list_pull_files",
        "record_progress",
        "submit_review",
    ]
    assert replies[-1]["stop_reason"] == "end_turn"
    [(_, review)] = repo.writes
    assert review["event"] == "COMMENT" and review["repo"] == "acme/app" and review["number"] == 7
    inline = [(c["path"], c["line"], c["body"].split(";")[0]) for c in review["comments"]]
    assert inline == [
        ("src/app/service.py", 2, "Debugger breakpoint left in the code"),
        ("src/app/service.py", 5, "Leftover debug `print(`"),
        ("src/app/service.py", 6, "TODO left in new code"),
        ("src/app/service.py", 7, "Debugger breakpoint left in the code"),
        (
            "src/app/service.py",
            2,
            "This changes src/app/service.py but no test changes come with it",
        ),
    ]


def test_reviewer_calls_only_the_tools_it_is_offered(roles: dict[str, Role]) -> None:
    repo = FakeRepo()
    replies = _drive(
        ScriptedModel(read_files=True),
        roles["reviewer"],
        "Review pull request acme/app#7",
        repo,
        tools=["list_pull_files", "submit_review"],
    )
    assert _tool_names(replies) == ["list_pull_files", "list_pull_files", "submit_review"]


def test_reviewer_without_findings_posts_a_short_summary(roles: dict[str, Role]) -> None:
    clean = [{"filename": "tests/test_x.py", "status": "added", "patch": "@@ -0,0 +1 @@\n+x = 1"}]
    repo = FakeRepo(files=clean)
    _drive(ScriptedModel(), roles["reviewer"], "Review pull request acme/app#8", repo)
    [(_, review)] = repo.writes
    assert review["comments"] == []
    assert review["body"] == "Reviewed 1 changed file(s): no concrete problems found."


def test_triager_labels_and_comments_once(roles: dict[str, Role]) -> None:
    class Issues(FakeRepo):
        def execute(self, name: str, args: dict[str, Any]) -> str:
            if name == "get_issue":
                body = "The app crashes with a traceback when I upload a file."
                return json.dumps(
                    {"title": "Crash on upload", "body": wrap_untrusted("issue_body", body)}
                )
            return super().execute(name, args)

    repo = Issues()
    replies = _drive(ScriptedModel(), roles["triager"], "Triage issue acme/app#12", repo)
    assert _tool_names(replies) == ["get_issue", "add_labels", "comment_issue"]
    assert repo.writes[0] == ("add_labels", {"repo": "acme/app", "number": 12, "labels": ["bug"]})
    assert repo.writes[1][0] == "comment_issue"
    assert replies[-1]["content"][0]["text"] == "Triaged: labels bug; one comment posted."


def test_summarizer_merges_shard_findings_without_duplicates(roles: dict[str, Role]) -> None:
    shards = "\n".join(
        [
            wrap_untrusted(
                "shard_review", "- src/a.py:3: Leftover debug print\n- src/b.py:9: TODO left"
            ),
            wrap_untrusted(
                "shard_review", "- src/a.py:3: leftover  debug print\n- src/c.py:1: Breakpoint"
            ),
        ]
    )
    repo = FakeRepo()
    task = f"Summarize the shard reviews of pull request acme/app#7:\n{shards}"
    replies = _drive(ScriptedModel(), roles["summarizer"], task, repo)
    assert _tool_names(replies) == ["submit_review"]
    comments = repo.writes[0][1]["comments"]
    assert [(c["path"], c["line"]) for c in comments] == [
        ("src/a.py", 3),
        ("src/b.py", 9),
        ("src/c.py", 1),
    ]


@pytest.mark.parametrize("reason", ["max_tokens", "pause_turn", "refusal"])
def test_forced_stop_reasons(roles: dict[str, Role], reason: str) -> None:
    model = ScriptedModel()
    model.force_stop(reason)
    replies = _drive(model, roles["reviewer"], "Review pull request acme/app#7", FakeRepo())
    assert replies[0]["stop_reason"] == reason
    assert all(b["type"] != "tool_use" for b in replies[0]["content"])


def test_unknown_stop_reason_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown stop reason 'done'"):
        ScriptedModel().force_stop("done")


def _body(text: str, *, marked: bool = True) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if marked:
        block["cache_control"] = {"type": "ephemeral"}
    return {
        "model": "scripted",
        "max_tokens": 100,
        "system": [block],
        "messages": [{"role": "user", "content": "hello"}],
    }


def test_usage_counts_about_four_characters_per_token() -> None:
    reply = _post(ScriptedModel(), _body("x" * 400, marked=False)).json()
    usage = reply["usage"]
    assert usage["cache_creation_input_tokens"] == 0 and usage["cache_read_input_tokens"] == 0
    # system block JSON ({"text":"x...","type":"text"}) + the user text block
    assert usage["input_tokens"] == 106 + 9


def test_prefix_below_the_minimum_is_not_cached() -> None:
    model = ScriptedModel()
    for _ in range(2):
        usage = _post(model, _body("short system prompt")).json()["usage"]
        assert usage["cache_creation_input_tokens"] == 0
        assert usage["cache_read_input_tokens"] == 0


def test_cache_entry_expires_after_its_ttl() -> None:
    clock = Clock()
    model = ScriptedModel(clock=clock)
    body = _body("y" * 8000)
    assert _post(model, body).json()["usage"]["cache_creation_input_tokens"] > 0
    clock.now += 299
    assert _post(model, body).json()["usage"]["cache_read_input_tokens"] > 0
    clock.now += 299  # the read refreshed the entry
    assert _post(model, body).json()["usage"]["cache_read_input_tokens"] > 0
    clock.now += 301
    usage = _post(model, body).json()["usage"]
    assert usage["cache_read_input_tokens"] == 0 and usage["cache_creation_input_tokens"] > 0


def test_a_changed_prefix_misses_the_cache() -> None:
    model = ScriptedModel()
    _post(model, _body("z" * 8000))
    usage = _post(model, _body("z" * 7999 + "!")).json()["usage"]
    assert usage["cache_read_input_tokens"] == 0


def test_tool_use_without_its_result_is_a_bad_request() -> None:
    body = _body("s", marked=False)
    body["messages"] = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}],
        },
        {"role": "user", "content": [{"type": "text", "text": "no result"}]},
    ]
    response = _post(ScriptedModel(), body)
    assert response.status_code == 400
    assert response.json()["error"] == {
        "type": "invalid_request_error",
        "message": "messages.2: tool_use ids were found without tool_result blocks "
        "immediately after: t1",
    }


def test_more_than_four_cache_breakpoints_is_a_bad_request() -> None:
    body = _body("s")
    body["system"] = [
        {"type": "text", "text": str(i), "cache_control": {"type": "ephemeral"}} for i in range(5)
    ]
    response = _post(ScriptedModel(), body)
    assert response.status_code == 400
    assert "A maximum of 4 blocks with cache_control may be provided. Found 5." in response.text


def test_missing_api_key_is_refused() -> None:
    response = _post(ScriptedModel(), _body("s"), key=None)
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "authentication_error"


def test_injected_errors_carry_retry_after() -> None:
    model = ScriptedModel()
    model.fail_next(times=1, status=429, retry_after_ms=250)
    first = _post(model, _body("s"))
    assert first.status_code == 429 and first.headers["retry-after-ms"] == "250"
    assert first.json()["error"]["type"] == "rate_limit_error"
    assert _post(model, _body("s")).status_code == 200


def test_the_scripted_model_shares_nothing_with_agents_but_the_wire_format() -> None:
    import ast
    from pathlib import Path

    import sandbox.model

    for path in Path(sandbox.model.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            assert not any(n == "agents" or n.startswith("agents.") for n in names), path


def test_a_refused_review_is_retried_once_without_inline_comments(roles: dict[str, Role]) -> None:
    class Strict(FakeRepo):
        def execute(self, name: str, args: dict[str, Any]) -> str:
            if name == "submit_review" and args["comments"]:
                raise ToolFailed("comments on files this PR does not change: src/app/service.py")
            return super().execute(name, args)

    repo = Strict()
    replies = _drive(ScriptedModel(), roles["reviewer"], "Review pull request acme/app#7", repo)
    assert _tool_names(replies)[-2:] == ["submit_review", "submit_review"]
    [(_, review)] = repo.writes
    assert review["comments"] == []
    assert "src/app/service.py:5: Leftover debug `print(`" in review["body"]
    assert replies[-1]["stop_reason"] == "end_turn"
