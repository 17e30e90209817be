"""GitHub's App manifest flow, as github.com runs it, so ``swarm app create`` runs offline.

1. A page posts a form field ``manifest`` (JSON) to ``/settings/apps/new`` (an App of the
   signed-in person, here the sandbox's maintainer) or ``/organizations/ORG/settings/apps/new``,
   with ``?state=``. The sandbox shows what the App will ask for and a name to edit, and its
   "Create GitHub App" button makes the App: a new RSA key, a bot user, a webhook secret when the
   manifest has a webhook URL.
2. The browser is sent to the manifest's ``redirect_url`` with ``code`` and ``state``.
3. ``POST /app-manifests/{code}/conversions`` (no credential; the code is good once, for an hour)
   answers the App with its ``pem`` and ``webhook_secret``.
4. ``/apps/SLUG/installations/new`` installs it on its owner's repositories (all, or those
   ticked) with the permissions it registered, then sends the browser to its ``setup_url`` with
   ``installation_id``, ``setup_action=install`` and the ``state`` the install link carried.

Manifests are checked as GitHub checks them: a homepage ``url`` and a ``redirect_url``, known
permission levels, and each event only with the permission it needs.
"""

from __future__ import annotations

import html
import json
import re
import secrets
from typing import Any
from urllib.parse import parse_qs, urlencode

from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from sandbox.github import render
from sandbox.github.model import App, Installation, Registration
from sandbox.github.seed import MAINTAINER
from sandbox.github.state import SandboxState

CODE_LIFETIME_S = 3600.0
NAME_CHARS = 34
LEVELS = frozenset({"read", "write", "admin"})
# The repository permission each event needs (at least read) before an App may subscribe.
EVENT_PERMISSIONS = {
    "issues": "issues",
    "issue_comment": "issues",
    "pull_request": "pull_requests",
    "pull_request_review": "pull_requests",
    "pull_request_review_comment": "pull_requests",
    "pull_request_review_thread": "pull_requests",
    "push": "contents",
}
_STYLE = "body{font:15px/1.45 system-ui,sans-serif;max-width:44em;margin:2em auto;padding:0 1em}"


class ManifestRefused(ValueError):
    """What GitHub would say about the manifest on its page."""


def _e(text: object) -> str:
    return html.escape("" if text is None else str(text))


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    text = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(title)}</title>"
        f"<style>{_STYLE}</style></head><body>{body}</body></html>"
    )
    return HTMLResponse(text, status_code=status)


def _with_query(url: str, **params: str) -> str:
    return url + ("&" if "?" in url else "?") + urlencode(params)


async def _form(request: Request) -> dict[str, list[str]]:
    return parse_qs((await request.body()).decode("utf-8", "replace"))


def check_manifest(text: str) -> dict[str, Any]:
    """The manifest as GitHub reads it, or :class:`ManifestRefused` saying what is wrong."""
    try:
        manifest = json.loads(text)
    except ValueError:
        raise ManifestRefused("the manifest is not JSON") from None
    if not isinstance(manifest, dict):
        raise ManifestRefused("the manifest must be a JSON object")
    for required in ("url", "redirect_url"):
        if not isinstance(manifest.get(required), str) or not manifest[required]:
            raise ManifestRefused(f"{required} can't be blank")
    permissions = manifest.get("default_permissions") or {}
    if not isinstance(permissions, dict):
        raise ManifestRefused("default_permissions must be an object")
    for key, level in permissions.items():
        if not re.fullmatch(r"[a-z_]+", str(key)) or level not in LEVELS:
            raise ManifestRefused(f"default_permissions: {key}: {level!r} is not a level")
    for event in manifest.get("default_events") or []:
        needed = EVENT_PERMISSIONS.get(event)
        if needed is None:
            raise ManifestRefused(f"default_events: {event!r} is not an event")
        if needed not in permissions:
            raise ManifestRefused(f"Default events unsupported: {event} (needs {needed})")
    hook = manifest.get("hook_attributes") or {}
    if hook and not isinstance(hook, dict):
        raise ManifestRefused("hook_attributes must be an object")
    return manifest


