"""Delimiters for untrusted text (PR title/body/diff/comments, file contents, context files).

Untrusted text is data, never instructions: it is wrapped in ``<untrusted kind=...>`` delimiters
that the text itself cannot close or fake. Any tag of ours found inside it (``</untrusted>``,
``<turn_context>``, ``<role>``, ...) is neutralised by escaping its ``<``, so the only closing
delimiter in the result is the one this module writes.

Tags are looked for in a normalised shadow of the text (NFKC, so fullwidth ``＜／`` reads as
``</``; format and combining characters dropped, so a zero-width space inside a tag does not hide
it; a few more look-alikes of ``<`` and ``/`` folded), and each hit is replaced in the original.
Everything else reaches the model exactly as written: a reviewer must still see odd characters.
"""

from __future__ import annotations

import functools
import re
import unicodedata
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
# Possessive blanks: "\s*/?\s*" could split a run of blanks between its two halves every way
# there is, quadratic on "<" and blanks; a blank never starts a tag's name, so nothing is lost.
_TAG = re.compile(r"<(\s*+/?\s*+)(" + "|".join(RESERVED_TAGS) + r")\b", re.IGNORECASE)
_KIND = re.compile(r"^[a-z][a-z0-9_]{0,40}$")
_ATTR_UNSAFE = re.compile(r'[<>"&\r\n\uff1c\uff1e\uff02\uff06\u2039\u203a]')


# Look-alikes NFKC leaves alone: angle brackets, the canadian syllabics and modifier "<", the
# division and fraction slashes.
_FOLD = str.maketrans(
    {
        "\u2039": "<",
        "\u2329": "<",
        "\u3008": "<",
        "\u27e8": "<",
        "\u02c2": "<",
        "\u1438": "<",
        "\u2215": "/",
        "\u2044": "/",
        "\u29f8": "/",
        "\u2571": "/",
    }
)


_DROPPED = ("Cf", "Mn", "Me")
_NOT_ASCII = re.compile(r"[^\x00-\x7f]+")


@functools.lru_cache(maxsize=4096)
def _folded(char: str) -> str:
    """What one character reads as in the shadow: its NFKC form with look-alikes folded, format
    and combining characters dropped. Cached: a text repeats its few non-ASCII characters."""
    if unicodedata.category(char) in _DROPPED:
        return ""
    folded = unicodedata.normalize("NFKC", char).translate(_FOLD)
    return "".join(c for c in folded if unicodedata.category(c) not in _DROPPED)


def _shadow(text: str) -> tuple[str, list[int]]:
    """The text as tags are looked for in it, and for each of its characters the index of the
    original character it came from."""
    chars: list[str] = []
    origin: list[int] = []
    done = 0
    # ASCII reads as itself (NFKC keeps it, none of it is a format or combining character, and
    # no look-alike is ASCII): its runs are copied whole, and only the other characters are
    # looked at one by one. One "é" in 64 KB made every character a call to unicodedata.
    for run in _NOT_ASCII.finditer(text):
        start, end = run.span()
        chars.append(text[done:start])
        origin.extend(range(done, start))
        for index in range(start, end):
            folded = _folded(text[index])
            chars.append(folded)
            origin.extend([index] * len(folded))
        done = end
    chars.append(text[done:])
    origin.extend(range(done, len(text)))
    return "".join(chars), origin


def neutralise(text: str) -> str:
    """``text`` with every reserved tag opener or closer escaped (``<`` -> ``&lt;``), including
    look-alike ones (fullwidth, zero-width characters inside, other slashes and brackets)."""
    if text.isascii():
        return _TAG.sub(lambda m: "&lt;" + m.group(1) + m.group(2), text)
    shadow, origin = _shadow(text)
    out: list[str] = []
    done = 0
    for m in _TAG.finditer(shadow):
        start, end = origin[m.start()], origin[m.end() - 1] + 1
        out.append(text[done:start])
        out.append("&lt;" + m.group(1) + m.group(2))
        done = end
    out.append(text[done:])
    return "".join(out)


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
