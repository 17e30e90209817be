"""The page ``swarm app create`` serves on this machine's loopback interface for GitHub's App
manifest flow, and the two addresses GitHub sends the browser back to.

``/`` lists the Apps to make. Each has a form that posts its manifest to GitHub's "new App" page
(``state``: a random value of its own); GitHub sends the browser back to ``/created`` with a
one-time ``code`` and that ``state``, and after the App is installed to ``/installed/IDENTITY``
with the ``installation_id``. A ``state`` this page did not hand out is refused, so no other page
can feed it a code.

Any local user can reach a loopback port, and a web page in the browser can reach it through a
name that resolves to 127.0.0.1 (DNS rebinding). So every address of the page lies under an
unguessable token (only the terminal that started it prints it, and GitHub sends the browser
back to it), a request whose ``Host`` is not ``127.0.0.1:PORT`` is refused, and each App takes
one code and one installation, once: a second ``/created`` for an App already made is refused
(another user once swapped their own App, and its key, in after the person's). What to do with a
code (turn it into the App, write its key) is the caller's:
``on_code`` and ``on_installed`` run in the page's thread, and what they raise is shown on the
page. Nothing secret is ever part of the page: not the code, not the key, not the webhook secret.
"""

from __future__ import annotations

import html
import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

_STYLE = (
    "body{font:15px/1.45 system-ui,sans-serif;max-width:46em;margin:2em auto;padding:0 1em}"
    "section{border:1px solid #d0d7de;border-radius:6px;padding:.6em 1em;margin:1em 0}"
    ".error{color:#cf222e}"
)


@dataclass
class PendingApp:
    """One App of the flow, as far as it got."""

    identity: str
    name: str
    manifest: dict[str, Any]
    state: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    # A code was taken for this App (it is made, or being made): no second one is.
    code_taken: bool = False
    slug: str | None = None
    install_url: str | None = None
    installation_id: int | None = None
    error: str | None = None

    @property
    def done(self) -> bool:
        return self.installation_id is not None