def create_app(state: SandboxState, owner: str, name: str, manifest: dict[str, Any]) -> str:
    """Make the App the manifest describes, owned by ``owner``; its one-time code."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    if not slug or len(name) > NAME_CHARS:
        raise ManifestRefused(f"Name must be 1 to {NAME_CHARS} characters")
    hook = manifest.get("hook_attributes") or {}
    hook_url = hook.get("url") if hook.get("active", True) else None
    registration = Registration(
        permissions={
            str(k): str(v) for k, v in (manifest.get("default_permissions") or {}).items()
        },
        events=[str(e) for e in manifest.get("default_events") or []],
        hook_url=str(hook_url) if hook_url else None,
        webhook_secret=secrets.token_hex(20) if hook_url else None,
        redirect_url=str(manifest["redirect_url"]),
        setup_url=str(manifest["setup_url"]) if manifest.get("setup_url") else None,
        client_secret=secrets.token_hex(20),
    )
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with state.lock:
        if any(a.slug == slug for a in state.apps.values()):
            raise ManifestRefused("Name is already in use")
        bot = state.add_user(f"{slug}[bot]", type="Bot")
        app_id = state.next_id()
        state.apps[app_id] = App(
            app_id,
            slug,
            name,
            owner,
            key,
            bot,
            registration,
            list(registration.events),
            dict(registration.permissions),
        )
        code = secrets.token_hex(16)
        state.manifest_codes[code] = (app_id, state.clock.now() + CODE_LIFETIME_S)
    return code


def convert(state: SandboxState, urls: render.Urls, code: str) -> dict[str, Any] | None:
    """The App behind ``code`` with its secrets, once; None for a used, lapsed or unknown code."""
    with state.lock:
        found = state.manifest_codes.pop(code, None)
        if found is None or found[1] < state.clock.now():
            return None
        app = state.apps[found[0]]
        owner = state.users[app.owner_login]
        reg = app.registration
        assert reg is not None
        body = render.app(urls, app, owner, state.clock.now())
        body |= {
            "permissions": dict(reg.permissions),
            "events": list(reg.events),
            "installations_count": 0,
            "client_secret": reg.client_secret,
            "webhook_secret": reg.webhook_secret,
            "pem": state.private_key_pem(app.id),
        }
        return body


def install(state: SandboxState, app: App, repos: list[str] | None) -> Installation:
    """Install ``app`` on its owner's repositories (``None``: all of them)."""
    reg = app.registration
    with state.lock:
        ids = None if repos is None else {state.repo(name).id for name in repos}
        inst = Installation(
            state.next_id(),
            app.id,
            app.owner_login,
            dict(reg.permissions if reg else {}),
            repository_ids=ids,
        )
        state.installations[inst.id] = inst
        return inst


def _confirm_page(owner: str, manifest: dict[str, Any], raw: str, state_param: str) -> str:
    permissions = manifest.get("default_permissions") or {}
    rows = "".join(f"<li>{_e(k)}: {_e(v)}</li>" for k, v in sorted(permissions.items()))
    events = ", ".join(_e(e) for e in manifest.get("default_events") or []) or "none"
    hook = (manifest.get("hook_attributes") or {}).get("url")
    return (
        f"<h1>Create GitHub App for {_e(owner)}</h1>"
        "<form method='post' action='/settings/apps/new/confirm'>"
        f"<p><label>GitHub App name <input name='name' value='{_e(manifest.get('name'))}'>"
        "</label></p>"
        f"<input type='hidden' name='manifest' value='{_e(raw)}'>"
        f"<input type='hidden' name='state' value='{_e(state_param)}'>"
        f"<input type='hidden' name='owner' value='{_e(owner)}'>"
        f"<h2>Repository permissions</h2><ul>{rows}</ul>"
        f"<h2>Events</h2><p>{events}</p><p>Webhook: {_e(hook or 'none')}</p>"
        "<button type='submit'>Create GitHub App</button></form>"
    )


