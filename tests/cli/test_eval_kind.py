"""``swarm eval --kind``: an ordinary mistake (a misspelt kind, a set folder that is not there,
an option of the other kind, no sandbox on this machine) is one line and a non-zero exit, before
any sandbox, server or model is started."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import EXIT_USAGE, assert_error, swarm


def test_a_misspelt_kind_names_the_known_kinds(clean_env: Path) -> None:
    seen = swarm("eval", "--kind", "implemnt")
    assert_error(seen, "error: --kind: 'implemnt' is not one of: review, implement", EXIT_USAGE)
    assert not (clean_env / "data").exists(), "a mistake started an evaluation"


def test_a_missing_set_folder_is_named(clean_env: Path) -> None:
    seen = swarm("eval", "--kind", "implement", "--set", "no-such-folder")
    assert_error(seen, "error: no-such-folder: no such set folder", EXIT_USAGE)


def test_the_judge_belongs_to_the_review_kind() -> None:
    seen = swarm("eval", "--kind", "implement", "--judge", "scripted")
    assert_error(
        seen, "error: --judge scores review findings; --kind implement has none", EXIT_USAGE
    )


def test_an_unreadable_baseline_is_refused_before_anything_runs(clean_env: Path) -> None:
    (clean_env / "b.json").write_text("[]")
    seen = swarm("eval", "--kind", "implement", "--baseline", "b.json")
    assert seen.first_line.startswith("error: --baseline b.json: no success rate to hold")
    assert seen.code == EXIT_USAGE and "Traceback" not in seen.output
    assert not (clean_env / "data").exists()


def test_no_bwrap_is_one_line_and_nothing_starts(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The probe looks bwrap up on PATH: a PATH without it is a machine without it.
    empty = clean_env / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    seen = swarm("eval", "--kind", "implement", "--data-dir", str(clean_env / "data"))
    assert_error(
        seen,
        "error: no sandbox: bwrap is not installed, so the repository's code is not run "
        "(install Debian's bubblewrap (apt-get install bubblewrap))",
        EXIT_USAGE,
    )
    assert not (clean_env / "data").exists(), "the evaluation started without a sandbox"
