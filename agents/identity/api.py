"""The GitHub calls the identity layer makes, each as the credential it needs, over one transport.

App JWT: ``GET /app`` (the slug) and minting. Installation token: revoking itself, listing its
repositories, GraphQL ``viewer``. Bot PAT: ``GET /user``. Transport failures become identity-layer
errors: no answer is :class:`~agents.identity.errors.GitHubUnreachable`, a credential the auth
strategy will not send is a mismatch.
"""

from __future__ import annotations

from typing import Any

from agents.identity.errors import GitHubUnreachable, IdentityBlocked
from agents.transport import CredentialRefused
from agents.transport import GitHubUnreachable as NoAnswer
from agents.transport.auth import AppJwtAuth, CredentialAuth, InstallationTokenAuth
from agents.transport.client import GitHubTransport
from agents.transport.reply import Reply

VIEWER_QUERY = "query { viewer { login } }"


class IdentityApi:
    def __init__(self, transport: GitHubTransport) -> None:
        self.transport = transport

    def __repr__(self) -> str:
        return f"IdentityApi({self.transport.urls.rest!r})"

    def close(self) -> None:
        self.transport.close()

    def app(self, auth: AppJwtAuth) -> Reply:
        return self._call("GET", "/app", auth)

    def mint(self, auth: AppJwtAuth, installation_id: int, body: dict[str, Any]) -> Reply:
        return self._call("POST", f"/app/installations/{installation_id}/access_tokens", auth, body)

    def revoke(self, auth: InstallationTokenAuth) -> Reply:
        return self._call("DELETE", "/installation/token", auth)

    def viewer(self, auth: CredentialAuth) -> Reply:
        return self._call("POST", self.transport.urls.graphql, auth, {"query": VIEWER_QUERY})

    def user(self, auth: CredentialAuth) -> Reply:
        return self._call("GET", "/user", auth)

    def installation_repositories(self, auth: InstallationTokenAuth, page: int) -> Reply:
        return self._call("GET", f"/installation/repositories?per_page=100&page={page}", auth)

    def _call(self, method: str, url: str, auth: CredentialAuth, json: Any = None) -> Reply:
        try:
            return Reply.of(self.transport.send(method, url, auth=auth, json=json))
        except NoAnswer as exc:
            raise GitHubUnreachable(str(exc)) from None
        except CredentialRefused as exc:
            # The offline checks refuse a wrong or missing credential first; this is the backstop.
            raise IdentityBlocked.mismatch(str(exc)) from None
