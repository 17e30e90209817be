"""Class 8, paths escape the repository: the model (steered by a PR) asks ``read_file`` for a path
that climbs out of the task's repository. HTTP clients remove dot segments, so
``../../gadgets/contents/README.md`` once reached another repository's route. Every form is
refused before anything is sent, the model reads why, and the review still goes out."""

from __future__ import annotations

import pytest

from agents.github.errors import UnsafePath
from agents.github.paths import repo_path
from sandbox.github.seed import GADGETS, REVIEWER_BOT, WIDGETS, WIDGETS_PR_DEBUG_PRINT
from tests.security.conftest import bot_reviews
from tests.worker.conftest import REVIEW_WRITE_ROUTES, Swarm
from tests.worker.fake_models import ReplayModel, message, tool_use

pytestmark = pytest.mark.anyio

PR = WIDGETS_PR_DEBUG_PRINT
HOSTILE_PATHS = [
    "../../gadgets/contents/README.md",
    "src/../../../gadgets/contents/README.md",
    "/repos/acme/gadgets/contents/README.md",
    "%2e%2e/%2e%2e/gadgets/contents/README.md",
    "..%2f..%2fgadgets%2fcontents%2fREADME.md",
    "%252e%252e/%252e%252e/gadgets/contents/README.md",
    "..\\..\\gadgets\\contents\\README.md",
    "README.md\x00.png",
    "src/widgets/\n../../../gadgets",
    "./README.md",
    "src//widgets",
]


def _reviewer(path: str) -> ReplayModel:
    return ReplayModel(
        [
            message([tool_use("read_file", {"path": path}, 1)]),
            message([tool_use("submit_review", {"body": "Read what I could."}, 2)]),
        ]
    )


def _tool_result(model: ReplayModel, turn: int) -> dict[str, object]:
    [block] = [
        b for b in model.requests[turn]["messages"][-1]["content"] if b.get("type") == "tool_result"
    ]
    return dict(block)


@pytest.mark.parametrize("path", HOSTILE_PATHS)
async def test_a_path_out_of_the_repository_is_refused_and_the_review_goes_on(
    swarm: Swarm, path: str
) -> None:
    model = _reviewer(path)
    swarm.use_model(model.client())

    outcome = await swarm.review(WIDGETS, PR)

    result = _tool_result(model, 1)
    assert result.get("is_error") is True
    assert "refused" in str(result["content"])
    assert outcome.status == "succeeded", outcome.reason
    assert [r.user_login for r in bot_reviews(swarm, WIDGETS, PR)] == [REVIEWER_BOT]
    reads = [r for r in swarm.sandbox.state.requests if r.login == REVIEWER_BOT]
    guidance = ("/contents/AGENTS.md", "/contents/CONTRIBUTING.md")
    assert not [r for r in reads if "/contents" in r.path and not r.path.endswith(guidance)]
    assert not [r for r in reads if GADGETS in r.path]
    assert {r.route for r in swarm.writes()} == REVIEW_WRITE_ROUTES


async def test_a_file_name_with_url_characters_reads_that_very_file(swarm: Swarm) -> None:
    odd = "docs/100% done?#draft.md"
    number = swarm.sandbox.state.add_pull(
        WIDGETS, "Odd names", {odd: "right file\n", "docs/100% done": "wrong file\n"}
    ).number
    model = _reviewer(odd)
    swarm.use_model(model.client())

    outcome = await swarm.review(WIDGETS, number)

    result = _tool_result(model, 1)
    assert result.get("is_error") is not True, result
    assert "right file" in str(result["content"])
    assert outcome.status == "succeeded", outcome.reason


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_the_gateway_refuses_the_path_itself(path: str) -> None:
    # The tool is one caller; the gateway's own rule covers every other.
    with pytest.raises(UnsafePath):
        repo_path(path)


def test_each_segment_is_quoted_whole() -> None:
    assert repo_path("docs/a b/c?#%.md") == "docs/a%20b/c%3F%23%25.md"
