"""The judge through the real anthropic SDK against the scripted model, ``swarm eval compare``
over two evaluations, and ``swarm eval import`` against a GitHub-shaped API (the sandbox)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from agents.eval.imports import imported, read_golden
from agents.eval.judge import judge
from agents.eval.labels import EvalPull, Label, load_pull
from agents.eval.results import compare, comparison_table, results
from agents.eval.scoring import PullScore, match
from agents.posting.findings import Finding
from flows.run.models import scripted_model
from sandbox.github.seed import WIDGETS, WIDGETS_PR_DEBUG_PRINT
from sandbox.server import SandboxServer

RETRY = Label(severity="major", comment="The retry loop swallows every failure and never raises.")


def pull_with(*labels: Label) -> EvalPull:
    return EvalPull(
        id="p",
        title="Retry",
        language="python",
        files={"a.py": {"head": "x\n"}},
        findings=list(labels),
    )


def test_the_scripted_judge_matches_a_reworded_finding_and_not_an_unrelated_one() -> None:
    choice = scripted_model()
    pull = pull_with(RETRY)
    findings = [
        Finding(
            path="a.py",
            line=9,
            severity="major",
            category="bug",
            message="Every failure of the retry is swallowed: log it and raise after the loop.",
        ),
        Finding(
            path="a.py",
            line=2,
            severity="nit",
            category="style",
            message="Rename the module to match the package layout.",
        ),
    ]

    async def verdicts() -> list[bool | None]:
        try:
            got = await judge(choice.client, choice.model_id, pull, findings, [(0, 0), (1, 0)])
        finally:
            await choice.client.aclose()
        return [v.same_issue for v in got]

    assert asyncio.run(verdicts()) == [True, False]


def _scores(found_first: bool) -> list[PullScore]:
    labels = (
        Label(path="a.py", lines=(3, 3), category="bug", severity="major", comment="first"),
        Label(path="a.py", lines=(9, 9), category="bug", severity="minor", comment="second"),
    )
    pull = pull_with(*labels)
    line = 3 if found_first else 9
    findings = [Finding(path="a.py", line=line, severity="major", category="bug", message="m")]
    return [PullScore(pull, findings, matches=match(pull, findings))]


def test_compare_names_what_the_second_evaluation_gained_and_lost() -> None:
    a = results(_scores(True), set_name="s", model="m1", verdicts=[])
    b = results(_scores(False), set_name="s", model="m2", verdicts=[])
    change = compare(a, b)
    assert change["pulls"] == [
        {"id": "p", "gained": ["second"], "lost": ["first"], "false_findings": 0}
    ]
    text = comparison_table(change)
    assert "- p: +1 found, -1 lost" in text and "lost: first" in text


def test_import_reads_a_pull_request_and_its_golden_comments_into_a_set_file(
    tmp_path: Path,
) -> None:
    golden = tmp_path / "golden.yaml"
    golden.write_text(
        yaml.safe_dump(
            [
                {
                    "url": f"https://github.com/{WIDGETS}/pull/{WIDGETS_PR_DEBUG_PRINT}",
                    "comments": [{"body": "A debug print is left in.", "severity": "minor"}],
                }
            ]
        )
    )
    import httpx

    with SandboxServer() as sandbox:
        token = sandbox.state.maintainer_pat
        with httpx.Client(base_url=sandbox.url, headers={"Authorization": f"token {token}"}) as c:

            def fetch(path: str, raw: bool) -> object:
                accept = "application/vnd.github.raw+json" if raw else "application/vnd.github+json"
                answer = c.get(path, headers={"Accept": accept})
                answer.raise_for_status()
                return answer.text if raw else answer.json()

            (entry,) = read_golden(golden)
            pull = imported(entry, fetch)
    assert pull.source and pull.findings[0].comment == "A debug print is left in."
    assert pull.findings[0].path is None  # matched by the judge only
    changed = [name for name, f in pull.files.items() if f.head != f.base]
    assert changed
    from agents.eval.imports import write_pull

    assert load_pull(write_pull(pull, tmp_path / "set")) == pull


def test_a_golden_file_with_a_mistake_is_one_clear_error(tmp_path: Path) -> None:
    from agents.eval.labels import EvalSetError

    golden = tmp_path / "golden.yaml"
    golden.write_text("- url: not-a-pull-request\n")
    with pytest.raises(
        EvalSetError,
        match=r"golden.yaml: entry 0: url 'not-a-pull-request' is not a pull request URL",
    ):
        read_golden(golden)
