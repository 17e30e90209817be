"""``swarm config check``: a maintainer validates .github/swarm.yaml before committing it."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import EXIT_USAGE, swarm


def test_a_valid_file_is_confirmed(tmp_path: Path) -> None:
    path = tmp_path / "swarm.yaml"
    path.write_text("roles: [reviewer]\nskip:\n  authors: ['dependabot[bot]']\n")
    seen = swarm("config", "check", str(path))
    assert seen.code == 0, seen.output
    assert seen.lines == [f"{path}: valid (reviewer; 0 instruction(s))"]


def test_each_problem_is_one_line_with_file_and_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "swarm.yaml"
    path.write_text("skip:\n  autors: [x]\nmax_files: 0\n")
    seen = swarm("config", "check", str(path))
    assert seen.code == EXIT_USAGE
    assert seen.lines == [
        f"error: {path}:2: skip.autors: unknown key",
        f"error: {path}:3: max_files: Input should be greater than or equal to 1",
    ]
    assert "Traceback" not in seen.output


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    seen = swarm("config", "check", str(tmp_path / "absent.yaml"))
    assert seen.code == EXIT_USAGE
    assert (
        seen.first_line == f"error: {tmp_path / 'absent.yaml'}: cannot be read: FileNotFoundError"
    )


def test_an_unknown_role_is_named_with_its_line_and_the_role_it_resembles(
    tmp_path: Path,
) -> None:
    # `roles: [reviewr]` switched every real role off, and passed the check.
    path = tmp_path / "swarm.yaml"
    path.write_text("skip:\n  drafts: true\nroles:\n  - reviewr\n  - triager\n")
    seen = swarm("config", "check", str(path))
    assert seen.code == EXIT_USAGE, seen.output
    [line] = seen.lines
    assert line.startswith(
        f"error: {path}:4: roles.0: unknown role 'reviewr' (did you mean 'reviewer'?) (known: "
    ), line
