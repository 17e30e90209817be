"""What ``swarm app create`` does: plan the Apps, serve the manifest page, keep what GitHub hands
back (each key as soon as its App exists, so an interrupted flow loses nothing), and check the
result with ``swarm verify``.

Files, in the secrets folder (0700), each 0600: the default identity's key as
``app-private-key.pem`` (the name the settings look for), another identity's as
``IDENTITY-app-private-key.pem``, the webhook secret as ``webhook-secret``, and ``github-app.env``:
the ``SWARM_*`` settings of every App made, to load with ``set -a; . secrets/github-app.env; set
+a``. Nothing secret is printed. A key is never written over: an existing file (``--force``) is
moved aside to ``NAME.bak-TIME`` first, and a key file that appeared meanwhile is refused.
"""

from __future__ import annotations

import asyncio
import html
import os
import time
import webbrowser
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agents.permissions import DEFAULT_CEILING
from agents.settings.model import DEFAULT_IDENTITY, ConfigError

if TYPE_CHECKING:
    from agents.identity.registration import Installation, RegisteredApp
    from flows.cli.app_manifest import AppPlan
    from flows.local.manifest_page import ManifestPage, PendingApp

GITHUB_COM = "https://github.com"
POLL_S = 3.0
LINGER_S = 10.0
EXIT_INTERRUPTED = 130
SETTINGS_FILE = "github-app.env"
WEBHOOK_SECRET_FILE = "webhook-secret"


@dataclass(frozen=True)
class AppRequest:
    github_url: str
    org: str | None
    identities: tuple[str, ...]
    webhook_url: str | None
    maintainer: str | None
    name_prefix: str | None
    secrets_dir: Path
    force: bool
    open_browser: bool

    @property
    def web_url(self) -> str:
        return self.github_url.rstrip("/")

    @property
    def api_url(self) -> str:
        """github.com's API is api.github.com; an Enterprise Server's is under ``/api/v3``."""
        if self.web_url == GITHUB_COM:
            return "https://api.github.com"
        return f"{self.web_url}/api/v3"

    @property
    def new_app_url(self) -> str:
        if self.org:
            return f"{self.web_url}/organizations/{self.org}/settings/apps/new"
        return f"{self.web_url}/settings/apps/new"


def key_file_name(identity: str) -> str:
    if identity == DEFAULT_IDENTITY:
        return "app-private-key.pem"
    return f"{identity}-app-private-key.pem"


def setting_names(identity: str) -> tuple[str, str, str]:
    """The App id, key file and installation id settings of ``identity``."""
    if identity == DEFAULT_IDENTITY:
        return "SWARM_APP_ID", "SWARM_APP_PRIVATE_KEY_FILE", "SWARM_APP_INSTALLATION_ID"
    prefix = f"SWARM_IDENTITIES__{identity.upper()}__"
    return f"{prefix}APP_ID", f"{prefix}PRIVATE_KEY_FILE", f"{prefix}INSTALLATION_ID"


def write_secret(path: Path, text: str) -> None:
    """``text`` into ``path``, readable by this user only, whatever the file was before."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    path.chmod(0o600)


def write_new_secret(path: Path, text: str) -> None:
    """``text`` into a new file ``path`` (0600); an existing file is never written over (it may
    be the only copy of a private key): that is a :class:`ConfigError`."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise ConfigError(f"{path} is there already; it is left as it is") from None
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def move_aside(path: Path) -> Path | None:
    """An existing ``path`` renamed to ``path.bak-TIME`` (kept, never deleted); its new name."""
    if not path.exists():
        return None
    aside = path.with_name(f"{path.name}.bak-{time.strftime('%Y%m%dT%H%M%S')}")
    path.rename(aside)
    return aside


