"""Every mistake a person can make at the command line: one or two lines naming what to change,
exit status 2 (1 only for a failed run or a bug), no traceback, no secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.cli.errors import describe
from sandbox.github.seed import credentials_env
from sandbox.server import SandboxServer
from tests.cli.conftest import EXIT_FAILED, EXIT_USAGE, assert_error, swarm
from tests.paths import ROOT
from tests.python_process import run_python

NOT_CONFIGURED = (
    "error: swarm is not configured: set SWARM_APP_ID, SWARM_APP_PRIVATE_KEY_FILE, "
    "SWARM_APP_INSTALLATION_ID, SWARM_MAINTAINER_LOGIN, SWARM_REPOS (or --repo OWNER/NAME)"
)


def test_a_first_run_names_every_missing_setting_and_where_to_start() -> None:
    seen = swarm("run")
    assert_error(seen, NOT_CONFIGURED, EXIT_USAGE)
    assert "`swarm demo`" in seen.lines[1]
    assert "`swarm sandbox serve`" in seen.lines[1]


def test_a_partial_configuration_names_all_that_is_missing_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SWARM_APP_PRIVATE_KEY", "-----BEGIN PRIVATE KEY-----\nsecret\n")
    monkeypatch.setenv("SWARM_REPOS", "acme/widgets")
    assert_error(
        swarm("run"),
        "error: missing settings: SWARM_APP_ID, SWARM_APP_INSTALLATION_ID, "
        "SWARM_MAINTAINER_LOGIN (docs/configuration.md explains each)",
        EXIT_USAGE,
        secrets=["secret"],
    )


def test_a_role_acting_as_an_unconfigured_identity_names_that_identitys_settings(
    app_settings: None,
) -> None:
    assert_error(
        swarm("exec", "--role", "triager", "--repo", "acme/widgets", "--", "true"),
        "error: missing settings: SWARM_IDENTITIES__TRIAGE__APP_ID, "
        "SWARM_IDENTITIES__TRIAGE__PRIVATE_KEY_FILE, SWARM_IDENTITIES__TRIAGE__INSTALLATION_ID "
        "(docs/configuration.md explains each)",
        EXIT_USAGE,
    )


def test_a_bad_setting_value_is_named(app_settings: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_GITHUB_API_URL", "ftp://example.com")
    assert_error(
        swarm("run", "--repo", "acme/widgets"),
        "error: SWARM_GITHUB_API_URL: must start with http:// or https://",
        EXIT_USAGE,
    )


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--repo", "widgets"],
        ["serve", "--repo", "widgets"],
        ["memory", "add", "Prefer small PRs", "--repo", "widgets"],
        ["memory", "list", "--repo", "widgets"],
        ["exec", "--role", "reviewer", "--repo", "widgets", "--", "true"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_a_repository_that_is_not_owner_slash_name_names_the_flag(args: list[str]) -> None:
    assert_error(
        swarm(*args), "error: --repo: 'widgets' is not OWNER/NAME (e.g. acme/widgets)", EXIT_USAGE
    )


def test_the_repos_setting_is_named_as_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_REPOS", "acme/widgets,widgets")
    assert_error(
        swarm("run"),
        "error: SWARM_REPOS: 'widgets' is not OWNER/NAME (e.g. acme/widgets)",
        EXIT_USAGE,
    )


def test_an_unknown_role_lists_the_known_ones(app_settings: None) -> None:
    seen = swarm("run", "--repo", "acme/widgets", "--role", "reviewr")
    assert seen.first_line.startswith("error: --role: no role 'reviewr' in ")
    assert_error(seen, seen.first_line, EXIT_USAGE)
    assert (
        "(known: fixer, implementer, responder, reviewer, security-reviewer, summarizer, triager)"
        in seen.first_line
    )


def test_force_without_pr_is_refused_by_run(app_settings: None) -> None:
    assert_error(
        swarm("run", "--repo", "acme/widgets", "--force"),
        "error: --force: only with --pr (forcing every open PR is not offered)",
        EXIT_USAGE,
    )


def test_a_bare_pr_number_needs_one_repo(app_settings: None) -> None:
    assert_error(
        swarm("run", "--pr", "3"),
        "error: --pr 3: a bare number needs exactly one --repo",
        EXIT_USAGE,
    )
    assert_error(
        swarm("run", "--pr", "acme/widgets#x"),
        "error: --pr: 'acme/widgets#x' is not OWNER/NAME#NUMBER",
        EXIT_USAGE,
    )


def test_removing_a_memory_that_does_not_exist() -> None:
    assert_error(
        swarm("memory", "rm", "99"),
        "error: no memory 99; `swarm memory list` shows the ids",
        EXIT_USAGE,
    )


def test_editing_a_superseded_memory_points_at_its_replacement() -> None:
    swarm("memory", "add", "Prefer small PRs")
    swarm("memory", "edit", "1", "Prefer PRs under 400 lines")
    assert_error(
        swarm("memory", "edit", "1", "Prefer tiny PRs"),
        "error: memory 1 was replaced by memory 2; edit 2 instead "
        "(`swarm memory list --all` shows the history)",
        EXIT_USAGE,
    )
    swarm("memory", "rm", "2")
    assert_error(
        swarm("memory", "edit", "2", "again"),
        "error: memory 2 is deleted; there is nothing to edit",
        EXIT_USAGE,
    )


def test_a_memory_kind_that_does_not_exist() -> None:
    assert_error(
        swarm("memory", "add", "I like tabs", "--kind", "opinion"),
        "error: --kind: 'opinion' is not one of: fact, procedure",
        EXIT_USAGE,
    )


def test_runs_of_an_unknown_run_id() -> None:
    assert_error(
        swarm("runs", "run-nope"), "error: no run 'run-nope'; `swarm runs` lists the runs", 2
    )


def test_a_transcript_of_an_unknown_worker() -> None:
    assert_error(
        swarm("transcript", "w-123456789abc"),
        "error: no worker 'w-123456789abc' in the store; see `swarm runs`",
        EXIT_USAGE,
    )


@pytest.mark.parametrize("bad", ["every half hour", "*/30 * *"])
def test_serve_refuses_a_bad_cron_with_the_option_name(
    bad: str, app_settings: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A configured API: nothing is started, and the cron is refused before it is contacted.
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    assert_error(
        swarm("serve", "--repo", "acme/widgets", "--cron", bad),
        f"error: --cron: {bad!r} is not a cron expression (e.g. '*/30 * * * *')",
        EXIT_USAGE,
    )


def test_a_bad_duration_names_the_option() -> None:
    assert_error(
        swarm("store", "prune", "--older-than", "soon"),
        "error: --older-than: 'soon' is not a duration like 30d, 12h or 90min",
        EXIT_USAGE,
    )


def test_a_bare_m_is_refused_as_ambiguous_and_deletes_nothing() -> None:
    assert_error(
        swarm("store", "prune", "--older-than", "1m", "--yes"),
        "error: --older-than: '1m' is ambiguous (minutes or months?): write 1min for minutes "
        "or 1d for days",
        EXIT_USAGE,
    )


def test_an_unknown_flag_is_two_lines_not_a_framed_block() -> None:
    seen = swarm("run", "--bogus")
    assert_error(seen, "error: no such option: --bogus", EXIT_USAGE)
    assert seen.lines[1] == "see `swarm run --help`"


def test_an_argument_of_the_wrong_type() -> None:
    seen = swarm("memory", "rm", "latest")
    assert seen.first_line.startswith("error: invalid value for 'memory_id': ")
    assert_error(seen, seen.first_line, EXIT_USAGE)


def test_exec_without_a_program_says_what_to_do(app_settings: None) -> None:
    assert_error(
        swarm("exec", "--role", "reviewer", "--repo", "acme/widgets"),
        "error: give the program to run after --, e.g. swarm exec ... -- gh pr list",
        EXIT_USAGE,
    )


# Misconfigurations that carry a secret (store URLs with passwords, misspelled names with
# values) are in tests/security/test_errors_a_person_sees.py, trust class 12.


def test_every_problem_is_reported_in_one_go(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_MAX_WORKRES", "4")
    monkeypatch.setenv("SWARM_APP_ID", "one")
    seen = swarm("runs")
    assert seen.lines == [
        "error: 2 settings need fixing:",
        "  SWARM_MAX_WORKRES is not a swarm setting (did you mean SWARM_MAX_WORKERS?); unset "
        "it, or name it in SWARM_ALLOW_UNKNOWN if it is meant for something else",
        "  SWARM_APP_ID: Input should be a valid integer, unable to parse string as an integer",
    ]
    assert seen.code == EXIT_USAGE


def test_a_deliberate_extra_variable_is_allowed_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_DEPLOY_COLOR", "blue")
    monkeypatch.setenv("SWARM_ALLOW_UNKNOWN", "SWARM_DEPLOY_*")
    seen = swarm("runs")
    assert seen.code == 0, seen.output


def _reviewer_edited(folder: Path, old: str, new: str) -> Path:
    """A roles folder whose reviewer.yaml has ``old`` replaced by ``new``."""
    folder.mkdir()
    text = (ROOT / "roles" / "reviewer.yaml").read_text(encoding="utf-8")
    (folder / "reviewer.yaml").write_text(text.replace(old, new), encoding="utf-8")
    return folder


def test_a_role_with_a_misspelled_identity_fails_roles_check(
    app_settings: None, tmp_path: Path
) -> None:
    roles = _reviewer_edited(tmp_path / "roles", "identity: default", "identity: defualt")
    seen = swarm("roles", "check", "--dir", str(roles))
    assert_error(seen, "error: 1 problem in role files:", EXIT_USAGE)
    line = (roles / "reviewer.yaml").read_text().splitlines().index("identity: defualt") + 1
    assert seen.lines[1].strip() == (
        f"{roles / 'reviewer.yaml'}:{line}: identity: 'defualt' is not a configured identity "
        "(configured: default) (did you mean 'default'?)"
    )


def test_roles_check_reports_every_problem_of_every_file_in_one_pass(
    app_settings: None, tmp_path: Path
) -> None:
    """A kind typo in one file, a second claim on its /swarm word in another, and a misspelled
    identity in a third: all three in the first run, so no fix uncovers the next problem."""
    roles = _reviewer_edited(tmp_path / "roles", "kind: review", "kind: reveiw")
    shipped = ROOT / "roles"
    security = (shipped / "security-reviewer.yaml").read_text(encoding="utf-8")
    (roles / "security-reviewer.yaml").write_text(
        security.replace("command: security", "command: review"), encoding="utf-8"
    )
    triager = (shipped / "triager.yaml").read_text(encoding="utf-8")
    (roles / "triager.yaml").write_text(
        triager.replace("identity: triage", "identity: defualt"), encoding="utf-8"
    )
    seen = swarm("roles", "check", "--dir", str(roles))
    assert (seen.code, seen.first_line) == (EXIT_USAGE, "error: 3 problems in role files:")
    assert "Traceback" not in seen.output
    named = [line.strip().split(":", 1)[0] for line in seen.lines[1:]]
    assert named == [
        str(roles / "reviewer.yaml"),
        str(roles / "security-reviewer.yaml"),
        str(roles / "triager.yaml"),
    ]
    assert "unknown kind of work 'reveiw'" in seen.lines[1]
    assert "/swarm review is already the word of role 'reviewer'" in seen.lines[2]
    assert "identity: 'defualt' is not a configured identity" in seen.lines[3]


def test_a_broken_role_file_is_reported_with_file_and_line(tmp_path: Path) -> None:
    roles = _reviewer_edited(tmp_path / "roles", "  contents: read", "  contents: write")
    seen = swarm("roles", "check", "--dir", str(roles))
    assert_error(seen, "error: 1 problem in role files:", EXIT_USAGE)
    assert "reviewer.yaml" in seen.lines[1]
    assert "contents" in seen.lines[1]


def test_an_unexpected_error_is_one_redacted_line_and_exit_1() -> None:
    token = "ghs_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    code, message = describe(RuntimeError(f"boom with {token}\nsecond line"))
    assert code == EXIT_FAILED
    assert message.splitlines() == [
        "error: RuntimeError: boom with [REDACTED:github-token]",
        "(this looks like a bug; `swarm --debug ...` shows the traceback)",
    ]


def test_debug_shows_the_traceback_wherever_the_flag_is_given(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "SWARM_DATA_DIR": str(tmp_path)}
    plain, debug = (
        run_python("-m", "flows", "memory", "rm", "7", *extra, env=env, cwd=ROOT)
        for extra in ([], ["--debug"])
    )
    assert (plain.returncode, plain.stderr.strip()) == (
        EXIT_USAGE,
        "error: no memory 7; `swarm memory list` shows the ids",
    )
    assert "Traceback" in debug.stderr
    assert debug.stderr.strip().endswith("no memory 7; `swarm memory list` shows the ids")


def test_a_repository_the_app_is_not_installed_on_names_it_and_the_installation(
    sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for key, value in credentials_env(sandbox.state, tmp_path / "keys", sandbox.url).items():
        monkeypatch.setenv(key, value)
    seen = swarm("exec", "--role", "reviewer", "--repo", "acme/widget", "--", "true")
    assert_error(
        seen,
        "error: GitHub refused a token for acme/widget to identity 'default' (installation "
        "2001), role 'reviewer': 422 There is at least one repository that does not exist or is "
        "not accessible to the parent installation.; is the App installed there?",
        EXIT_USAGE,
    )


def test_a_claude_model_without_an_api_key_is_a_missing_setting(
    app_settings: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert_error(
        swarm("run", "--repo", "acme/widgets", "--model", "claude-sonnet-4-5"),
        "error: missing settings: ANTHROPIC_API_KEY (or --model scripted) "
        "(docs/configuration.md explains each)",
        EXIT_USAGE,
    )


def test_a_missing_private_key_file_is_named_with_the_other_problems(
    app_settings: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SWARM_APP_PRIVATE_KEY_FILE", str(tmp_path / "gone.pem"))
    monkeypatch.delenv("SWARM_MAINTAINER_LOGIN")
    assert_error(
        swarm("run", "--repo", "acme/widgets"),
        "error: missing settings: SWARM_APP_PRIVATE_KEY_FILE "
        f"(no file at {tmp_path / 'gone.pem'}), "
        "SWARM_MAINTAINER_LOGIN (docs/configuration.md explains each)",
        EXIT_USAGE,
    )
