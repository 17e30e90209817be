"""Role files: strict schema, every problem at once with file:line, the overlay chain."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.kinds.kind import kind_named
from agents.permissions import KNOWN_PERMISSION_KEYS, WORKER_CEILING, check_permissions
from agents.roles import RoleChain
from agents.roles.files import RoleLoadError, load_roles, parse_role
from tests.paths import ROLES_DIR

GOOD = """\
schema_version: 1
id: reviewer
name: Code reviewer
description: Reviews pull requests.
permissions:
  pull_requests: write
  contents: read
  metadata: read
tools:
  - get_pull
  - submit_review
prompt:
  identity: You review code.
  capabilities: You read diffs.
  communication_style: Brief.
  instructions: Post one review.
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    folder = tmp_path / "roles"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    return folder


def test_shipped_roles_load_and_fit_the_ceiling() -> None:
    roles = load_roles(ROLES_DIR)
    assert {"reviewer", "security-reviewer", "triager", "summarizer"} <= set(roles)
    assert roles["reviewer"].permissions == {
        "pull_requests": "write",
        "contents": "read",
        "metadata": "read",
    }
    assert roles["triager"].identity == "triage"
    assert roles["triager"].permissions["issues"] == "write"
    assert roles["reviewer"].identity == "default" and roles["reviewer"].model is None
    for role in roles.values():
        ceiling = kind_named(role.kind).ceiling
        assert check_permissions(role.permissions, f"role {role.id!r}", ceiling) == []
    writers = ("implementer", "fixer")
    assert {kind_named(roles[w].kind).ceiling for w in writers} == {"writing"}
    assert {roles[w].identity for w in writers} == {"writer"}
    assert {kind_named(r.kind).ceiling for r in roles.values() if r.id not in writers} == {
        "reviewing"
    }


def test_every_bad_field_is_reported_at_once_with_file_and_line(tmp_path: Path) -> None:
    bad = (
        GOOD.replace("  contents: read", "  contents: write")
        .replace("  pull_requests: write", "  pull_request: write")
        .replace("description: Reviews pull requests.\n", "description: Reviews.\ncolour: red\n")
        .replace("  - submit_review", "  - submit_reveiw")
        .replace("  instructions: Post one review.\n", "")
        + "limits:\n  max_turns: 0\n  max_turnz: 3\nhistory_scope: forever\n"
    )
    folder = _write(tmp_path, "reviewer.yaml", bad)
    with pytest.raises(RoleLoadError) as err:
        load_roles(folder)
    path = folder / "reviewer.yaml"
    assert err.value.messages == [
        f"{path}:5: colour: unknown field",
        f"{path}:7: permissions.pull_request: unknown permission 'pull_request' "
        "(did you mean 'pull_requests'?) (role 'reviewer')",
        f"{path}:8: permissions.contents: 'write' exceeds the worker ceiling (contents:read) "
        "(role 'reviewer')",
        f"{path}:11: tools[0]: 'get_pull' needs pull_requests:read, which permissions do not grant",
        f"{path}:12: tools[1]: unknown tool 'submit_reveiw' (did you mean 'submit_review'?)",
        f"{path}:13: prompt.instructions: required field is missing",
        f"{path}:18: limits.max_turns: Input should be greater than or equal to 1",
        f"{path}:19: limits.max_turnz: unknown field (did you mean 'max_turns'?)",
        f"{path}:20: history_scope: Input should be 'session' or 'run'",
    ]
    assert str(err.value).startswith("9 problems in role files:\n  ")


def test_problems_across_several_files_are_reported_together(tmp_path: Path) -> None:
    _write(tmp_path, "reviewer.yaml", GOOD.replace("schema_version: 1", "schema_version: 2"))
    folder = _write(
        tmp_path, "other.yaml", GOOD.replace("  metadata: read", "  administration: read")
    )
    with pytest.raises(RoleLoadError) as err:
        load_roles(folder)
    assert err.value.messages == [
        f"{folder / 'other.yaml'}:2: id: 'reviewer' does not match the file name ('other')",
        f"{folder / 'other.yaml'}:8: permissions.administration: 'read' is outside the worker "
        "ceiling (issues:write, pull_requests:write, contents:read, metadata:read) "
        "(role 'reviewer')",
        f"{folder / 'reviewer.yaml'}:1: schema_version: 2 is not supported (expected 1)",
    ]