@dataclass
class AppFiles:
    """The secrets folder as the flow fills it."""

    folder: Path
    api_url: str
    maintainer: str | None
    app_ids: dict[str, int] = field(default_factory=dict)
    installations: dict[str, int] = field(default_factory=dict)
    repos: list[str] = field(default_factory=list)
    webhook: bool = False
    # Identities whose ceiling is not the default (the writer's "writing"): written as a setting,
    # or the writer's first token would be refused for contents: write.
    ceilings: dict[str, str] = field(default_factory=dict)

    def paths(self, plans: list[AppPlan]) -> list[Path]:
        found = [self.folder / key_file_name(p.identity) for p in plans]
        found.append(self.folder / SETTINGS_FILE)
        if any(p.webhook_url for p in plans):
            found.append(self.folder / WEBHOOK_SECRET_FILE)
        return found

    def save_app(self, identity: str, app: RegisteredApp) -> None:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.folder.chmod(0o700)
        write_new_secret(self.folder / key_file_name(identity), app.pem.get_secret_value())
        if app.webhook_secret is not None:
            write_secret(self.folder / WEBHOOK_SECRET_FILE, app.webhook_secret.get_secret_value())
            self.webhook = True
        self.app_ids[identity] = app.id
        if self.maintainer is None and app.owner_type == "User":
            self.maintainer = app.owner_login  # the person who made it, on their own account
        self.write_settings()

    def write_settings(self) -> Path:
        lines = [f"SWARM_GITHUB_API_URL={self.api_url}"]
        for identity, app_id in self.app_ids.items():
            app_setting, key_setting, installation_setting = setting_names(identity)
            lines.append(f"{app_setting}={app_id}")
            lines.append(f"{key_setting}={(self.folder / key_file_name(identity)).resolve()}")
            if identity in self.installations:
                lines.append(f"{installation_setting}={self.installations[identity]}")
            if identity in self.ceilings and identity != DEFAULT_IDENTITY:
                ceiling = self.ceilings[identity]
                lines.append(f"SWARM_IDENTITIES__{identity.upper()}__CEILING={ceiling}")
        if self.maintainer:
            lines.append(f"SWARM_MAINTAINER_LOGIN={self.maintainer}")
        if self.repos:
            lines.append(f"SWARM_REPOS={','.join(self.repos)}")
        if self.webhook:
            lines.append(
                f"SWARM_WEBHOOK_SECRET_FILE={(self.folder / WEBHOOK_SECRET_FILE).resolve()}"
            )
        path = self.folder / SETTINGS_FILE
        write_secret(path, "\n".join(lines) + "\n")
        return path


def _plans(request: AppRequest) -> list[AppPlan]:
    """The Apps to make; every mistake in the request named at once."""
    from agents.roles.files import load_roles
    from agents.settings.model import load_settings
    from flows.cli.app_manifest import plan_apps

    roles = load_roles(load_settings().roles_dir)
    named = sorted({r.identity.lower() for r in roles.values()})
    problems = [
        f"--identity: no role acts as {name!r} (the roles name: {', '.join(named)})"
        for name in request.identities
        if name.lower() not in named
    ]
    if request.webhook_url and not request.webhook_url.startswith(("https://", "http://")):
        problems.append("--webhook-url: must start with https:// (or http:// for a test)")
    if not request.web_url.startswith(("https://", "http://")):
        problems.append("--github-url: must start with https://")
    if request.org and not (request.maintainer or os.environ.get("SWARM_MAINTAINER_LOGIN")):
        problems.append(
            "--maintainer: needed for an organization's Apps (your login, which the swarm must "
            "never act as)"
        )
    prefix = request.name_prefix or request.org or "swarm"
    plans = plan_apps(
        roles, prefix=prefix, webhook_url=request.webhook_url, only=request.identities
    )
    files = AppFiles(request.secrets_dir, request.api_url, None)
    there = [str(p) for p in files.paths(plans) if p.exists()]
    if there and not request.force:
        problems.append(f"already there: {', '.join(there)} (move them away, or --force)")
    if problems:
        if len(problems) > 1:
            problems = ["\n  ".join([f"{len(problems)} problems:", *problems])]
        raise ConfigError(problems[0])
    return plans


def create_apps(request: AppRequest) -> int:
    from flows.cli.console import say
    from flows.local.manifest_page import ManifestPage

    plans = _plans(request)
    for path in AppFiles(request.secrets_dir, request.api_url, None).paths(plans):
        aside = move_aside(path)  # only with --force: _plans refused files that are there
        if aside is not None:
            say(f"kept {path} as {aside}")
    files = AppFiles(
        request.secrets_dir,
        request.api_url,
        request.maintainer or os.environ.get("SWARM_MAINTAINER_LOGIN"),
        ceilings={p.identity: p.ceiling for p in plans if p.ceiling != DEFAULT_CEILING},
    )
    made: dict[str, RegisteredApp] = {}
    page = ManifestPage(
        request.new_app_url,
        [],
        on_code=lambda app, code: _made(request, files, made, app, code),
        on_installed=lambda app, installation: _installed(files, app, installation),
    )
    page.apps.extend(_pending(plans, page.url, request.web_url))
    with page:
        # The address holds the page's token: printed here, for this terminal only.
        say(
            f"open {page.url}/ in your browser: a button for each of the {len(plans)} App(s), "
            "then install each"
        )
        if request.open_browser:
            webbrowser.open(opener_file(request.secrets_dir, f"{page.url}/").as_uri())
        try:
            _wait(request, page, made, files)
            code = _finish(request, files, made)
            # The browser may still be on its way back from GitHub: let it see the last page.
            page.linger(LINGER_S)
        except KeyboardInterrupt:
            _tell_interrupted(page, files)
            return EXIT_INTERRUPTED
    return code


