"""Trust class 12, errors a person sees: one repository whose pull-request list fails must not
abort discovery for the others. It is reported as unreadable (and retried by the next run),
the others are reviewed, and the person sees one line naming it, no traceback, no token.
"""

from __future__ import annotations

import asyncio

import pytest

from agents.planning.discover import Discovery, DiscoveryAsk, discover_work
from agents.planning.sources import GatewayPullSource
from sandbox.server import SandboxServer
from tests.github.sandbox_helpers import reviewer_gateway
from tests.run.conftest import Swarm, run_swarm, swarm

__all__ = ["swarm"]  # the flow tests' sandbox fixture (the Prefect harness is a root plugin)

GADGETS, WIDGETS = "acme/gadgets", "acme/widgets"


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("NOT_FOUND", "Could not resolve to a Repository"),
        ("FORBIDDEN", "Resource not accessible"),
        ("INTERNAL", "Something went wrong"),
    ],
)
def test_discovery_reports_a_repository_it_cannot_list_and_reads_the_others(
    sandbox: SandboxServer, kind: str, words: str
) -> None:
    # GraphQL's answer for one repository of the run that cannot be read: HTTP 200, an error.
    sandbox.state.fail_graphql_repository(GADGETS, kind)

    async def go() -> Discovery:
        async with reviewer_gateway(sandbox) as gateway:
            return await discover_work(
                GatewayPullSource(gateway),
                [GADGETS, WIDGETS],
                DiscoveryAsk("reviewer", bot_login=gateway.identity),
            )

    found = asyncio.run(go())
    open_widgets = [
        n for n, i in sandbox.state.repo(WIDGETS).issues.items() if i.pull and not i.pull.draft
    ]
    assert sorted(t.number or 0 for t in found.items) == sorted(open_widgets)
    [skipped] = found.unreadable
    assert (skipped.repo, skipped.number) == (GADGETS, 0)
    assert skipped.detail is not None and skipped.detail.startswith("cannot list PRs: ")
    assert words in skipped.detail


@pytest.mark.prefect
def test_a_run_reviews_the_other_repositories_and_names_the_unreadable_one(
    swarm: Swarm,
) -> None:
    swarm.state.fail_graphql_repository(GADGETS, "INTERNAL")
    _state, report = run_swarm(repos=[GADGETS, WIDGETS])
    counts = swarm.review_counts()
    assert all(n == 0 for key, n in counts.items() if key.startswith(GADGETS))
    assert report.new_reviews == sum(n for key, n in counts.items() if key.startswith(WIDGETS))
    assert report.new_reviews >= 1
    assert not report.ok  # exit status 1: a repository could not be read
    [line] = report.unreadable
    assert line.startswith(f"{GADGETS}: cannot list PRs: ")
    assert "1 repository(ies) could not be read" in report.headline()

    from flows.cli.console import console, print_report

    with console.capture() as shown:
        print_report(report)
    text = shown.get()
    assert f"unreadable {GADGETS}: cannot list PRs: " in text
    assert "Traceback" not in text
    assert "ghs_" not in text and "ghp_" not in text