def test_invalid_yaml_and_duplicate_keys_point_at_their_line(tmp_path: Path) -> None:
    folder = _write(tmp_path, "reviewer.yaml", GOOD + "name: Again\n")
    _write(tmp_path, "broken.yaml", "id: [unclosed\n")
    with pytest.raises(RoleLoadError) as err:
        load_roles(folder)
    assert err.value.messages[0].startswith(f"{folder / 'broken.yaml'}:2: invalid YAML: ")
    assert err.value.messages[1] == (
        f"{folder / 'reviewer.yaml'}:17: name: duplicate key (first set on line 3)"
    )


def test_empty_or_missing_roles_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RoleLoadError, match=r"no role files \(\*\.yaml\) found"):
        load_roles(tmp_path)
    with pytest.raises(RoleLoadError, match="roles directory does not exist"):
        load_roles(tmp_path / "nope")


def test_check_permissions_names_the_permission_and_who_asked() -> None:
    assert check_permissions({"contents": "write", "pull_request": "write"}, "role 'x'") == [
        "role 'x': permissions.contents: 'write' exceeds the worker ceiling (contents:read)",
        "role 'x': permissions.pull_request: unknown permission 'pull_request' "
        "(did you mean 'pull_requests'?)",
    ]
    assert check_permissions({"issues": "admin"}, "identity 'triage'") == [
        "identity 'triage': permissions.issues: 'admin' exceeds the worker ceiling (issues:write)"
    ]
    assert check_permissions({"issues": "full"}, "role 'x'") == [
        "role 'x': permissions.issues: 'full' is not a level (use read or write)"
    ]
    assert set(WORKER_CEILING) <= KNOWN_PERMISSION_KEYS
    assert check_permissions(dict(WORKER_CEILING), "ceiling") == []


def test_overlays_resolve_call_then_session_then_agent() -> None:
    roles = load_roles(ROLES_DIR)
    chain = RoleChain(roles["reviewer"], session=roles["security-reviewer"])
    per_call = chain.with_call(roles["summarizer"])
    assert per_call.resolved_chain() == ["summarizer", "security-reviewer", "reviewer"]
    assert per_call.describe() == "call:summarizer > session:security-reviewer > agent:reviewer"
    overlays = per_call.system_overlays()
    assert overlays[0].startswith('<role id="security-reviewer" scope="session">')
    assert overlays[-1].startswith('<role id="summarizer" scope="call">')
    # The call overlay lives only in the returned chain.
    assert chain.call is None and chain.resolved_chain() == ["security-reviewer", "reviewer"]


def test_overlays_can_narrow_tools_and_permissions_but_never_widen_them() -> None:
    roles = load_roles(ROLES_DIR)
    chain = RoleChain(roles["summarizer"], call=roles["reviewer"])
    assert chain.allowed_tools() == (
        "get_pull",
        "memory_search",
        "record_progress",
        "submit_review",
    )
    assert chain.permissions() == {"pull_requests": "write", "metadata": "read"}
    triage = RoleChain(roles["reviewer"], call=roles["triager"])
    assert triage.permissions() == {"metadata": "read"}
    assert "submit_review" not in triage.allowed_tools()


def test_model_resolves_to_the_most_specific_layer_that_sets_one() -> None:
    base = parse_role(GOOD)
    pinned = base.model_copy(update={"id": "pinned", "model": "claude-opus-4-5"})
    assert RoleChain(base).model is None
    assert RoleChain(base, call=pinned).model == "claude-opus-4-5"


def test_parse_role_reports_a_non_mapping_file() -> None:
    with pytest.raises(RoleLoadError, match=r"^1 problem in role files:\n  <role>:1: a role file"):
        parse_role("- just\n- a list\n")


def test_skill_descriptions_must_be_one_line() -> None:
    text = GOOD + 'skills:\n  - name: diff-reading\n    description: "two\\nlines"\n'
    with pytest.raises(RoleLoadError) as err:
        parse_role(text, "roles/reviewer.yaml")
    assert err.value.messages == [
        "roles/reviewer.yaml:19: skills[0].description: must be a single line"
    ]
