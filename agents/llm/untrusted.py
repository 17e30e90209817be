"""Delimiters for untrusted text (PR title/body/diff/comments, file contents, context files).

Untrusted text is data, never instructions: it is wrapped in ``<untrusted kind=...>`` delimiters
that the text itself cannot close or fake. Any tag of ours found inside it (``</untrusted>``,
``<turn_context>``, ``<role>``, ...) is neutralised by escaping its ``<``, so the only closing
delimiter in the result is the one this module writes.
"""

from __future__ import annotations

import re
from typing import Final

RESERVED_TAGS: Final[tuple[str, ...]] = (
    "untrusted",
    "turn_context",
    "recall",
    "role",
    "system",
    "tool_result",
    "memory_snapshot",
)
# Tolerates the spacing and case tricks a hostile text might use: "< / UNTRUSTED", "</untrusted ".
_TAG = re.compile(r"<(\s*/?\s*)(" + "|".join(RESERVED_TAGS) + r")\b", re.IGNORECASE)
_KIND = re.compile(r"^[a-z][a-z0-9_]{0,40}$")
_ATTR_UNSAFE = re.compile(r'[<>"&\r\n]')


def neutralise(text: str) -> str:
    """``text`` with every reserved tag opener or closer escaped (``<`` -> ``&lt;``)."""
    return _TAG.sub(lambda m: "&lt;" + m.group(1) + m.group(2), text)


def wrap_untrusted(kind: str, text: str, *, source: str | None = None) -> str:
    """``text`` inside explicit delimiters it cannot break out of.

    ``kind`` says what the data is (``pr_body``, ``diff``, ``file``, ``context_file``, ...);
    ``source`` optionally names where it came from (a path, a comment author).
    """
    if not _KIND.match(kind):
        raise ValueError(f"untrusted kind {kind!r} must be lower-case letters, digits or '_'")
    attrs = f'kind="{kind}"'
    if source is not None:
        attrs += f' source="{_ATTR_UNSAFE.sub("_", source)[:200]}"'
    return f"<untrusted {attrs}>\n{neutralise(text)}\n</untrusted>"
