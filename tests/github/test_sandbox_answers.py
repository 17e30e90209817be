"""The gateway's readings of answers whose shape GitHub varies: a file raw or as JSON, and a
collaborator's role, against the sandbox GitHub (which answers as github.com does)."""

from __future__ import annotations

import pytest

from agents.github import GitHubApiError
from sandbox.github.feedback import grant
from sandbox.github.seed import MAINTAINER, READER, WIDGETS, WIDGETS_PR_DEBUG_PRINT, WRITER
from sandbox.server import SandboxServer
from tests.github.sandbox_helpers import reviewer_gateway

pytestmark = pytest.mark.anyio

JSON_LOOKING = '{"not": "parsed"}\n'


@pytest.mark.parametrize("raw", [True, False], ids=["raw-answer", "json-answer"])
async def test_a_file_reads_as_its_text_whether_github_answers_raw_or_json(
    sandbox: SandboxServer, raw: bool
) -> None:
    state = sandbox.state
    state.knobs.raw_contents = raw
    head = state.pull(WIDGETS, WIDGETS_PR_DEBUG_PRINT).pull
    assert head is not None
    expected = state.repo(WIDGETS).commits[head.head_sha].tree["src/widgets/core.py"]
    state.commit_to_branch(WIDGETS, {"config.json": JSON_LOOKING}, message="config")
    async with reviewer_gateway(sandbox) as gateway:
        assert await gateway.get_file(WIDGETS, "src/widgets/core.py", head.head_sha) == expected
        # A file whose text is JSON is still the file's text, not its parsed value.
        assert await gateway.get_file(WIDGETS, "config.json") == JSON_LOOKING
        with pytest.raises(GitHubApiError, match="is not a file"):
            await gateway.get_file(WIDGETS, "src/widgets")
    answered = {r.status for r in state.requests if r.route.endswith("/contents/{path}")}
    assert answered == {200}


async def test_a_collaborators_role_is_read_beyond_the_legacy_permission(
    sandbox: SandboxServer,
) -> None:
    # GitHub's "permission" folds maintain into write and triage into read; "role_name" keeps
    # the role, which is what decides who may teach and command.
    state = sandbox.state
    for login, role in (
        (MAINTAINER, "admin"),
        ("maya-dev", "maintain"),
        (WRITER, "write"),
        ("tia-dev", "triage"),
        (READER, "read"),
    ):
        if login not in state.users:
            state.add_user(login)
        grant(state, WIDGETS, login, role)
    async with reviewer_gateway(sandbox) as gateway:
        roles = {
            login: await gateway.collaborator_permission(WIDGETS, login)
            for login in (MAINTAINER, "maya-dev", WRITER, "tia-dev", READER, "carol-dev", "nobody")
        }
    assert roles == {
        MAINTAINER: "admin",
        "maya-dev": "maintain",
        WRITER: "write",
        "tia-dev": "triage",
        READER: "read",
        "carol-dev": "none",
        "nobody": "none",
    }