def opener_file(folder: Path, url: str) -> Path:
    """A 0600 page in the 0700 secrets folder that sends the browser on to ``url``: the browser
    is started with this file's name, not the page's address, because another user can read a
    process's command line (``ps``) and the address holds the page's token."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)
    path = folder / "open-app-create.html"
    target = html.escape(url, quote=True)
    write_secret(path, f"<!doctype html><meta http-equiv='refresh' content='0;url={target}'>\n")
    return path


def _pending(plans: list[AppPlan], base: str, homepage: str) -> list[PendingApp]:
    from flows.local.manifest_page import PendingApp

    return [
        PendingApp(
            p.identity,
            p.name,
            p.manifest(
                homepage=homepage,
                redirect_url=f"{base}/created",
                setup_url=f"{base}/installed/{p.identity}",
            ),
        )
        for p in plans
    ]


def _made(
    request: AppRequest, files: AppFiles, made: dict[str, RegisteredApp], app: PendingApp, code: str
) -> None:
    from agents.identity.registration import convert_code
    from flows.cli.console import say

    registered = asyncio.run(convert_code(request.api_url, code))
    files.save_app(app.identity, registered)
    made[app.identity] = registered
    app.slug, app.install_url = registered.slug, registered.install_url
    key = files.folder / key_file_name(app.identity)
    say(f"made {registered.slug} (App {registered.id}) for identity {app.identity!r}; key in {key}")
    say(f"  install it: {registered.install_url}")


def _installed(files: AppFiles, app: PendingApp, installation_id: int) -> None:
    from flows.cli.console import say

    if app.installation_id == installation_id:
        return
    app.installation_id = installation_id
    files.installations[app.identity] = installation_id
    files.write_settings()
    say(f"installed {app.slug}: installation {installation_id}")


def _wait(
    request: AppRequest, page: ManifestPage, made: dict[str, RegisteredApp], files: AppFiles
) -> None:
    """Until every App is made and installed. GitHub sends the browser back after installing;
    the App's installations are also asked for, in case it was installed another way."""
    while not all(app.done for app in page.apps):
        page.wait(POLL_S)
        for app in page.apps:
            registered = made.get(app.identity)
            if registered is None or app.done:
                continue
            found = asyncio.run(_installations(request.api_url, registered))
            if found:
                _installed(files, app, found[0].id)


async def _installations(api_url: str, registered: RegisteredApp) -> list[Installation]:
    from agents.identity.registration import AppAccess

    access = AppAccess(api_url, registered)
    try:
        return await access.installations()
    finally:
        await access.aclose()


async def _repositories(api_url: str, registered: RegisteredApp, installation: int) -> list[str]:
    from agents.identity.registration import AppAccess

    access = AppAccess(api_url, registered)
    try:
        return await access.repositories(installation)
    finally:
        await access.aclose()


def _tell_interrupted(page: ManifestPage, files: AppFiles) -> None:
    from flows.cli.console import say

    say("interrupted:")
    for app in page.apps:
        if app.done:
            say(f"  {app.slug}: made and installed")
        elif app.slug:
            say(f"  {app.slug}: made, not installed yet: {app.install_url}")
        else:
            say(f"  {app.name}: not made")
    if files.app_ids:
        say(f"  kept: {files.folder / SETTINGS_FILE} and the keys beside it")


def _finish(request: AppRequest, files: AppFiles, made: dict[str, RegisteredApp]) -> int:
    from flows.cli.console import say
    from flows.cli.demo import load_env_file
    from flows.cli.identity_actions import verify_identities

    covered: set[str] | None = None
    for identity, registered in made.items():
        installation = files.installations[identity]
        repos = set(asyncio.run(_repositories(request.api_url, registered, installation)))
        covered = repos if covered is None else covered & repos
    files.repos = sorted(covered or ())
    settings = files.write_settings()
    say(f"settings: {settings} (load them with: set -a; . {settings}; set +a)")
    if files.repos:
        say(f"repositories every App is installed on: {', '.join(files.repos)}")
    load_env_file(settings)
    return verify_identities()
