"""Conditional requests as GitHub answers them: an ETag on every successful read, and a 304 Not
Modified without a body when ``If-None-Match`` names the current one.

GitHub's ETags are specific to the credential that asked (its support confirms it: a token
rotated every hour gets new ETags for unchanged data, and an old ETag gets a 200, not a 304),
so the tag here is a digest of the answer *and* the credential. GitHub does not count a 304 to a
correctly authorised conditional request against the primary rate limit ("Best practices for
using the REST API": use conditional requests if appropriate); the gate hands the point back.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

# What GitHub names as the headers its answers vary by.
VARY = "Accept, Authorization, Cookie, X-GitHub-OTP"


def etag_of(credential: str, accept: str, body: Any) -> str:
    """A weak ETag, as GitHub sends, over what was answered and who asked."""
    payload = body if isinstance(body, str) else json.dumps(body, sort_keys=True, default=str)
    digest = hashlib.sha256()
    for part in (credential, accept, payload):
        digest.update(part.encode())
        digest.update(b"\0")
    return f'W/"{digest.hexdigest()[:32]}"'


def matches(headers: Mapping[str, str], etag: str) -> bool:
    """Whether the request's ``If-None-Match`` names ``etag`` (weak comparison, lists, ``*``)."""
    wanted = headers.get("if-none-match")
    if not wanted:
        return False
    bare = etag.removeprefix("W/")
    for tag in wanted.split(","):
        tag = tag.strip()
        if tag == "*" or tag.removeprefix("W/") == bare:
            return True
    return False
