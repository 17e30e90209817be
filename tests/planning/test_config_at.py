"""The one reader of a repository's ``.github/swarm.yaml`` at a ref (:func:`config_at`), against
the sandbox GitHub: what its callers (the writer's bench, the fix rounds' discovery, the plan
approval's rule) get for a file that is there, absent, invalid, or unreadable."""

from __future__ import annotations

import pytest

from agents.github import GitHubApiError
from agents.planning.repo_config import CONFIG_PATH, RepoConfig, RepoConfigError, config_at
from agents.writer.approval import approval_rules
from sandbox.github.seed import WIDGETS
from sandbox.server import SandboxServer
from tests.github.sandbox_helpers import reviewer_gateway

pytestmark = pytest.mark.anyio

ASKS_APPROVAL = "writer:\n  approval: true\n  approval_timeout_seconds: 600\n"


async def test_the_file_is_read_at_the_ref_asked_and_its_absence_is_the_defaults(
    sandbox: SandboxServer,
) -> None:
    state = sandbox.state
    absent = state.commit_to_branch(WIDGETS, {CONFIG_PATH: None}, message="no config")
    there = state.commit_to_branch(WIDGETS, {CONFIG_PATH: ASKS_APPROVAL}, message="config")
    async with reviewer_gateway(sandbox) as gateway:
        assert await config_at(gateway, WIDGETS, absent) == RepoConfig()
        at_commit = await config_at(gateway, WIDGETS, there)
        assert at_commit.writer.approval and at_commit.writer.approval_timeout_seconds == 600
        assert await config_at(gateway, WIDGETS) == at_commit  # the default branch
        # The approval rule the implement discovery carries in each task.
        assert (await approval_rules(gateway, WIDGETS)).approval_timeout_s == 600
        state.commit_to_branch(WIDGETS, {CONFIG_PATH: None}, message="gone again")
        assert (await approval_rules(gateway, WIDGETS)).approval_timeout_s is None


async def test_an_invalid_file_is_the_callers_error_and_an_unreadable_one_is_not_absent(
    sandbox: SandboxServer,
) -> None:
    state = sandbox.state
    state.commit_to_branch(WIDGETS, {CONFIG_PATH: "writer:\n  approval: maybe\n"})
    async with reviewer_gateway(sandbox) as gateway:
        with pytest.raises(RepoConfigError, match=r"swarm.yaml:2: writer.approval"):
            await config_at(gateway, WIDGETS)
        # Plan approval reads an invalid file as asking for nothing: the bench refuses it.
        assert (await approval_rules(gateway, WIDGETS)).approval_timeout_s is None
        state.inject_failure(
            "/repos/{owner}/{repo}/contents/{path}", method="GET", status=502, count=20
        )
        with pytest.raises(GitHubApiError):
            await config_at(gateway, WIDGETS)
