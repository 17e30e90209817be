"""Just enough GraphQL reading for the sandbox: top-level fields, selections, input literals."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

JSON = dict[str, Any]
IDENT = re.compile(r"[_A-Za-z][_0-9A-Za-z]*")


@dataclasses.dataclass
class Field:
    name: str
    args: str
    selection: str
    alias: str | None = None

    @property
    def key(self) -> str:
        """Where the answer goes: the alias when there is one."""
        return self.alias or self.name


class GraphQLFailure(Exception):
    def __init__(
        self, message: str, type_: str | None = None, path: list[str] | None = None
    ) -> None:
        super().__init__(message)
        self.error: JSON = {"message": message}
        if type_:
            self.error["type"] = type_
        if path:
            self.error["path"] = path


def _balanced(text: str, start: int, open_: str, close: str) -> int:
    """Index just past the bracket matching text[start]."""
    depth = 0
    i = start
    while i < len(text):
        ch = text[i]
        if ch == '"':  # brackets inside string values do not count
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif ch == open_:
            depth += 1
        elif ch == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise GraphQLFailure(f"Parse error: unbalanced '{open_}'")


def top_fields(query: str) -> tuple[str, list[Field]]:
    text = re.sub(r"#[^\n]*", "", query)
    op = "mutation" if re.match(r"\s*mutation\b", text) else "query"
    start = text.find("{")
    if start < 0:
        raise GraphQLFailure("Parse error: no selection set")
    return op, _fields(text[start + 1 : _balanced(text, start, "{", "}") - 1])


def _fields(text: str) -> list[Field]:
    """The fields of one selection set (the text between its braces)."""
    fields: list[Field] = []
    i, end = 0, len(text)
    while i < end:
        ch = text[i]
        if ch.isspace() or ch == ",":
            i += 1
            continue
        if text.startswith("...", i):
            # An inline fragment: ``... on Type { selection }``, kept as a field named "..."
            # whose ``args`` is the type it applies to.
            spread = re.compile(r"\.\.\.\s*on\s+([_A-Za-z][_0-9A-Za-z]*)\s*").match(text, i)
            if not spread or not text.startswith("{", spread.end()):
                raise GraphQLFailure("Parse error: only inline fragments are understood")
            close = _balanced(text, spread.end(), "{", "}")
            fields.append(Field("...", spread.group(1), text[spread.end() + 1 : close - 1]))
            i = close
            continue
        match = IDENT.match(text, i)
        if not match:
            raise GraphQLFailure(f"Parse error on {text[i]!r}")
        name, i = match.group(), match.end()
        alias = None
        if text[i:end].lstrip().startswith(":"):
            alias = name
            i = text.index(":", i) + 1
            while i < end and text[i].isspace():
                i += 1
            match = IDENT.match(text, i)
            if not match:
                raise GraphQLFailure("Parse error after alias")
            name, i = match.group(), match.end()
        args = selection = ""
        while i < end and text[i].isspace():
            i += 1
        if i < end and text[i] == "(":
            close = _balanced(text, i, "(", ")")
            args, i = text[i + 1 : close - 1], close
            while i < end and text[i].isspace():
                i += 1
        if i < end and text[i] == "{":
            close = _balanced(text, i, "{", "}")
            selection, i = text[i + 1 : close - 1], close
        fields.append(Field(name, args, selection, alias))
    return fields


def fields_of(selection: str) -> list[Field]:
    """The fields of a selection set's text (between its braces), inline fragments as "..."."""
    return _fields(selection)


def project(value: Any, selection: str) -> Any:
    """Keep only the selected sub-fields, as a GraphQL server answers. A value computed for an
    alias (the same field asked twice with other arguments) is found under the alias; an
    inline fragment's fields are kept when the value is of its type."""
    if not selection.strip() or value is None:
        return value
    if isinstance(value, list):
        return [project(v, selection) for v in value]
    if not isinstance(value, dict):
        return value
    out: JSON = {}
    for f in _fields(selection):
        if f.name == "...":
            if value.get("__typename") in (None, f.args):
                out.update(project(value, f.selection))
            continue
        name = f.key if f.alias and f.key in value else f.name
        if name in value:
            out[f.key] = project(_page(value[name], f.args), f.selection)
    return out


def _page(value: Any, args: str) -> Any:
    """A connection cut to the ``first`` or ``last`` N its field asks for (a literal N), as
    GitHub answers; ``totalCount`` still counts them all."""
    if not isinstance(value, dict) or not isinstance(value.get("nodes"), list):
        return value
    first = re.search(r"\bfirst\s*:\s*(\d+)", args)
    last = re.search(r"\blast\s*:\s*(\d+)", args)
    nodes = value["nodes"]
    if first:
        nodes = nodes[: int(first.group(1))]
    elif last:
        nodes = nodes[-int(last.group(1)) :] if int(last.group(1)) else []
    return {**value, "nodes": nodes}


def read_input(field: Field, variables: JSON) -> JSON:
    var = re.search(r"input\s*:\s*\$(\w+)", field.args)
    if var:
        value = variables.get(var.group(1))
        if not isinstance(value, dict):
            raise GraphQLFailure(f"Variable ${var.group(1)} of type input was not provided.")
        return value
    # Inline literal input: quote the keys and read it as JSON.
    inline = re.search(r"input\s*:\s*(\{.*\})", field.args, re.S)
    if not inline:
        raise GraphQLFailure(f"Argument 'input' on Field '{field.name}' is required.")
    try:
        value = json.loads(_literal_to_json(inline.group(1), variables))
    except ValueError:
        raise GraphQLFailure(f"Parse error in the input of '{field.name}'") from None
    if not isinstance(value, dict):
        raise GraphQLFailure(f"Parse error in the input of '{field.name}'")
    return value


def _literal_to_json(text: str, variables: JSON) -> str:
    """GraphQL input literal -> JSON: quote keys and enum values, inline $variables,
    leave string contents alone."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            end = i + 1
            while end < len(text) and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i : end + 1])
            i = end + 1
        elif ch == "$":
            match = IDENT.match(text, i + 1)
            name = match.group() if match else ""
            out.append(json.dumps(variables.get(name)))
            i += 1 + len(name)
        elif match := IDENT.match(text, i):
            word = match.group()
            is_key = text[match.end() :].lstrip().startswith(":")
            plain = word in ("true", "false", "null") and not is_key
            out.append(word if plain else json.dumps(word))
            i = match.end()
        else:
            out.append(ch)
            i += 1
    return "".join(out)
