"""A decoded shadow of a text, for secrets written in a form the rule table cannot read.

A token reaches text URL-encoded (``ghs%5F...``), JSON- or Python-escaped (``ghs\\u005f...``,
``\\x5f``), as HTML character references (``&#95;``), or with invisible characters inside it (a
zero-width space, a soft hyphen): each hides the token's shape from every pattern. The shadow is
the text with those forms decoded (twice over, for text encoded twice) and invisible characters
dropped, together with the way back: each span of the shadow maps to the span of the original it
was decoded from, so what the rules find in the shadow is replaced in the original.

Decoding keeps a record of where each escape was, not a map of every character: most text holds
no escape at all and costs a few substring tests.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

# Format characters that render as nothing (Unicode category Cf and the fillers that act so).
_INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
)
_ESCAPE = re.compile(
    r"%(?P<pct>[0-9A-Fa-f]{2})"
    r"|\\u(?P<u>[0-9A-Fa-f]{4})|\\u\{(?P<ub>[0-9A-Fa-f]{1,6})\}|\\x(?P<x>[0-9A-Fa-f]{2})"
    r"|\\(?P<backslash>\\)"
    r"|&#(?:[xX](?P<hex>[0-9A-Fa-f]{1,6})|(?P<dec>[0-9]{1,7}));?"
    r"|&(?P<named>lowbar|UnderBar|period|hyphen|dash|minus|num|percnt|bsol);"
    rf"|[{_INVISIBLE}]+"
)
_INVISIBLE_RUN = re.compile(f"[{_INVISIBLE}]")
_CANDIDATE = re.compile(f"[%\\\\&{_INVISIBLE}]")
_NAMED = {
    "lowbar": "_",
    "UnderBar": "_",
    "period": ".",
    "hyphen": "-",
    "dash": "-",
    "minus": "-",
    "num": "#",
    "percnt": "%",
    "bsol": "\\",
}
_PASSES = 3


def _decoded(m: re.Match[str]) -> str:
    """What one escape stands for; an escape of no printable ASCII or invisible character stays
    as it is (a secret is made of ASCII, and decoding others could only join unrelated text)."""
    if m["backslash"] is not None:
        return "\\"
    if m["named"] is not None:
        return _NAMED[m["named"]]
    number = next((m[g] for g in ("pct", "u", "ub", "x", "hex") if m[g] is not None), None)
    code = int(number, 16) if number is not None else int(m["dec"]) if m["dec"] else None
    if code is None:
        return ""  # invisible characters: dropped
    if 0x20 <= code < 0x7F:
        return chr(code)
    # An escaped invisible character (``\u200b`` in JSON) is as invisible as the character.
    return "" if code <= 0x10FFFF and _INVISIBLE_RUN.fullmatch(chr(code)) else m.group(0)


@dataclass(frozen=True)
class _Pass:
    """One decoding pass: for each escape, where it starts in the shadow, how long its
    decoded form is, and where it was in the text the pass read."""

    shadow_starts: list[int]
    decoded_lengths: list[int]
    spans: list[tuple[int, int]]
    made_escapes: bool

    def back(self, index: int, *, end: bool) -> int:
        """The position in the pass's input of shadow position ``index`` (a span end when
        ``end``: the position just after the character before it)."""
        probe = index - 1 if end else index
        i = bisect.bisect_right(self.shadow_starts, probe) - 1
        if i < 0:
            return index
        start, length = self.shadow_starts[i], self.decoded_lengths[i]
        begin, finish = self.spans[i]
        if probe < start + length:  # inside a decoded escape: the whole escape
            return finish if end else begin
        return finish + (index - start - length)


# What an escape stands for, by its text: a text dense with escapes (64 KB of ``%41``) repeats a
# few of them, and the work per escape is most of a pass's cost. Bounded, so hostile text of
# many different escapes cannot grow it.
_DECODED_CACHE: dict[str, str] = {}
_DECODED_CACHE_MAX = 4096


def _one_pass(text: str) -> tuple[str, _Pass] | None:
    starts: list[int] = []
    lengths: list[int] = []
    spans: list[tuple[int, int]] = []
    pieces: list[str] = []
    decoded: list[str] = []
    at = shift = 0
    # The escape pattern is tried only where one can start: a scan for these few characters is
    # ten times cheaper than the pattern's alternation at every position.
    for candidate in _CANDIDATE.finditer(text):
        start = candidate.start()
        if start < at:
            continue
        m = _ESCAPE.match(text, start)
        if m is None:
            continue
        escape = m.group(0)
        out = _DECODED_CACHE.get(escape)
        if out is None:
            out = _decoded(m)
            if len(_DECODED_CACHE) < _DECODED_CACHE_MAX:
                _DECODED_CACHE[escape] = out
        if out == escape:
            continue
        end = m.end()
        pieces += (text[at:start], out)
        decoded.append(out)
        starts.append(start + shift)
        lengths.append(len(out))
        spans.append((start, end))
        shift += len(out) - (end - start)
        at = end
    if not spans:
        return None
    pieces.append(text[at:])
    made = "".join(decoded)
    return "".join(pieces), _Pass(starts, lengths, spans, any(c in made for c in "%\\&"))


@dataclass(frozen=True)
class Shadow:
    """The decoded text and the passes that made it, to map its spans back."""

    text: str
    passes: tuple[_Pass, ...]

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        for step in reversed(self.passes):
            start, end = step.back(start, end=False), step.back(end, end=True)
        return start, end


def _may_hold_escapes(text: str) -> bool:
    # Substring tests first: the escape pattern's alternation costs ten times a plain scan, and
    # most text (ASCII prose and code) has none of these.
    if "%" in text or "\\u" in text or "\\x" in text or "\\\\" in text:
        return True
    if "&" in text and ";" in text:
        return True
    return not text.isascii() and _INVISIBLE_RUN.search(text) is not None


def shadow_of(text: str) -> Shadow | None:
    """The text with escapes decoded and invisible characters dropped; None when it has none."""
    if not _may_hold_escapes(text):
        return None
    passes: list[_Pass] = []
    current = text
    for _ in range(_PASSES):
        done = _one_pass(current)
        if done is None:
            break
        current, step = done
        passes.append(step)
        if not step.made_escapes:
            break  # nothing decoded could start another escape: no second pass to make
    return Shadow(current, tuple(passes)) if passes else None
