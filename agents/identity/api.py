"""The GitHub calls the identity layer makes, each as the credential it needs, over one transport.

App JWT: ``GET /app`` (the slug), minting, and the App's webhook deliveries (listing them, asking
for one again). Installation token: revoking itself, listing its
repositories, GraphQL ``viewer``. Bot PAT: ``GET /user``. No answer at all is the transport's
:class:`~agents.transport.errors.GitHubUnreachable`, as it is everywhere; a credential the auth
strategy will not send is a mismatch.

Every call made with an identity's own credential (installation token, bot PAT) spends that
identity's budget, the one its workers share: it goes out through :class:`IdentityCalls` when one
is given (the wiring gives the identity's throttle). Calls made with the App JWT spend the App's
budget, not an installation's, and are not the identity's to account.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlencode

import httpx

from agents.identity.errors import IdentityBlocked
from agents.transport import CredentialRefused
from agents.transport.auth import AppJwtAuth, BotPatAuth, CredentialAuth, InstallationTokenAuth
from agents.transport.calls import IdentityCall
from agents.transport.client import GitHubTransport
from agents.transport.reply import Reply

VIEWER_QUERY = "query { viewer { login } }"


class IdentityCalls(Protocol):
    """Sends one call made as ``call.login`` within that identity's budget (waiting its turn,
    folding in the answer); ``send`` makes the call."""

    async def send(
        self, call: IdentityCall, send: Callable[[], Awaitable[httpx.Response]]
    ) -> httpx.Response: ...


@dataclass(frozen=True)
class IdentityLink:
    """How an identity's own calls reach GitHub: ``api_url`` over ``transport`` (a new one of
    the identity's own, ``timeout`` seconds per call, unless one is given), spending the budget
    ``calls`` accounts (none given: not accounted)."""

    api_url: str
    timeout: float = 30.0
    transport: GitHubTransport | None = None
    calls: IdentityCalls | None = None

    @property
    def url(self) -> str:
        return self.api_url.rstrip("/")

    def api(self, identity: str) -> IdentityApi:
        """The calls, as ``identity``, over the given transport or a new one."""
        transport = self.transport or GitHubTransport(
            self.url, identity=identity, timeout=self.timeout
        )
        return IdentityApi(transport, self.calls)


class IdentityApi:
    def __init__(self, transport: GitHubTransport, calls: IdentityCalls | None = None) -> None:
        self.transport = transport
        self.calls = calls

    def __repr__(self) -> str:
        return f"IdentityApi({self.transport.urls.rest!r})"

    async def aclose(self) -> None:
        await self.transport.aclose()

    # -- as the App (its JWT): the App's budget ------------------------------------------------

    async def app(self, auth: AppJwtAuth) -> Reply:
        return await self._call("GET", "/app", auth)

    async def installations(self, auth: AppJwtAuth) -> Reply:
        return await self._call("GET", "/app/installations?per_page=100", auth)

    async def mint(self, auth: AppJwtAuth, installation_id: int, body: dict[str, Any]) -> Reply:
        path = f"/app/installations/{installation_id}/access_tokens"
        return await self._call("POST", path, auth, body)

    async def hook_deliveries(
        self, auth: AppJwtAuth, per_page: int, cursor: str | None = None
    ) -> Reply:
        """One page of the App's webhook deliveries, newest first; the next page's cursor is in
        the ``Link`` header (``GET /app/hook/deliveries``)."""
        query: dict[str, str | int] = {"per_page": per_page}
        if cursor:
            query["cursor"] = cursor
        return await self._call("GET", f"/app/hook/deliveries?{urlencode(query)}", auth)

    async def redeliver_hook(self, auth: AppJwtAuth, delivery_id: int) -> Reply:
        """Ask GitHub to send delivery ``delivery_id`` again (202; it arrives later, under the
        same guid)."""
        path = f"/app/hook/deliveries/{int(delivery_id)}/attempts"
        return await self._call("POST", path, auth)

    # -- as the identity (``login``): its budget -----------------------------------------------

    async def revoke(self, auth: InstallationTokenAuth, login: str) -> Reply:
        return await self._call("DELETE", "/installation/token", auth, login=login)

    async def viewer(self, auth: CredentialAuth, login: str) -> Reply:
        body = {"query": VIEWER_QUERY}
        return await self._call(
            "POST", self.transport.urls.graphql, auth, body, login=login, graphql=True
        )

    async def user(self, auth: BotPatAuth, login: str) -> Reply:
        return await self._call("GET", "/user", auth, login=login)

    async def installation_repositories(
        self, auth: InstallationTokenAuth, page: int, login: str
    ) -> Reply:
        path = f"/installation/repositories?per_page=100&page={page}"
        return await self._call("GET", path, auth, login=login)

    async def _call(
        self,
        method: str,
        url: str,
        auth: CredentialAuth,
        json: Any = None,
        *,
        login: str | None = None,
        graphql: bool = False,
    ) -> Reply:
        async def send() -> httpx.Response:
            return await self.transport.asend(method, url, auth=auth, json=json)

        try:
            if login is None or self.calls is None:
                return Reply.of(await send())
            call = IdentityCall(login, method, url, graphql)
            return Reply.of(await self.calls.send(call, send))
        except CredentialRefused as exc:
            # The offline checks refuse a wrong or missing credential first; this is the backstop.
            raise IdentityBlocked.mismatch(str(exc)) from None
