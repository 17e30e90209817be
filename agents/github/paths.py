"""Repository paths and names as URL segments that cannot leave the route they are put in.

A path the model asks for (``read_file``) is joined under ``/repos/{owner}/{repo}/contents/``.
HTTP clients remove dot segments, so ``../../gadgets/contents/README.md`` would reach another
repository's route; a server that decodes once more turns ``%2e%2e`` or ``%2f`` into the same.
Every form of traversal is refused (never repaired, so nothing is guessed), and each segment is
percent-quoted whole, so ``/``, ``?`` and ``#`` inside a name stay inside it.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

from agents.github.errors import UnsafePath

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NAME = re.compile(r"[A-Za-z0-9_.-]+")
# Decoding layers checked: enough for any double encoding a server chain could undo.
_DECODE_LAYERS = 3


def _refusal(path: str) -> str | None:
    if _CONTROL.search(path):
        return "control characters (NUL, newline, ...) are not allowed"
    if "\\" in path:
        return "backslashes are not allowed; separate directories with '/'"
    if path.startswith("/"):
        return "absolute paths are not allowed; give the path from the repository root"
    if any(segment in ("", ".", "..") for segment in path.split("/")):
        return "empty, '.' and '..' segments are not allowed"
    return None


def repo_path(path: str) -> str:
    """``path`` (relative to the repository root) as quoted URL segments, or :class:`UnsafePath`.

    Each decoding of the path is checked too, so ``%2e%2e%2f`` and ``%252e`` are refused.
    """
    seen = path
    for _ in range(_DECODE_LAYERS + 1):
        reason = _refusal(seen)
        if reason is not None:
            raise UnsafePath(f"path {path!r} refused: {reason}")
        decoded = unquote(seen)
        if decoded == seen:
            break
        seen = decoded
    else:
        raise UnsafePath(f"path {path!r} refused: too many layers of percent-encoding")
    return "/".join(quote(segment, safe="") for segment in path.split("/"))


def repo_name(full_name: str) -> str:
    """``owner/name`` checked to be exactly two plain segments (never ``.`` or ``..``)."""
    owner, sep, name = full_name.partition("/")
    if not sep or not all(_NAME.fullmatch(part) and part.strip(".") for part in (owner, name)):
        raise ValueError(f"repo must look like 'owner/name', got {full_name!r}")
    return full_name
