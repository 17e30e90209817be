"""per_page/page slicing with GitHub's Link header."""

from __future__ import annotations

import math
from typing import TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from sandbox.github.errors import ApiError
from sandbox.github.gate import Ctx

T = TypeVar("T")


def page_of(ctx: Ctx, items: list[T], *, max_per_page: int = 100) -> tuple[list[T], dict[str, str]]:
    try:
        per_page = min(max_per_page, max(1, int(ctx.query.get("per_page", "30"))))
        page = max(1, int(ctx.query.get("page", "1")))
    except ValueError:
        raise ApiError(400, "Invalid request: per_page and page must be integers.") from None
    last = max(1, math.ceil(len(items) / per_page))
    chunk = items[(page - 1) * per_page : page * per_page]
    links = []
    if page < last:
        links += [
            f'<{_with_page(ctx.url, page + 1)}>; rel="next"',
            f'<{_with_page(ctx.url, last)}>; rel="last"',
        ]
    if page > 1:
        links += [
            f'<{_with_page(ctx.url, 1)}>; rel="first"',
            f'<{_with_page(ctx.url, page - 1)}>; rel="prev"',
        ]
    return chunk, ({"link": ", ".join(links)} if links else {})


def _with_page(url: str, page: int) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "page"] + [("page", str(page))]
    return urlunsplit(parts._replace(query=urlencode(query)))
