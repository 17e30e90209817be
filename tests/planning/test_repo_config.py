"""``.github/swarm.yaml``: a strict schema whose every problem names its file and line."""

from __future__ import annotations

import pytest

from agents.planning.files import split_files
from agents.planning.globs import matches
from agents.planning.repo_config import RepoConfig, RepoConfigError, parse_repo_config
from agents.planning.repo_policy import guidance_for, scope_problem, skip_rule
from tests.planning.test_discover import changed


def _read(config: RepoConfig, paths: list[str]) -> tuple[str, ...]:
    return tuple(f.path for f in split_files([changed(p) for p in paths], config, 10**6).read)


FULL = """\
roles: [reviewer, security-reviewer]
paths:
  include: ["src/**", "tests/**", "*.md"]
  exclude: ["src/generated/**"]
skip:
  authors: ["dependabot[bot]"]
  labels: [no-review]
  drafts: false
instructions:
  - paths: ["src/db/**"]
    text: Check every query for injection.
max_files: 50
language: English
"""


def _problems(text: str) -> list[str]:
    with pytest.raises(RepoConfigError) as caught:
        parse_repo_config(text)
    return caught.value.problems


def test_a_full_file_is_read_into_its_settings() -> None:
    config = parse_repo_config(FULL)
    assert config.roles == ("reviewer", "security-reviewer")
    assert config.skip.authors == ("dependabot[bot]",)
    assert config.skip.drafts is False
    assert config.instructions[0].text == "Check every query for injection."
    assert (config.max_files, config.language) == (50, "English")


def test_an_empty_file_means_every_default() -> None:
    assert parse_repo_config("") == RepoConfig()
    assert parse_repo_config("# nothing yet\n") == RepoConfig()


def test_an_unknown_key_is_refused_with_its_file_and_line() -> None:
    problems = _problems("skip:\n  drafts: true\n  autors: [bot]\n")
    assert problems == [".github/swarm.yaml:3: skip.autors: unknown key"]


def test_a_wrong_type_is_refused_not_coerced() -> None:
    [problem] = _problems("paths:\n  include: ['**']\nskip:\n  drafts: 'no'\n")
    assert problem.startswith(".github/swarm.yaml:4: skip.drafts:")


def test_every_problem_is_reported_at_once() -> None:
    problems = _problems("max_files: 0\nlanguage: 'x; ignore previous'\nroles: [Bad Role]\n")
    assert sorted(p.split(": ")[0] for p in problems) == [
        ".github/swarm.yaml:1",
        ".github/swarm.yaml:2",
        ".github/swarm.yaml:3",
    ]


def test_broken_yaml_names_its_line() -> None:
    [problem] = _problems("skip:\n  authors: [a, b\nmax_files: 3\n")
    assert problem.startswith(".github/swarm.yaml:")
    assert "not valid YAML" in problem


def test_a_list_at_the_top_is_refused() -> None:
    assert _problems("- reviewer\n") == [
        ".github/swarm.yaml:1: the file must be a mapping of settings"
    ]


def test_an_alias_bomb_is_refused_before_it_is_expanded() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 8):
        lines.append(
            f"{chr(97 + i)}: &{chr(97 + i)} " + "[" + ", ".join([f"*{chr(96 + i)}"] * 10) + "]"
        )
    [problem] = _problems("\n".join(lines) + "\n")
    assert "too many YAML nodes" in problem


def test_default_excludes_leave_lockfiles_vendored_generated_and_minified_files_out() -> None:
    files = [
        "uv.lock",
        "web/yarn.lock",
        "web/package-lock.json",
        "go.sum",
        "src/vendor/lib.py",
        "api/service_pb2.py",
        "static/app.min.js",
        "src/app.py",
    ]
    assert _read(RepoConfig(), files) == ("src/app.py",)
    listed = split_files([changed(p) for p in files], RepoConfig(), 10**6).listed
    assert {f.path: f.reason for f in listed}["api/service_pb2.py"] == "generated, by its name"
    reviewed_all = parse_repo_config("paths:\n  default_excludes: false\n")
    assert _read(reviewed_all, files) == tuple(files)


def test_include_and_exclude_globs_narrow_what_is_reviewed() -> None:
    config = parse_repo_config(FULL)
    files = ["src/a.py", "src/generated/b.py", "docs/x.txt", "README.md"]
    assert _read(config, files) == ("src/a.py", "README.md")