class ManifestPage:
    """The loopback server; ``url`` is where a person (or the test's browser) starts."""

    def __init__(
        self,
        new_app_url: str,
        apps: list[PendingApp],
        on_code: Callable[[PendingApp, str], None],
        on_installed: Callable[[PendingApp, int], None],
    ) -> None:
        self.new_app_url = new_app_url
        self.apps = apps
        self.on_code = on_code
        self.on_installed = on_installed
        self.changed = threading.Condition()
        self.seen_done = False
        self.token = secrets.token_urlsafe(24)
        self._taking = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def host(self) -> str:
        """The one ``Host`` header the page answers."""
        return f"127.0.0.1:{self._server.server_address[1]}"

    @property
    def url(self) -> str:
        """The page's address, its token included: what only the terminal prints."""
        return f"http://{self.host}/{self.token}"

    def __enter__(self) -> ManifestPage:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def wait(self, timeout: float) -> None:
        """Until something changed (a code, an installation) or ``timeout`` seconds."""
        with self.changed:
            self.changed.wait(timeout)

    def linger(self, timeout: float) -> None:
        """Until the browser has seen the page with every App done, or ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while not self.seen_done and time.monotonic() < deadline:
                self.changed.wait(max(0.0, deadline - time.monotonic()))

    def _tell(self) -> None:
        with self.changed:
            self.changed.notify_all()

    # -- what the browser sees -----------------------------------------------------------------

    def render(self) -> str:
        sections = [self._section(app) for app in self.apps]
        if all(app.done for app in self.apps):
            self.seen_done = True
            self._tell()
            sections.append(
                "<section id='done'><h2>All done</h2><p>Every App is made and installed. Back "
                "in the terminal, swarm checks them (<code>swarm verify</code>).</p></section>"
            )
        return (
            "<!doctype html><html><head><meta charset='utf-8'><title>swarm: GitHub Apps</title>"
            f"<style>{_STYLE}</style></head><body><h1>GitHub Apps for swarm</h1>"
            + "".join(sections)
            + "</body></html>"
        )

    def _section(self, app: PendingApp) -> str:
        name = html.escape(app.name)
        head = f"<section id='app-{html.escape(app.identity)}'><h2>{name}</h2>"
        error = f"<p class='error'>{html.escape(app.error)}</p>" if app.error else ""
        if app.done:
            body = f"<p>Made as {html.escape(str(app.slug))} and installed.</p>"
        elif app.slug and app.install_url:
            link = html.escape(f"{app.install_url}?state={quote(app.state)}")
            body = (
                f"<p>Made as {html.escape(app.slug)}. Now install it on the repositories the "
                f"swarm may work on:</p><p><a href='{link}'>Install {name}</a></p>"
            )
        else:
            permissions = ", ".join(
                f"{k}: {v}" for k, v in app.manifest.get("default_permissions", {}).items()
            )
            target = html.escape(f"{self.new_app_url}?state={quote(app.state)}")
            manifest = html.escape(json.dumps(app.manifest))
            hook = app.manifest.get("hook_attributes", {}).get("url")
            events = ", ".join(app.manifest.get("default_events", []))
            webhook = f"webhook {hook}, events {events}" if hook else "no webhook"
            body = (
                f"<p>For identity <code>{html.escape(app.identity)}</code>; asks for "
                f"{html.escape(permissions)}; {html.escape(webhook)}.</p>"
                f"<form method='post' action='{target}'>"
                f"<input type='hidden' name='manifest' value='{manifest}'>"
                f"<button type='submit'>Create {name} on GitHub</button></form>"
            )
        return head + error + body + "</section>"

    # -- the requests --------------------------------------------------------------------------

    def _by_state(self, state: str) -> PendingApp | None:
        given = state.encode()  # bytes: a non-ASCII str would make compare_digest raise
        return next((a for a in self.apps if secrets.compare_digest(a.state.encode(), given)), None)

    def _within(self, path: str) -> str | None:
        """``path`` below the page's token (``/`` for the page itself), None when it is not
        under the token."""
        segments = path.split("/", 2)  # "", the token, the rest
        if len(segments) < 2 or not secrets.compare_digest(
            segments[1].encode(), self.token.encode()
        ):
            return None
        return "/" + (segments[2] if len(segments) == 3 else "")

    def handle(
        self, path: str, query: dict[str, list[str]], host: str | None = None
    ) -> tuple[int, str, str | None]:
        """(status, page, where to send the browser next) for one GET."""
        if host != self.host:
            return 421, "<p>Open the address the terminal printed.</p>", None
        inner = self._within(path)
        if inner is None:
            return 404, "<p>Not found: open the address the terminal printed.</p>", None
        home = f"/{self.token}/"
        state = (query.get("state") or [""])[0]
        if inner == "/":
            return 200, self.render(), None
        if inner == "/created":
            app = self._by_state(state)
            code = (query.get("code") or [""])[0]
            if app is None or not code:
                return 400, "<p>Unknown or missing state: start again from the page.</p>", None
            with self._taking:
                taken, app.code_taken = app.code_taken, True
            if taken:
                return 409, "<p>This App was made already: one code is taken, once.</p>", None
            made = app
            self._run(app, lambda: self.on_code(made, code))
            return 303, "", home
        if inner.startswith("/installed/"):
            app = self._by_state(state)
            raw = (query.get("installation_id") or [""])[0]
            if app is None or not raw.isdigit() or app.slug is None:
                return 400, "<p>Unknown state or installation.</p>", None
            if app.done and app.installation_id != int(raw):
                return 409, "<p>This App was installed already.</p>", None
            installed = app
            self._run(app, lambda: self.on_installed(installed, int(raw)))
            return 303, "", home
        return 404, "<p>Not found</p>", None

    def _run(self, app: PendingApp, step: Callable[[], None]) -> None:
        try:
            step()
            app.error = None
        except Exception as exc:  # shown on the page and in the terminal, never a traceback
            app.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if app.slug is None:
                app.code_taken = False  # nothing was made of that code: the person may retry
        self._tell()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        page = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                status, body, location = page.handle(
                    parts.path, parse_qs(parts.query), self.headers.get("Host")
                )
                self.send_response(status)
                if location is not None:
                    self.send_header("Location", location)
                data = body.encode("utf-8")
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # the request line holds the one-time code: never printed

        return Handler
