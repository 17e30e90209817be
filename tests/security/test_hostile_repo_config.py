"""Trust class 4 of issue 24, one repository's configuration aborting the run.

The attack: a maintainer of one repository (or whoever can push to its default branch) commits a
``.github/swarm.yaml`` that PyYAML or Python cannot build: nesting thousands deep
(``RecursionError``), an integer of 5,000 digits (``ValueError``), a ``!!python/...`` tag
(``ConstructorError``). Before the fix these escaped the config error and discovery failed for
every repository of the run. Now each is that repository's configuration problem, one line with
its place, and the other repositories are reviewed; ``swarm config check`` says the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.planning.repo_config import MAX_CONFIG_BYTES
from flows.run.discovery import discover
from sandbox.github.seed import GADGETS, WIDGETS
from tests.cli.conftest import EXIT_USAGE, swarm
from tests.worker.conftest import Swarm

pytestmark = pytest.mark.anyio

HOSTILE = {
    "flow nesting 20,000 deep": "skip: " + "[" * 20_000 + "]" * 20_000 + "\n",
    "block nesting 300 deep": "".join("  " * i + "a:\n" for i in range(300)) + "  " * 300 + "b\n",
    "an integer of 5,000 digits": "max_files: " + "9" * 5_000 + "\n",
    "a float of 400 digits": "max_files: 1" + "0" * 400 + ".5\n",
    "a python object tag": "roles: !!python/object/apply:os.system ['touch /tmp/pwned']\n",
    "a python name tag": "language: !!python/name:os.system\n",
    "an unhashable key": "skip: {[a, b]: c}\n",
    "a timestamp": "language: 2026-04-01\n",
    "an unprintable character": "language: \x07\n",
    "a second document": "skip: {}\n---\nroles: []\n",
    "an alias bomb": "a: &a [x, x, x, x, x, x, x, x]\n"
    + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 8)}]\n"
        for p, n in zip("abcdefg", "bcdefgh", strict=True)
    ),
}


@pytest.mark.parametrize("shape", list(HOSTILE), ids=list(HOSTILE))
async def test_one_hostile_config_is_that_repositorys_error_and_the_others_are_reviewed(
    swarm: Swarm, shape: str
) -> None:
    swarm.sandbox.state.commit_to_branch(WIDGETS, {".github/swarm.yaml": HOSTILE[shape]})

    found = await discover(swarm.runtime, [WIDGETS, GADGETS], "reviewer", "summarizer", None, None)

    [problem] = found.config_errors[WIDGETS]
    assert problem.startswith(".github/swarm.yaml:"), problem
    assert "\n" not in problem and len(problem) < 300
    assert GADGETS not in found.config_errors
    assert {t.repo for t in found.items} == {GADGETS}
    # WIDGETS's pull requests are told, once, as for any invalid file.
    assert found.config_told and all(t.startswith(f"{WIDGETS}#") for t in found.config_told)


async def test_a_config_past_the_size_limit_is_refused_before_it_is_parsed(swarm: Swarm) -> None:
    # Valid YAML (a mapping and comments), only large: nothing but the size check refuses it.
    padded = "skip: {}\n" + "# padding\n" * (MAX_CONFIG_BYTES // 10 + 1)
    swarm.sandbox.state.commit_to_branch(WIDGETS, {".github/swarm.yaml": padded})

    found = await discover(swarm.runtime, [WIDGETS, GADGETS], "reviewer", "summarizer", None, None)

    assert found.config_errors[WIDGETS] == [
        f".github/swarm.yaml:1: larger than {MAX_CONFIG_BYTES} bytes"
    ]
    assert {t.repo for t in found.items} == {GADGETS}


@pytest.mark.parametrize("shape", ["flow nesting 20,000 deep", "a python object tag"])
def test_config_check_reports_a_hostile_file_in_one_line_and_exit_2(
    tmp_path: Path, shape: str
) -> None:
    path = tmp_path / "swarm.yaml"
    path.write_text(HOSTILE[shape])
    seen = swarm("config", "check", str(path))
    assert seen.code == EXIT_USAGE
    assert len(seen.lines) == 1 and seen.lines[0].startswith(f"error: {path}:1: ")
    assert "Traceback" not in seen.output
    assert not Path("/tmp/pwned").exists()
