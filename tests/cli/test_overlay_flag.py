"""`swarm run --overlay ROLE`: the session overlay is a role from roles/, checked up front."""

from __future__ import annotations

from tests.cli.conftest import EXIT_USAGE, assert_error, swarm


def test_an_unknown_overlay_lists_the_known_roles(app_settings: None) -> None:
    seen = swarm("run", "--repo", "acme/widgets", "--overlay", "secuirty-reviewer")
    assert seen.first_line.startswith("error: --overlay: no role 'secuirty-reviewer' in ")
    assert (
        "(known: fixer, implementer, responder, reviewer, security-reviewer, summarizer, triager)"
        in seen.first_line
    )
    assert_error(seen, seen.first_line, EXIT_USAGE)


def test_run_help_names_the_overlay_flag() -> None:
    seen = swarm("run", "--help")
    assert seen.code == 0 and "--overlay" in seen.output
