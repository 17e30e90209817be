"""Which credential a request carries: small strategies githubkit and httpx both understand.

Each strategy reads its credential from a provider at every request, so a re-minted token (or a
re-signed JWT) is used without rebuilding anything, and refuses to send a credential of the wrong
kind: an App identity never sends a personal token, a JWT never goes out as a token. A missing
credential is a :class:`CredentialRefused` before anything is sent, never a fallback to another.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import ClassVar, Self

import httpx
from githubkit.auth.base import BaseAuthStrategy
from pydantic import SecretStr

from agents.transport.credentials import BOT_KINDS, BOT_PAT_KINDS, TokenKind, describe, token_kind
from agents.transport.errors import CredentialRefused

CredentialProvider = Callable[[], "SecretStr | str | None"]


class CredentialAuth(BaseAuthStrategy, httpx.Auth):
    """``Authorization: <scheme> <credential>`` for one identity; ``repr`` never shows it."""

    scheme: ClassVar[str] = "token"
    kinds: ClassVar[frozenset[TokenKind]]
    expected: ClassVar[str]

    def __init__(self, provider: CredentialProvider, identity: str) -> None:
        self._provider = provider
        self.identity = identity

    @classmethod
    def fixed(cls, credential: SecretStr, identity: str) -> Self:
        return cls(lambda: credential, identity)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(identity={self.identity!r})"

    def get_auth_flow(self, github: object) -> httpx.Auth:
        return self

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = self._header()
        yield request

    def _header(self) -> str:
        credential = self._provider()
        value = credential.get_secret_value() if isinstance(credential, SecretStr) else credential
        if not value:
            raise CredentialRefused(f"no token for identity {self.identity}")
        kind = token_kind(value)
        if kind not in self.kinds:
            shown = "a token of unknown kind" if kind == "unknown" else f"a {describe(kind)}"
            raise CredentialRefused(
                f"identity {self.identity}: the credential is {shown}, not {self.expected}"
            )
        return f"{self.scheme} {value}"


class InstallationTokenAuth(CredentialAuth):
    """An App installation token: revoking it, verifying a worker of an App identity."""

    kinds = frozenset({"installation"})
    expected = "an installation token (ghs_)"


class BotPatAuth(CredentialAuth):
    """A dedicated bot account's personal access token."""

    kinds = BOT_PAT_KINDS
    expected = "a PAT (ghp_ or github_pat_)"


class BotTokenAuth(CredentialAuth):
    """A worker's credential, whichever kind its identity is: what the gateway sends."""

    kinds = BOT_KINDS
    expected = "an installation token or a bot PAT"


class AppJwtAuth(CredentialAuth):
    """The App's own JWT (``GET /app``, minting). A GitHub token is never sent as a bearer."""

    scheme = "Bearer"
    kinds = frozenset({"unknown"})
    expected = "an App JWT"


class ManifestCodeAuth(CredentialAuth):
    """No credential at all: the one GitHub call made without one, turning the App manifest
    flow's one-time code into the new App (the code in the path is what authorises it)."""

    kinds = frozenset()
    expected = "no credential"

    def __init__(self) -> None:
        super().__init__(lambda: None, "manifest flow")

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        yield request
