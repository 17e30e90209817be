"""The GraphQL the product sends, and the sandbox's answers to it, held to GitHub's published
schema (``tests.github_schema``: Octokit's npm package, fetched into a cache), not only to our
sandbox's reading of it.

The documents are every operation written in ``agents/`` and ``flows/`` (module constants and
inline literals alike) and every document the sandbox received during real ``swarm-run`` flow
runs: a review with findings, a maintainer resolving one thread, a push that fixes another (the
bot reads the threads and resolves it) and the learning polls that read them back. A document a
new feature sends is picked up by either road without touching this test.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from graphql import GraphQLError, GraphQLSyntaxError, OperationDefinitionNode, parse, validate

from agents.store import Store
from sandbox.github.feedback import grant, resolve
from sandbox.github.seed import (
    MAINTAINER,
    REVIEWER_APP_ID,
    REVIEWER_BOT,
    REVIEWER_INSTALLATION_ID,
    WIDGETS,
    WIDGETS_PR_DEBUG_PRINT,
)
from sandbox.server import SandboxServer
from tests.github_schema import answer_problems, github_schema, page_problems
from tests.paths import ROOT
from tests.run.conftest import Swarm, run_swarm, use_sandbox_settings

pytestmark = [pytest.mark.prefect, pytest.mark.timeout(600)]

PR = WIDGETS_PR_DEBUG_PRINT
TARGET = f"{WIDGETS}#{PR}"
CORE = "src/widgets/core.py"
SOURCES = ("agents", "flows")
# What a string must look like to be taken for a GraphQL document: a keyword then a selection,
# or a bare selection that nests (``{label}`` is a format string, not a query).
_KEYWORD = re.compile(r"(query|mutation|subscription)\b[^{]*\{", re.S)
_NESTED = re.compile(r"\{[^{}]*\{", re.S)


@dataclass(frozen=True)
class Sent:
    """One GraphQL request the sandbox received, and its answer."""

    document: str
    variables: dict[str, Any]
    answer: Any


def written_documents() -> dict[str, str]:
    """Every GraphQL operation in the product's source, by ``file:line``; a string that starts
    like one but does not parse is kept too, so validation names it."""
    found: dict[str, str] = {}
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                    continue
                text = node.value.strip()
                keyword = _KEYWORD.match(text) is not None
                if not keyword and not (text.startswith("{") and _NESTED.match(text)):
                    continue
                try:
                    parsed = parse(text)
                except GraphQLSyntaxError:
                    if not keyword:
                        continue
                else:
                    if not all(isinstance(d, OperationDefinitionNode) for d in parsed.definitions):
                        continue
                found[f"{path.relative_to(ROOT)}:{node.lineno}"] = text
    return found


def _resolve_one_thread_as_maintainer(swarm: Swarm, word: str) -> None:
    pull = swarm.state.pull(WIDGETS, PR).pull
    assert pull is not None
    [root] = [
        c
        for c in pull.review_comments
        if c.user_login == REVIEWER_BOT and not c.in_reply_to_id and word in c.body
    ]
    grant(swarm.state, WIDGETS, MAINTAINER, "admin")
    resolve(swarm.state, WIDGETS, root.id, MAINTAINER)


def _run_ok(**parameters: Any) -> Any:
    state, report = run_swarm(targets=[TARGET], **parameters)
    assert state.is_completed(), state.message
    return report


@pytest.fixture(scope="module")
def sent(prefect_harness: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Sent]]:
    """The GraphQL requests of three flow runs over one PR, as the sandbox received them."""
    github_schema()  # no flow runs when the schema cannot be had (a skip, or CI's failure)
    with SandboxServer() as server, pytest.MonkeyPatch.context() as monkeypatch:
        swarm = use_sandbox_settings(monkeypatch, server, tmp_path_factory.mktemp("graphql"))
        monkeypatch.setenv("SWARM_LEARNING_POLL_INTERVAL_S", "0")  # every run reads feedback
        # The bot resolves a fixed finding's thread: opted in, and the App holds Contents: write
        # (GitHub refuses the mutation without it; so does the sandbox).
        monkeypatch.setenv("SWARM_RESOLVE_THREADS", "true")
        swarm.state.apps[REVIEWER_APP_ID].permissions["contents"] = "write"
        swarm.state.installations[REVIEWER_INSTALLATION_ID].permissions["contents"] = "write"
        swarm.state.knobs.keep_bodies = True
        assert _run_ok().new_reviews == 1
        _resolve_one_thread_as_maintainer(swarm, "TODO")
        head = swarm.state.pull(WIDGETS, PR).pull
        assert head is not None
        text = swarm.state.repo(WIDGETS).commits[head.head_sha].tree[CORE]
        assert isinstance(text, str)
        fixed = "\n".join(line for line in text.splitlines() if "print(" not in line) + "\n"
        swarm.state.push_commit(WIDGETS, PR, {CORE: fixed}, "Drop the debug print")
        assert _run_ok().new_reviews == 1
        _run_ok()  # its learning poll reads the thread the bot resolved

        pull = swarm.state.pull(WIDGETS, PR).pull
        assert pull is not None
        resolvers = {c.resolved_by for c in pull.review_comments if c.resolved_by}
        assert resolvers == {MAINTAINER, REVIEWER_BOT}, "the scenario resolves both ways"
        with Store.open(None, swarm.data_dir) as store:
            [learned] = store.list_memories(repo=WIDGETS, states=("proposed",))
        # The bot's own resolution, read back by its slug, teaches nothing; the maintainer's does.
        assert learned.author == MAINTAINER

        requests = [r for r in swarm.state.requests if r.route == "/graphql"]
        yield [
            Sent(
                str(r.sent["query"]),
                dict(r.sent.get("variables") or {}),
                json.loads(json.dumps(r.body)),  # as it went over the wire
            )
            for r in requests
            if isinstance(r.sent, dict)
        ]


def _errors(errors: list[GraphQLError]) -> list[str]:
    return [e.message for e in errors]


def test_every_graphql_document_the_product_sends_is_valid_against_githubs_schema(
    sent: list[Sent],
) -> None:
    schema = github_schema()
    written = written_documents()
    received = {s.document for s in sent}
    assert any("reviewThreads" in d for d in received), "the flow read no review threads"
    assert any("resolveReviewThread" in d for d in received), "the flow resolved no thread"
    documents = {**written, **{f"sent #{i}": d for i, d in enumerate(sorted(received))}}

    invalid: dict[str, list[str]] = {}
    for where, document in documents.items():
        try:
            errors = _errors(validate(schema, parse(document)))
        except GraphQLSyntaxError as exc:
            errors = [exc.message]
        if errors:
            invalid[where] = errors
    assert invalid == {}
    assert len(written) >= 3  # the thread query, the resolution, the viewer query


def test_the_sandboxs_answers_to_the_products_graphql_have_githubs_types(
    sent: list[Sent],
) -> None:
    schema = github_schema()
    answered = [s for s in sent if isinstance(s.answer, dict) and "data" in s.answer]
    assert answered
    problems = {
        f"{s.document.split('{', 1)[0].strip() or 'query'} {sorted(s.variables)}": p
        for s in answered
        if (p := answer_problems(schema, s.document, s.variables, s.answer["data"]))
    }
    assert problems == {}
    assert all("errors" not in s.answer for s in answered), [s.answer for s in answered]


def test_the_sandbox_answers_no_more_of_a_connection_than_first_or_last_asks(
    sent: list[Sent],
) -> None:
    problems = [
        p
        for s in sent
        if isinstance(s.answer, dict)
        for p in page_problems(s.document, s.variables, s.answer.get("data"))
    ]
    assert problems == []


def test_an_answer_that_departs_from_githubs_types_is_named_where_it_departs() -> None:
    """The walker itself, on a thread answer wrong in each way it checks."""
    schema = github_schema()
    document = (
        'query($n: Int!) { repository(owner: "a", name: "b") { pullRequest(number: $n) {'
        " reviewThreads(first: 1) { nodes { isResolved resolvedBy { __typename login }"
        " comments(first: 1) { nodes { author { __typename login } } } } } } } }"
    )
    thread = {
        "isResolved": "true",
        "resolvedBy": {"__typename": "Bot", "login": "swarm-reviewer"},
        "comments": {"nodes": [{"author": {"__typename": "Repository", "login": "x"}}]},
        "path": "src/a.py",
    }
    data = {"repository": {"pullRequest": {"reviewThreads": {"nodes": [thread]}}}}
    at = "query.repository.pullRequest.reviewThreads.nodes[0]"
    assert sorted(answer_problems(schema, document, {"n": 1}, data)) == sorted(
        [
            f"{at}.isResolved: Boolean should be a bool, got 'true'",
            f"{at}.resolvedBy.__typename: 'Bot' where User is",
            f"{at}.comments.nodes[0].author.__typename: 'Repository' is not a Actor",
            f"{at}.path: not selected",
        ]
    )
    assert answer_problems(schema, document, {"n": 1}, {"repository": None}) == []
    assert answer_problems(schema, "{ viewer { login } }", None, {"viewer": {}}) == [
        "query.viewer.login: selected, missing from the answer"
    ]
