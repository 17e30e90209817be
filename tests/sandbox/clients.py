"""Real githubkit clients pointed at the sandbox (no retries, no shared caches)."""

from __future__ import annotations

from typing import Any, TypeVar

from githubkit import AppAuthStrategy, GitHub, TokenAuthStrategy
from githubkit.cache import MemCacheStrategy
from githubkit_schemas.latest.types import AppInstallationsInstallationIdAccessTokensPostBodyType
from typing_extensions import Unpack

from sandbox.github.seed import REVIEWER_APP_ID, REVIEWER_INSTALLATION_ID
from sandbox.github.state import SandboxState


def token_client(base_url: str, token: str) -> GitHub[Any]:
    return GitHub(
        TokenAuthStrategy(token),
        base_url=base_url,
        auto_retry=False,
        ssl_verify=False,  # plain http on loopback; skips building a TLS context per request
        http_cache=False,
        cache_strategy=MemCacheStrategy(),
    )


def app_client(base_url: str, state: SandboxState, app_id: int = REVIEWER_APP_ID) -> GitHub[Any]:
    return GitHub(
        AppAuthStrategy(app_id, state.private_key_pem(app_id)),
        base_url=base_url,
        auto_retry=False,
        ssl_verify=False,  # plain http on loopback; skips building a TLS context per request
        http_cache=False,
        cache_strategy=MemCacheStrategy(),
    )


def mint(
    base_url: str,
    state: SandboxState,
    *,
    app_id: int = REVIEWER_APP_ID,
    installation_id: int = REVIEWER_INSTALLATION_ID,
    **data: Unpack[AppInstallationsInstallationIdAccessTokensPostBodyType],
) -> str:
    """Through the real endpoint when ``data`` is given; otherwise straight from the state
    (App clients load their PEM key on every JWT, which is slow in bulk)."""
    if not data and app_id == REVIEWER_APP_ID:
        return state.mint_token(installation_id)
    gh = app_client(base_url, state, app_id)
    if data:
        resp = gh.rest.apps.create_installation_access_token(installation_id, data=data)
    else:
        resp = gh.rest.apps.create_installation_access_token(installation_id)
    return resp.parsed_data.token


T = TypeVar("T")


def items(data: object, kind: type[T]) -> list[T]:
    """A list endpoint's parsed items, with their type. githubkit annotates them ``list[X]``
    inside client classes that have a ``list`` method, so mypy resolves ``list`` to the method
    and the item type is lost; this restores it, checked at run time."""
    assert isinstance(data, list), type(data)
    assert all(isinstance(item, kind) for item in data), [type(item) for item in data]
    return data