def _install_page(state: SandboxState, app: App, state_param: str) -> str:
    with state.lock:
        names = sorted(
            r.full_name for r in state.repos.values() if r.owner.login == app.owner_login
        )
    boxes = "".join(
        f"<li><label><input type='checkbox' name='repository' value='{_e(n)}'> {_e(n)}</label></li>"
        for n in names
    )
    return (
        f"<h1>Install {_e(app.name)}</h1><p>on {_e(app.owner_login)}</p>"
        f"<form method='post' action='/apps/{_e(app.slug)}/installations'>"
        "<p><label><input type='radio' name='selection' value='all' checked> All repositories"
        "</label></p><p><label><input type='radio' name='selection' value='selected'> Only "
        f"select repositories</label></p><ul>{boxes}</ul>"
        f"<input type='hidden' name='state' value='{_e(state_param)}'>"
        "<button type='submit'>Install</button></form>"
    )


def add_manifest_pages(app: FastAPI, state: SandboxState, rest_prefixes: tuple[str, ...]) -> None:
    """The web pages of the flow, and the conversion under every REST prefix."""

    async def new_app(request: Request, org: str | None = None) -> HTMLResponse:
        owner = org or MAINTAINER
        with state.lock:
            account = state.users.get(owner)
        if org is not None and (account is None or account.type != "Organization"):
            return _page("Not Found", f"<h1>No organization {_e(org)}</h1>", 404)
        raw = ((await _form(request)).get("manifest") or [""])[0]
        try:
            manifest = check_manifest(raw)
        except ManifestRefused as exc:
            return _page(
                "Invalid manifest", f"<h1>Invalid GitHub App manifest</h1><p>{_e(exc)}</p>", 422
            )
        body = _confirm_page(owner, manifest, raw, request.query_params.get("state", ""))
        return _page("Create GitHub App", body)

    async def new_org_app(request: Request, org: str) -> HTMLResponse:
        return await new_app(request, org)

    async def confirm(request: Request) -> Response:
        form = await _form(request)

        def one(name: str) -> str:
            return (form.get(name) or [""])[0]

        try:
            manifest = check_manifest(one("manifest"))
            code = create_app(state, one("owner"), one("name").strip(), manifest)
        except ManifestRefused as exc:
            return _page(
                "Could not create the App",
                f"<h1>Could not create the App</h1><p>{_e(exc)}</p>",
                422,
            )
        target = _with_query(str(manifest["redirect_url"]), code=code, state=one("state"))
        return RedirectResponse(target, status_code=302)

    async def conversion(request: Request, code: str) -> JSONResponse:
        web = str(request.base_url).rstrip("/")
        found = convert(state, render.Urls(api=web, web=web), code)
        if found is None:
            return JSONResponse({"message": "Not Found", "status": "404"}, status_code=404)
        return JSONResponse(found, status_code=201)

    def _app(slug: str) -> App | None:
        with state.lock:
            return next((a for a in state.apps.values() if a.slug == slug), None)

    async def install_page(request: Request, slug: str) -> HTMLResponse:
        found = _app(slug)
        if found is None:
            return _page("Not Found", f"<h1>No App {_e(slug)}</h1>", 404)
        return _page(
            f"Install {found.name}",
            _install_page(state, found, request.query_params.get("state", "")),
        )

    async def installed(request: Request, slug: str) -> Response:
        found = _app(slug)
        if found is None:
            return _page("Not Found", f"<h1>No App {_e(slug)}</h1>", 404)
        form = await _form(request)
        chosen = (form.get("selection") or ["all"])[0] == "selected"
        selected = (form.get("repository") or []) if chosen else None
        inst = install(state, found, selected)
        reg = found.registration
        if reg is None or reg.setup_url is None:
            return _page("Installed", f"<h1>{_e(found.name)} is installed</h1>")
        params = {"installation_id": str(inst.id), "setup_action": "install"}
        if (form.get("state") or [""])[0]:
            params["state"] = (form.get("state") or [""])[0]
        return RedirectResponse(_with_query(reg.setup_url, **params), status_code=302)

    app.add_api_route("/settings/apps/new", new_app, methods=["POST"])
    app.add_api_route("/organizations/{org}/settings/apps/new", new_org_app, methods=["POST"])
    app.add_api_route("/settings/apps/new/confirm", confirm, methods=["POST"])
    app.add_api_route("/apps/{slug}/installations/new", install_page, methods=["GET"])
    app.add_api_route("/apps/{slug}/installations", installed, methods=["POST"])
    for prefix in rest_prefixes:
        app.add_api_route(
            f"{prefix}/app-manifests/{{code}}/conversions", conversion, methods=["POST"]
        )
