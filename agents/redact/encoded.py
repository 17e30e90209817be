"""Base64 in redaction: which runs look like encoded data, and decoding a run to look inside.

Apart from the rule table (:mod:`agents.redact.rules`) because the table's base64 and
``Basic`` rules and the decoded-run probe in :mod:`agents.redact` share one notion of "random".
"""

from __future__ import annotations

import base64
import binascii
import re

B64_MIN = 120
B64_RUN = re.compile(rf"[A-Za-z0-9+/_\-]{{{B64_MIN},}}={{0,2}}")
# Short base64 runs are decoded and looked into: ``x-access-token:ghs_...`` encodes to ~76.
SHORT_B64_RUN = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{16,119}={0,2}(?![=\w])")


def mixed_classes(run: str, *, digits: bool = True) -> bool:
    """Both cases (and a digit, unless ``digits`` is False): how random data looks, unlike words.
    Base64 of text may lack digits (a token of zeros encodes to "MDAw..."), so the probe that
    decodes short runs drops that part."""
    return (
        any(c.isupper() for c in run)
        and any(c.islower() for c in run)
        and (not digits or any(c.isdigit() for c in run))
    )


def looks_like_blob(run: str) -> bool:
    # Long paths and snake_case names are made of the same characters as base64; real encoded
    # data mixes cases and digits and has few slashes.
    body = run.rstrip("=")
    return mixed_classes(body) and body.count("/") * 16 <= len(body)


def decoded_text(run: str) -> str | None:
    """``run`` base64-decoded (standard or urlsafe) when that gives printable text, else None."""
    body = run.rstrip("=")
    if len(body) % 4 == 1:
        return None
    padded = body + "=" * (-len(body) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return text if text and all(c.isprintable() or c in "\r\n\t" for c in text) else None
