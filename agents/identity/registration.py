"""A GitHub App made from a manifest: the code turned into the App, and where it got installed.

GitHub's manifest flow ends with a one-time ``code`` (valid an hour) that ``POST
/app-manifests/{code}/conversions`` turns into the new App: its id and slug, its private key, its
webhook secret. That call carries no credential (the code is one), so the code is never named in a
message. The App's installations are then read as the App itself (its JWT), and one installation's
repositories with a token minted for that alone (``metadata: read``) and revoked at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import SecretStr

from agents.identity.api import IdentityApi
from agents.identity.app_jwt import AppJwtSigner
from agents.identity.errors import IdentityError
from agents.transport import GitHubUnreachable
from agents.transport.auth import AppJwtAuth, InstallationTokenAuth, ManifestCodeAuth
from agents.transport.client import GitHubTransport
from agents.transport.reply import Reply

LIST_TOKEN = {"permissions": {"metadata": "read"}}


class RegistrationFailed(IdentityError):
    """GitHub would not turn the code into an App, or would not say where the App is installed."""


@dataclass(frozen=True)
class RegisteredApp:
    """The App GitHub created from the manifest, with the secrets it hands out once."""

    id: int
    slug: str
    name: str
    html_url: str
    owner_login: str
    owner_type: str
    pem: SecretStr
    webhook_secret: SecretStr | None
    permissions: dict[str, str] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)

    @property
    def install_url(self) -> str:
        return f"{self.html_url.rstrip('/')}/installations/new"


@dataclass(frozen=True)
class Installation:
    id: int
    account_login: str


async def convert_code(api_url: str, code: str) -> RegisteredApp:
    """The App behind a manifest flow's ``code``. A used, expired or unknown code is refused."""
    transport = GitHubTransport(api_url, identity="manifest flow")
    try:
        # The code is a credential for this one call: sent in the path, never in a message.
        url = f"{transport.urls.rest}/app-manifests/{code}/conversions"
        reply = Reply.of(await transport.asend("POST", url, auth=ManifestCodeAuth()))
    except GitHubUnreachable as exc:
        raise GitHubUnreachable(
            f"cannot reach {transport.urls.rest} to turn the manifest's code into the App: "
            f"{exc.origin}",
            kind=exc.kind,
            origin=exc.origin,
        ) from None
    finally:
        await transport.aclose()
    if reply.status != 201 or not isinstance(reply.body, dict):
        raise RegistrationFailed(
            f"GitHub did not create the App from the manifest ({reply.status} "
            f"{reply.github_message()}); a code is good once, for an hour: start again"
        )
    body = reply.body
    owner = body.get("owner")
    owner = owner if isinstance(owner, dict) else {}
    secret = body.get("webhook_secret")
    return RegisteredApp(
        id=int(body["id"]),
        slug=str(body["slug"]),
        name=str(body.get("name") or body["slug"]),
        html_url=str(body.get("html_url") or ""),
        owner_login=str(owner.get("login") or ""),
        owner_type=str(owner.get("type") or "User"),
        pem=SecretStr(str(body["pem"])),
        webhook_secret=SecretStr(str(secret)) if secret else None,
        permissions={str(k): str(v) for k, v in (body.get("permissions") or {}).items()},
        events=[str(e) for e in body.get("events") or ()],
    )


class AppAccess:
    """Calls as a newly made App: where it is installed, and on which repositories."""

    def __init__(self, api_url: str, app: RegisteredApp) -> None:
        self._api = IdentityApi(GitHubTransport(api_url, identity=app.slug))
        signer = AppJwtSigner(app.id, app.pem, identity_name=app.slug)
        self._jwt = AppJwtAuth(signer.jwt, app.slug)
        self.app = app

    async def aclose(self) -> None:
        await self._api.aclose()

    async def installations(self) -> list[Installation]:
        reply = await self._api.installations(self._jwt)
        if not reply.ok or not isinstance(reply.body, list):
            raise RegistrationFailed(
                f"GitHub would not list the installations of {self.app.slug} "
                f"({reply.status} {reply.github_message()})"
            )
        found = []
        for item in reply.body:
            account = item.get("account") if isinstance(item, dict) else None
            login = account.get("login") if isinstance(account, dict) else ""
            found.append(Installation(int(item["id"]), str(login or "")))
        return found

    async def repositories(self, installation_id: int) -> list[str]:
        """``OWNER/NAME`` of every repository the installation covers."""
        minted = await self._api.mint(self._jwt, installation_id, dict(LIST_TOKEN))
        token = minted.field("token")
        if not minted.ok or not isinstance(token, str):
            raise RegistrationFailed(
                f"GitHub would not mint a token for installation {installation_id} of "
                f"{self.app.slug} ({minted.status} {minted.github_message()})"
            )
        auth = InstallationTokenAuth.fixed(SecretStr(token), self.app.slug)
        login = f"{self.app.slug}[bot]"
        names: list[str] = []
        try:
            for page in range(1, 100):
                listed = await self._api.installation_repositories(auth, page, login)
                repos = listed.field("repositories") if listed.ok else None
                if not isinstance(repos, list):
                    break
                names += [str(r["full_name"]) for r in repos if isinstance(r, dict)]
                if len(repos) < 100:
                    break
        finally:
            await self._api.revoke(auth, login)
        return sorted(names)
