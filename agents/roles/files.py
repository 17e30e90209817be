"""Role files: strict YAML -> ``Role``, every problem of every file reported at once.

Each problem reads ``path:line: field: what is wrong``, so a person fixes a role file in one pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Final

import yaml
from pydantic import BaseModel, ValidationError

from agents.errors import SwarmError
from agents.kinds.book import RoleBook
from agents.permissions import (
    DEFAULT_CEILING,
    CeilingName,
    did_you_mean,
    permission_problems,
    within,
)
from agents.roles import (
    KNOWN_TOOLS,
    ONE_LINE,
    SCHEMA_VERSION,
    TOOLS,
    Limits,
    PromptSections,
    Role,
    Skill,
)


class RoleLoadError(SwarmError):
    """One or more role files are invalid; ``messages`` holds every ``path:line: ...`` problem."""

    def __init__(self, messages: Sequence[str]) -> None:
        self.messages = list(messages)
        count = len(self.messages)
        head = f"{count} problem{'s' if count != 1 else ''} in role files:"
        super().__init__("\n".join([head, *(f"  {m}" for m in self.messages)]))


def load_roles(directory: str | Path) -> dict[str, Role]:
    """Every ``*.yaml`` role in ``directory`` by id; all problems of all files in one error."""
    roles, problems = read_roles(directory)
    if problems:
        raise RoleLoadError(problems)
    return roles


def read_roles(directory: str | Path) -> tuple[dict[str, Role], list[str]]:
    """The valid roles in ``directory`` and every problem found in its files, without raising:
    a caller that checks more (``swarm roles check``: identities, models) adds its own problems
    about the valid roles to these, so a person sees every problem in one pass, not the next
    one only after fixing the last."""
    root = Path(directory)
    if not root.is_dir():
        return {}, [f"{root}: roles directory does not exist"]
    files = sorted([*root.glob("*.yaml"), *root.glob("*.yml")])
    if not files:
        return {}, [f"{root}: no role files (*.yaml) found"]
    roles: dict[str, Role] = {}
    problems: list[str] = []
    # Every file's ``/swarm`` word, the invalid files' too: a word claimed twice is a problem
    # to show now, even when the other claimant has a typo of its own elsewhere.
    claims: list[tuple[Path, str]] = []
    for path in files:
        role, found = _load_file(path)
        problems.extend(found)
        if role is not None:
            roles[role.id] = role
            if role.command is not None:
                claims.append((path, role.command))
        elif (word := _claimed_command(path)) is not None:
            claims.append((path, word))
    problems += _shared_commands(claims)
    return roles, problems


def _claimed_command(path: Path) -> str | None:
    """The ``command:`` an invalid role file asks for, when its YAML still reads as a mapping."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    word = data.get("command") if isinstance(data, dict) else None
    return word if isinstance(word, str) else None


def _shared_commands(claims: Sequence[tuple[Path, str]]) -> list[str]:
    """One role per ``/swarm`` word: a second role claiming a word is a problem of its file."""
    taken: dict[str, str] = {}
    problems: list[str] = []
    for path, word in sorted(claims):
        if word in taken:
            problems.append(
                f"{path}:{key_line(path, 'command')}: command: /swarm {word} is already the "
                f"word of role {taken[word]!r}"
            )
        taken.setdefault(word, path.stem)
    return problems


