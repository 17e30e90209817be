"""What JSON can hold, as one recursive type: what ``json.loads`` returns and ``json.dumps`` takes.

Shared by the layers (the store's JSON columns, the LLM layer's request copies, the evaluation's
result files, GitHub's answers) so that a value of arbitrary shape is still checked as JSON,
never left untyped. Readers below take the shape a caller relies on out of such a value (an
object, a list, a string, a number), the ``isinstance`` every reader would otherwise repeat; a
shape the code does decide (a GitHub resource) gets a TypedDict of its own
(:mod:`agents.github.models`). Imports nothing of ours.
"""

from __future__ import annotations

from typing import TypeAlias

JSONValue: TypeAlias = dict[str, "JSONValue"] | list["JSONValue"] | str | int | float | bool | None
# A JSON object: the shape of a JSON column's document or of a result file.
JSONObject: TypeAlias = dict[str, JSONValue]


def as_object(value: object) -> JSONObject:
    """``value`` when it is a JSON object, else an empty one (GitHub's ``null`` for a part that
    is not there reads as no fields)."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[JSONValue]:
    """``value`` when it is a JSON list, else an empty one."""
    return value if isinstance(value, list) else []


def objects(value: object) -> list[JSONObject]:
    """The objects of a JSON list, anything else in it left out."""
    return [item for item in as_list(value) if isinstance(item, dict)]


def text_or_none(value: object) -> str | None:
    """``value`` when it is a string, else None."""
    return value if isinstance(value, str) else None


def int_or_zero(value: object) -> int:
    """``int(value or 0)`` for a JSON number or numeric string (an id, a line, a count); 0 for
    anything else, as for GitHub's ``null``."""
    if isinstance(value, (int, float, str)) and value:
        return int(value)
    return 0
