"""A repository's test command through the real runner and a real ``bwrap``: what an ordinary
run reports (exit codes, output captured, cut and redacted), and the refusal where no working
sandbox is."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from agents.confine import ConfineError, Limits, SandboxUnavailable, run_confined
from agents.redact import MARK_PREFIX
from tests.bwrap import require_bwrap
from tests.other_user import shared_folder

PASSING = """
import unittest

class Adds(unittest.TestCase):
    def test_adds(self):
        self.assertEqual(1 + 1, 2)
"""
FAILING = PASSING.replace("2)", "3)")
# Token-shaped, not a real one; built so no file of this repository holds it whole.
PRINTED_TOKEN = "ghs_" + "Pr1ntedByTheTests0123456789abcdefABCDEF"


def repo(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "working-copy"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


@pytest.fixture(autouse=True)
def _bwrap() -> None:
    require_bwrap()


def test_a_passing_unittest_run_reports_exit_zero_and_its_output(tmp_path: Path) -> None:
    run = run_confined(repo(tmp_path, {"test_adds.py": PASSING}), ["python3", "-m", "unittest"])
    assert (run.exit_code, run.passed, run.stopped, run.truncated) == (0, True, None, False)
    assert "Ran 1 test" in run.output and "OK" in run.output
    assert run.summary().startswith("passed in ")


def test_a_failing_unittest_run_reports_its_exit_code_and_the_failure(tmp_path: Path) -> None:
    run = run_confined(repo(tmp_path, {"test_adds.py": FAILING}), ["python3", "-m", "unittest"])
    assert (run.exit_code, run.passed, run.stopped) == (1, False, None)
    assert "FAILED (failures=1)" in run.output and "AssertionError: 2 != 3" in run.output
    assert run.summary().startswith("failed (exit 1) in ")


def test_an_exit_code_and_a_signal_come_back_as_the_command_ended(tmp_path: Path) -> None:
    work = repo(tmp_path, {"README": "x"})
    assert run_confined(work, ["sh", "-c", "exit 7"]).exit_code == 7
    killed = run_confined(work, ["sh", "-c", "kill -TERM $$"])
    assert (killed.exit_code, killed.signal) == (143, 15)
    assert killed.summary().startswith("failed (SIGTERM)")


def test_a_token_the_tests_print_comes_back_redacted(tmp_path: Path) -> None:
    script = f"print('leaked:', {PRINTED_TOKEN[:4]!r} + {PRINTED_TOKEN[4:]!r})\n"
    run = run_confined(repo(tmp_path, {"leak.py": script}), ["python3", "leak.py"])
    assert run.exit_code == 0
    assert PRINTED_TOKEN not in run.output
    assert f"leaked: {MARK_PREFIX}" in run.output


def test_output_past_its_cap_keeps_the_head_and_tail_and_says_what_was_cut(
    tmp_path: Path,
) -> None:
    script = "print('FIRST'); print('x' * 20000); print('LAST')\n"
    run = run_confined(
        repo(tmp_path, {"loud.py": script}), ["python3", "loud.py"], Limits(output_bytes=1000)
    )
    assert (run.exit_code, run.truncated, run.output_bytes) == (0, True, 6 + 20001 + 5)
    assert run.output.startswith("FIRST\n") and run.output.endswith("LAST\n")
    assert "bytes cut: the output passed its cap of 1000 bytes" in run.output
    assert len(run.output) < 1200


def test_the_run_writes_a_throwaway_copy_never_the_working_copy_and_gets_no_git(
    tmp_path: Path,
) -> None:
    work = repo(
        tmp_path,
        {
            "src.py": "VALUE = 1\n",
            ".git/config": '[http]\n\textraheader = "AUTHORIZATION: basic planted"\n',
        },
    )
    script = (
        "import os; print('git' if os.path.exists('.git') else 'no-git');"
        "open('src.py', 'w').write('VALUE = 2\\n'); open('made-by-tests', 'w').write('x')"
    )
    run = run_confined(work, ["python3", "-c", script])
    assert (run.exit_code, run.output) == (0, "no-git\n")
    assert (work / "src.py").read_text() == "VALUE = 1\n"
    assert not (work / "made-by-tests").exists()


def test_a_command_is_an_argv_of_plain_strings(tmp_path: Path) -> None:
    work = repo(tmp_path, {"README": "x"})
    for bad in ("python3 -m unittest", [], [""], ["python3", "a\0b"]):
        with pytest.raises(ConfineError):
            run_confined(work, bad)


def test_no_bwrap_is_a_one_line_refusal_and_nothing_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran-unsandboxed"
    with pytest.raises(SandboxUnavailable) as refused:
        run_confined(
            repo(tmp_path, {"README": "x"}),
            ["touch", str(marker)],
            bwrap=str(tmp_path / "no-such-bwrap"),
        )
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("no sandbox:") and "apt-get install bubblewrap" in message
    assert not marker.exists()


def test_a_bwrap_that_cannot_make_namespaces_is_refused_with_its_reason(tmp_path: Path) -> None:
    # A host where user namespaces are off: bwrap starts, then fails as Debian's does there.
    # (In a folder every user can reach: as root, bwrap runs as nobody.)
    marker = tmp_path / "ran-unsandboxed"
    with shared_folder() as folder:
        broken = folder / "bwrap"
        broken.write_text(
            "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
        )
        broken.chmod(0o755)
        with pytest.raises(SandboxUnavailable) as refused:
            run_confined(repo(tmp_path, {"README": "x"}), ["touch", str(marker)], bwrap=str(broken))
    message = str(refused.value)
    assert "\n" not in message
    assert "No permissions to create new namespace" in message
    assert "user namespaces may be disabled" in message
    assert not marker.exists()