def key_line(path: Path, key: str) -> int:
    """The line of a role file's top-level ``key:`` (1 when it cannot be found or read): where
    a problem with that key is named, as the loader names the places of its own problems.
    A top-level key starts its line; a nested one of the same name is indented."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return 1
    for number, text in enumerate(lines, 1):
        name, colon, _ = text.partition(":")
        if colon and name.rstrip() == key and not name[:1].isspace():
            return number
    return 1


@cache
def shipped_book() -> RoleBook:
    """The roles shipped with swarm (not a configured directory's), by kind and command word:
    what routing and commands read when their caller hands them no roles."""
    return RoleBook(load_roles(Path(__file__).resolve().parents[2] / "roles"))


def load_role(path: str | Path) -> Role:
    role, problems = _load_file(Path(path))
    if problems or role is None:
        raise RoleLoadError(problems)
    return role


def parse_role(text: str, source: str = "<role>") -> Role:
    """Validate role YAML held in memory; ``source`` names it in error messages."""
    role, problems = _parse(text, source, expected_id=None)
    if problems or role is None:
        raise RoleLoadError(problems)
    return role


def _load_file(path: Path) -> tuple[Role | None, list[str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        return None, [f"{path}: cannot read ({exc.strerror})"]
    return _parse(text, str(path), expected_id=path.stem)


# libyaml's loader where PyYAML was built with it: every run and every worker reads the roles
# folder, and the pure-Python one spent 7% of an in-process flow test's CPU parsing it (py-spy,
# issue 33). Same safe constructors, same marks for the line numbers.
_SAFE_LOADER: Final[type[yaml.SafeLoader]] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _parse(text: str, source: str, expected_id: str | None) -> tuple[Role | None, list[str]]:
    try:
        node = yaml.compose(text, Loader=_SAFE_LOADER)
        data = yaml.load(text, Loader=_SAFE_LOADER)  # noqa: S506 (a safe loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc)
        return None, [f"{source}:{line}: invalid YAML: {problem}"]
    if not isinstance(node, yaml.MappingNode) or not isinstance(data, dict):
        return None, [f"{source}:1: a role file must be a mapping of role fields"]

    lines = _LineFinder(node)
    found: list[tuple[int, str]] = list(_duplicate_keys(node))
    role: Role | None = None
    try:
        role = Role.model_validate(data)
    except ValidationError as exc:
        for error in exc.errors():
            loc = tuple(error["loc"])
            found.append((lines.line(loc), _describe(loc, error)))
    found.extend(_semantic_problems(data, lines, expected_id))
    if found:
        found.sort(key=lambda item: item[0])
        return None, [f"{source}:{line}: {message}" for line, message in found]
    return role, []


def _semantic_problems(
    data: Mapping[str, Any], lines: _LineFinder, expected_id: str | None
) -> list[tuple[int, str]]:
    """Checks pydantic cannot express per field: the permission ceiling and tool needs."""
    found: list[tuple[int, str]] = []
    role_id = data.get("id")
    who = f" (role {role_id!r})" if isinstance(role_id, str) else ""
    if expected_id is not None and isinstance(role_id, str) and role_id != expected_id:
        found.append(
            (lines.line(("id",)), f"id: {role_id!r} does not match the file name ({expected_id!r})")
        )
    found.extend(_kind_problems(data, lines))
    perms = data.get("permissions")
    if isinstance(perms, Mapping):
        for problem in permission_problems(perms, _kind_ceiling(data.get("kind"))):
            found.append((lines.line(("permissions", problem.key)), problem.message + who))
    else:
        perms = {}
    tools = data.get("tools")
    if isinstance(tools, list):
        for index, tool in enumerate(tools):
            if not isinstance(tool, str):
                continue
            where = lines.line(("tools", index))
            if tool not in KNOWN_TOOLS:
                found.append(
                    (
                        where,
                        f"tools[{index}]: unknown tool {tool!r}{did_you_mean(tool, TOOLS)}",
                    )
                )
                continue
            needed = TOOLS[tool].needs
            if needed and not within({k: str(v) for k, v in perms.items()}, needed):
                need = ", ".join(f"{k}:{v}" for k, v in needed.items())
                found.append(
                    (
                        where,
                        f"tools[{index}]: {tool!r} needs {need}, which permissions do not grant",
                    )
                )
    return found


def _kind_ceiling(kind: object) -> CeilingName:
    """The ceiling a role of ``kind`` is checked against when it loads: its kind's (the writer's
    kind may write contents; every other kind reviews). Its identity's own ceiling is checked
    again before any token is minted."""
    from agents.kinds import kind_names
    from agents.kinds.kind import kind_named

    if isinstance(kind, str) and kind in kind_names():
        return kind_named(kind).ceiling
    return DEFAULT_CEILING


def _kind_problems(data: Mapping[str, Any], lines: _LineFinder) -> list[tuple[int, str]]:
    """``kind:`` names a registered kind of work; ``command:`` is no word ``/swarm`` keeps."""
    from agents.kinds import kind_names

    found: list[tuple[int, str]] = []
    kind = data.get("kind")
    known = set(kind_names())
    if isinstance(kind, str) and kind not in known:
        hint = did_you_mean(kind, known) or f" (known: {', '.join(sorted(known))})"
        found.append((lines.line(("kind",)), f"kind: unknown kind of work {kind!r}{hint}"))
    if data.get("command") == "help":
        found.append((lines.line(("command",)), "command: 'help' is /swarm's own word"))
    return found


def _describe(loc: tuple[int | str, ...], error: Mapping[str, Any]) -> str:
    dotted = _dotted(loc)
    kind = error["type"]
    if kind == "extra_forbidden":
        parent = _fields_at(loc[:-1])
        hint = did_you_mean(str(loc[-1]), parent) if parent else ""
        return f"{dotted}: unknown field{hint}"
    if kind == "missing":
        return f"{dotted}: required field is missing"
    if kind == "literal_error" and loc == ("schema_version",):
        return (
            f"schema_version: {error.get('input')!r} is not supported (expected {SCHEMA_VERSION})"
        )
    if kind == "string_pattern_mismatch":
        if error.get("ctx", {}).get("pattern") == ONE_LINE:
            return f"{dotted}: must be a single line"
        return f"{dotted}: {error.get('input')!r} must be lower-case letters, digits, '-' or '_'"
    return f"{dotted}: {error['msg']}"


def _dotted(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<root>"


_MODELS: Final[dict[str, type[BaseModel]]] = {
    "": Role,
    "limits": Limits,
    "prompt": PromptSections,
    "skills": Skill,
}


def _fields_at(loc: tuple[int | str, ...]) -> set[str]:
    key = ".".join(str(p) for p in loc if not isinstance(p, int))
    model = _MODELS.get(key)
    return set(model.model_fields) if model else set()


class _LineFinder:
    """Maps a pydantic error location to the 1-based line of the YAML node it names."""

    def __init__(self, root: yaml.Node) -> None:
        self.root = root

    def line(self, loc: tuple[int | str, ...]) -> int:
        node: yaml.Node = self.root
        line = node.start_mark.line + 1
        for part in loc:
            if isinstance(node, yaml.MappingNode):
                match = next(((k, v) for k, v in node.value if k.value == str(part)), None)
                if match is None:
                    break
                line = match[0].start_mark.line + 1
                node = match[1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                if part >= len(node.value):
                    break
                node = node.value[part]
                line = node.start_mark.line + 1
            else:
                break
        return line


def _duplicate_keys(node: yaml.Node, path: str = "") -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key, value in node.value:
            name = str(key.value)
            line = key.start_mark.line + 1
            if name in seen:
                where = f"{path}.{name}" if path else name
                found.append((line, f"{where}: duplicate key (first set on line {seen[name]})"))
            else:
                seen[name] = line
            found.extend(_duplicate_keys(value, f"{path}.{name}" if path else name))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            found.extend(_duplicate_keys(item, f"{path}[{index}]"))
    return found
