"""A respx-backed stand-in for the few GitHub endpoints the identity layer calls.

It fakes only the HTTP boundary: our code runs for real against it. Every request is recorded
with the fingerprint of the credential it carried, so tests can count writes per identity.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import jwt
import respx
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

from agents.identity.tokens import fingerprint

READ_METHODS = {"GET", "HEAD"}


@dataclass
class Seen:
    method: str
    path: str
    credential_fp: str | None
    body: Any

    @property
    def is_write(self) -> bool:
        if self.method in READ_METHODS:
            return False
        if self.path.endswith("/graphql"):
            query = (self.body or {}).get("query", "")
            return "mutation" in query
        return True


@dataclass
class FakeGitHub:
    api_url: str
    app_key: RSAPrivateKey
    app_id: int = 1001
    installation_id: int = 2001
    slug: str = "swarm-reviewer"
    owner: str = "acme"
    installation_repos: tuple[str, ...] = ("widgets", "gadgets", "secret-sauce")
    token_lifetime: timedelta = timedelta(hours=1)
    now: datetime = field(default_factory=lambda: datetime(2026, 11, 29, 14, 0, tzinfo=UTC))
    # Knobs for misbehaving servers.
    extra_permissions: dict[str, str] = field(default_factory=dict)
    extra_repositories: tuple[str, ...] = ()
    viewer_login_override: str | None = None
    token_padding: str = ""
    # Bot-account PATs the fake knows: token -> login.
    pat_logins: dict[str, str] = field(default_factory=dict)
    pat_scopes: str = "repo"

    seen: list[Seen] = field(default_factory=list)
    minted: dict[str, dict[str, Any]] = field(default_factory=dict)
    revoked: list[str] = field(default_factory=list)
    _counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def mint_count(self) -> int:
        return len(self.minted)

    def writes_by(self, token_fp: str) -> list[Seen]:
        return [s for s in self.seen if s.credential_fp == token_fp and s.is_write]

    # -- wiring --------------------------------------------------------------------------------

    def install(self, router: respx.Router) -> None:
        base = self.api_url.rstrip("/")
        gql = (
            base[: -len("/api/v3")] + "/api/graphql"
            if base.endswith("/api/v3")
            else base + "/graphql"
        )
        router.get(f"{base}/app").mock(side_effect=self._app)
        router.post(url__regex=rf"^{base}/app/installations/(?P<iid>\d+)/access_tokens$").mock(
            side_effect=self._mint
        )
        router.delete(f"{base}/installation/token").mock(side_effect=self._revoke)
        router.get(url__startswith=f"{base}/installation/repositories").mock(
            side_effect=self._repos
        )
        router.get(f"{base}/user").mock(side_effect=self._user)
        router.post(gql).mock(side_effect=self._graphql)
        router.post(url__regex=rf"^{base}/repos/.*").mock(side_effect=self._write)

    def _record(self, request: httpx.Request) -> tuple[str | None, str | None]:
        auth = request.headers.get("authorization", "")
        scheme, _, cred = auth.partition(" ")
        body = json.loads(request.content) if request.content else None
        self.seen.append(
            Seen(request.method, request.url.path, fingerprint(cred) if cred else None, body)
        )
        return scheme.lower() or None, cred or None

    def _jwt_ok(self, scheme: str | None, cred: str | None) -> bool:
        if scheme != "bearer" or not cred:
            return False
        try:
            claims = jwt.decode(
                cred,
                self.app_key.public_key(),
                algorithms=["RS256"],
                options={"verify_exp": False, "verify_iat": False},
            )
        except jwt.PyJWTError:
            return False
        return bool(claims.get("iss") == str(self.app_id) and claims["exp"] - claims["iat"] <= 600)

    def _app(self, request: httpx.Request) -> httpx.Response:
        scheme, cred = self._record(request)
        if not self._jwt_ok(scheme, cred):
            return httpx.Response(401, json={"message": "A JSON web token could not be decoded"})
        return httpx.Response(200, json={"id": self.app_id, "slug": self.slug, "name": self.slug})

    def _mint(self, request: httpx.Request, iid: str) -> httpx.Response:
        scheme, cred = self._record(request)
        if not self._jwt_ok(scheme, cred):
            return httpx.Response(401, json={"message": "A JSON web token could not be decoded"})
        if int(iid) != self.installation_id:
            return httpx.Response(404, json={"message": "Not Found"})
        body = json.loads(request.content or b"{}")
        names = list(body.get("repositories") or self.installation_repos) + list(
            self.extra_repositories
        )
        perms = {**body.get("permissions", {}), "metadata": "read", **self.extra_permissions}
        token = f"ghs_{next(self._counter):04d}fakeInstallationToken{self.token_padding}"
        expires = self.now + self.token_lifetime
        self.minted[token] = {"permissions": perms, "repositories": names}
        return httpx.Response(
            201,
            json={
                "token": token,
                "expires_at": expires.isoformat().replace("+00:00", "Z"),
                "permissions": perms,
                "repository_selection": "selected",
                "repositories": [
                    {"id": i, "name": n, "full_name": f"{self.owner}/{n}"}
                    for i, n in enumerate(names)
                ],
            },
        )

    def _token_of(self, request: httpx.Request) -> str | None:
        scheme, cred = self._record(request)
        if scheme != "token" or cred is None:
            return None
        return cred

    def _live(self, token: str | None) -> bool:
        return token is not None and token in self.minted and token not in self.revoked

    def _revoke(self, request: httpx.Request) -> httpx.Response:
        token = self._token_of(request)
        if not self._live(token):
            return httpx.Response(401, json={"message": "Bad credentials"})
        assert token is not None
        self.revoked.append(token)
        return httpx.Response(204)

    def _repos(self, request: httpx.Request) -> httpx.Response:
        token = self._token_of(request)
        if not self._live(token):
            return httpx.Response(401, json={"message": "Bad credentials"})
        assert token is not None
        names = self.minted[token]["repositories"]
        return httpx.Response(
            200,
            json={
                "total_count": len(names),
                "repositories": [{"name": n, "full_name": f"{self.owner}/{n}"} for n in names],
            },
        )

    def _user(self, request: httpx.Request) -> httpx.Response:
        token = self._token_of(request)
        if token is not None and token in self.pat_logins:
            return httpx.Response(
                200,
                json={"login": self.pat_logins[token]},
                headers={"x-oauth-scopes": self.pat_scopes},
            )
        if self._live(token):
            return httpx.Response(403, json={"message": "Resource not accessible by integration"})
        return httpx.Response(401, json={"message": "Bad credentials"})

    def _graphql(self, request: httpx.Request) -> httpx.Response:
        token = self._token_of(request)
        if token is not None and token in self.pat_logins:
            return httpx.Response(200, json={"data": {"viewer": {"login": self.pat_logins[token]}}})
        if not self._live(token):
            return httpx.Response(401, json={"message": "Bad credentials"})
        login = self.viewer_login_override or f"{self.slug}[bot]"
        return httpx.Response(200, json={"data": {"viewer": {"login": login}}})

    def _write(self, request: httpx.Request) -> httpx.Response:
        self._record(request)
        return httpx.Response(201, json={})
