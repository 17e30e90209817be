"""Path globs for ``.github/swarm.yaml``: ``*`` within one directory, ``**`` across them.

A pattern without a slash matches the file name in any directory (``*.lock`` matches
``web/yarn.lock``), as in ``.gitignore``; a pattern with a slash is matched from the repository
root (``vendor/**``). Python 3.11's ``fnmatch`` lets ``*`` cross slashes and ``PurePath.match``
has no ``**``, so the translation is ours.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache


@lru_cache(maxsize=512)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """The regular expression a glob stands for (anchored at both ends)."""
    anchored = "/" in pattern.strip("/") or pattern.startswith("**")
    body = pattern.strip("/")
    out: list[str] = []
    i = 0
    while i < len(body):
        if body.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif body.startswith("**", i):
            out.append(".*")
            i += 2
        elif body[i] == "*":
            out.append("[^/]*")
            i += 1
        elif body[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(body[i]))
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(prefix + "".join(out) + r"\Z")


def matches(path: str, patterns: Iterable[str]) -> bool:
    """Whether ``path`` (relative, ``/``-separated) matches any of ``patterns``."""
    clean = path.lstrip("/")
    return any(compile_glob(p).match(clean) for p in patterns)
