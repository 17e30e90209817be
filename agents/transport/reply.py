"""A GitHub answer reduced to what callers judge it by, holding no credential.

An ``httpx.Response`` keeps its request, and the request its Authorization header; a
:class:`Reply` keeps only the status, the headers GitHub sent and the decoded body.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx


@dataclass(frozen=True)
class Reply:
    status: int
    headers: httpx.Headers
    body: Any

    @classmethod
    def of(cls, response: httpx.Response) -> Reply:
        try:
            body: Any = response.json() if response.content else None
        except ValueError:
            body = None
        return cls(status=response.status_code, headers=response.headers, body=body)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def field(self, name: str) -> Any:
        """A top-level field of a JSON object body, or None."""
        return self.body.get(name) if isinstance(self.body, dict) else None

    def github_message(self) -> str:
        """GitHub's own words for an error, for messages (``message`` field or the status)."""
        message = self.field("message")
        if isinstance(message, str):
            return f"{self.status} {message[:200]}"
        return str(self.status)
