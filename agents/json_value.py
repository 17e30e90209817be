"""What JSON can hold, as one recursive type: what ``json.loads`` returns and ``json.dumps`` takes.

Shared by the layers (the store's JSON columns, the LLM layer's request copies, the evaluation's
result files) so that a value of arbitrary shape is still checked as JSON, never left untyped.
Imports nothing of ours.
"""

from __future__ import annotations

from typing import TypeAlias

JSONValue: TypeAlias = dict[str, "JSONValue"] | list["JSONValue"] | str | int | float | bool | None
# A JSON object: the shape of a JSON column's document or of a result file.
JSONObject: TypeAlias = dict[str, JSONValue]