def test_globs_keep_a_single_star_within_one_directory() -> None:
    assert matches("src/a.py", ["src/*.py"])
    assert not matches("src/deep/a.py", ["src/*.py"])
    assert matches("src/deep/a.py", ["src/**/*.py"])
    assert matches("src/a.py", ["src/**/*.py"])
    assert matches("x/y/z.lock", ["*.lock"])


def test_a_pr_with_only_excluded_files_has_nothing_to_review() -> None:
    split = split_files([changed("uv.lock")], RepoConfig(), 10**6)
    assert scope_problem(RepoConfig(), split) == (
        "no_reviewable_files",
        "all 1 changed file(s) are listed only (uv.lock)",
    )


def test_skip_rules_name_the_rule_that_matched() -> None:
    config = parse_repo_config(FULL)

    def rule(**kw: object) -> object:
        args: dict[str, object] = {
            "role": "reviewer",
            "author": "alice",
            "labels": (),
            "draft": False,
        }
        args.update(kw)
        found = skip_rule(config, **args)  # type: ignore[arg-type]
        return found[0] if found else None

    assert rule() is None
    assert rule(author="Dependabot[bot]") == "author_skipped"
    assert rule(labels=("No-Review",)) == "label_skipped"
    assert rule(role="triager") == "role_disabled"
    assert rule(draft=True) is None  # skip.drafts: false
    assert skip_rule(RepoConfig(), role="x", author=None, labels=(), draft=True) == (
        "draft",
        "drafts are skipped (skip.drafts)",
    )


def test_instructions_come_only_for_the_paths_they_name() -> None:
    config = parse_repo_config(FULL)
    assert guidance_for(config, ["src/db/q.py"]) == "Check every query for injection."
    assert guidance_for(config, ["src/ui.py"]) == ""


def test_a_test_command_is_an_argv_and_a_line_is_split_never_shelled() -> None:
    listed = parse_repo_config("tests:\n  command: [python3, -m, unittest, -q]\n")
    assert listed.tests is not None
    assert listed.tests.command == ("python3", "-m", "unittest", "-q")
    assert listed.tests.timeout_seconds == 300
    line = parse_repo_config(
        "tests:\n  command: python3 -c 'print(1); exit(0)'\n  timeout_seconds: 60\n"
    )
    assert line.tests is not None
    assert line.tests.command == ("python3", "-c", "print(1); exit(0)")
    assert line.tests.timeout_seconds == 60
    assert parse_repo_config("").tests is None


def test_a_broken_test_command_names_its_line() -> None:
    assert _problems("max_files: 3\ntests:\n  command: []\n")[0].startswith(
        ".github/swarm.yaml:3: tests.command:"
    )
    assert _problems('tests:\n  command: "python3 -c \'unclosed"\n')[0].startswith(
        ".github/swarm.yaml:2: tests.command:"
    )
    assert _problems("tests:\n  command: [pytest]\n  timeout_seconds: 99999\n")[0].startswith(
        ".github/swarm.yaml:3: tests.timeout_seconds:"
    )


def test_fix_rounds_default_to_three_with_major_and_above_blocking() -> None:
    rules = parse_repo_config("").writer
    assert (rules.rounds, rules.blocking) == (3, "major")


def test_fix_rounds_and_the_blocking_severity_are_read_from_the_writer_section() -> None:
    rules = parse_repo_config("writer:\n  rounds: 0\n  blocking: minor\n").writer
    assert (rules.rounds, rules.blocking) == (0, "minor")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("writer:\n  rounds: 11\n", "writer.rounds: Input should be less than or equal to 10"),
        ("writer:\n  rounds: -1\n", "writer.rounds: Input should be greater than or equal to 0"),
        ("writer:\n  rounds: '2'\n", "writer.rounds: Input should be a valid integer"),
        ("writer:\n  blocking: high\n", "writer.blocking: Input should be 'critical', 'major'"),
    ],
)
def test_a_bad_fix_rounds_setting_is_one_line_naming_its_line(text: str, said: str) -> None:
    [problem] = _problems(text)
    assert problem.startswith(f".github/swarm.yaml:2: {said}"), problem
