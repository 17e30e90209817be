"""The type of JSON whose shape nobody here decides: what GitHub, a store row or a config file
holds before the code that reads it picks the fields it needs.

``JSONValue`` is what ``json.loads`` returns, said exactly, so mypy makes every reader check the
shape it relies on (an ``isinstance``, or one of the readers below) where an untyped value let
a wrong guess through to run time. A value that is only handed on is typed ``object``; a shape
the code does decide (a GitHub resource it reads fields of) gets a TypedDict of its own
(:mod:`agents.github.models`).
"""

from __future__ import annotations

from typing import TypeAlias

JSONValue: TypeAlias = dict[str, "JSONValue"] | list["JSONValue"] | str | int | float | bool | None
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
