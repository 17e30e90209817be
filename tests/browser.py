"""Headless Chromium (Debian's ``chromium``) driven over the DevTools protocol, for UI tests.

Only what the tests need: open a page, wait until its rendered text holds what a person would
look for, read that text, save a screenshot. The browser runs with a fresh profile and without
any of its background network traffic, so it only ever talks to the loopback server under test.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from websockets.sync.client import ClientConnection, connect

CHROMIUM = "/usr/bin/chromium"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--remote-debugging-port=0",
)
START_TIMEOUT_S = 60.0
PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child before chromium starts: end it if the test process dies without its
    teardown (killed by a timeout), instead of leaving a browser behind on a shared machine."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass  # not Linux: teardown still ends it


def chromium_path() -> str | None:
    """Debian's chromium, else whatever ``chromium`` is on PATH."""
    if os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    return shutil.which("chromium")


class PageTimeout(AssertionError):
    """The page did not show what was expected in time; the message holds what it did show."""


class Browser:
    """One Chromium process; ``page(url)`` opens a tab. Use as a context manager."""

    def __init__(self, profile_dir: Path, width: int = 1440, height: int = 900) -> None:
        self.profile_dir = profile_dir
        self.width, self.height = width, height
        self.process: subprocess.Popen[bytes] | None = None
        self.ws: ClientConnection | None = None
        self._ids = itertools.count(1)
        self._tabs: list[str] = []

    def __enter__(self) -> Browser:
        path = chromium_path()
        if path is None:
            raise RuntimeError("chromium is not installed (apt-get install -y chromium)")
        self.profile_dir.mkdir(parents=True, exist_ok=True)
        cmd = [path, *FLAGS, f"--user-data-dir={self.profile_dir}"]
        cmd += [f"--window-size={self.width},{self.height}", "about:blank"]
        self.process = subprocess.Popen(
            cmd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        self.ws = connect(self._devtools_url(), max_size=64 * 2**20, open_timeout=30)
        return self

    def _devtools_url(self) -> str:
        assert self.process is not None and self.process.stderr is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        seen: list[str] = []
        while time.monotonic() < deadline:
            line = self.process.stderr.readline().decode(errors="replace")
            if not line and self.process.poll() is not None:
                break
            seen.append(line)
            if line.startswith("DevTools listening on "):
                return line.split(" on ", 1)[1].strip()
        raise RuntimeError("chromium did not start:\n" + "".join(seen[-20:]))

    def __exit__(self, *exc_info: object) -> None:
        if self.ws is not None:
            self.ws.close()
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """One DevTools command; events that arrive meanwhile are dropped."""
        assert self.ws is not None
        message_id = next(self._ids)
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        self.ws.send(json.dumps(message))
        while True:
            reply = json.loads(self.ws.recv(timeout=60))
            if reply.get("id") != message_id:
                continue
            if "error" in reply:
                raise RuntimeError(f"{method}: {reply['error']}")
            return dict(reply.get("result") or {})

    def page(self, url: str, password: str | None = None) -> Page:
        """A new tab at ``url``; with ``password``, logged in to the Prefect UI of its server
        first, as a person does once on its login page (the UI keeps the base64 of the
        password in the origin's local storage and sends it as HTTP basic auth)."""
        if password is not None:
            self._log_in(url, password)
        return self._open(url)

    def _log_in(self, url: str, password: str) -> None:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        page = self._open(f"{origin}/ui-settings")
        deadline = time.monotonic() + START_TIMEOUT_S
        while page.evaluate("location.origin") != origin:
            if time.monotonic() > deadline:
                raise PageTimeout(f"{origin}/ui-settings did not open")
            time.sleep(0.1)
        page.evaluate(f"localStorage.setItem('prefect-password', btoa({json.dumps(password)}))")
        page.close()

    def close_tabs(self) -> None:
        """Close every tab opened so far. A tab left open keeps rendering (a Prefect UI page
        polls its API), and kept Chromium's GPU process busy for the rest of the session."""
        while self._tabs:
            self.close_tab(self._tabs[-1])

    def close_tab(self, target: str) -> None:
        """Close one tab opened here, unless it was closed already."""
        if target not in self._tabs:
            return
        self._tabs.remove(target)
        # A page may have closed itself (or its test closed it).
        with contextlib.suppress(RuntimeError):
            self.call("Target.closeTarget", targetId=target)

    def _open(self, url: str) -> Page:
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self._tabs.append(target)
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        page = Page(self, session, target)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session,
            width=self.width,
            height=self.height,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.call("Page.enable", session)
        self.call("Page.navigate", session, url=url)
        return page


class Page:
    """One tab. ``text()`` is what a person reads on it (``innerText``), not the HTML."""

    def __init__(self, browser: Browser, session: str, target: str) -> None:
        self.browser = browser
        self.session = session
        self.target = target

    def close(self) -> None:
        """Close this tab now, not when its test ends: a Prefect UI page polls its API and
        renders as long as it is open (the quickstart's demo link, left open for the six
        minutes of the rest of its walk-through, kept Chromium's GPU process on a whole core
        of CI's two: 200 s of CPU in one run)."""
        self.browser.close_tab(self.target)

    def evaluate(self, expression: str) -> Any:
        result = self.browser.call(
            "Runtime.evaluate", self.session, expression=expression, returnByValue=True
        )
        return (result.get("result") or {}).get("value")

    def text(self) -> str:
        try:
            return str(self.evaluate("document.body ? document.body.innerText : ''") or "")
        except RuntimeError:
            return ""  # between two documents (a form was sent, a redirect followed)

    def scroll_to_end(self) -> None:
        """Scroll the window and every scrolled box to its end, as a person reading on does:
        long lists (a run's logs) render and load more only as they come into view."""
        self.evaluate(
            "(() => { for (const el of document.querySelectorAll('*')) {"
            " if (el.scrollHeight > el.clientHeight + 4) el.scrollTop = el.scrollHeight; }"
            " window.scrollTo(0, document.body.scrollHeight); })()"
        )

    def wait_for_text(
        self, wanted: Iterable[str], timeout: float = 60.0, scroll: bool = False
    ) -> str:
        """Poll the rendered text until every string in ``wanted`` is on the page (scrolling
        to the end between polls if ``scroll``)."""
        wanted = list(wanted)
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            if scroll:
                self.scroll_to_end()
            text = self.text()
            if all(w in text for w in wanted):
                return text
            time.sleep(0.25)
        missing = [w for w in wanted if w not in text]
        raise PageTimeout(f"page never showed {missing!r}; it showed:\n{text[:4000]}")

    def scroll_to_text(self, label: str) -> None:
        """Bring the first element whose own text holds ``label`` to the top of the view."""
        self.evaluate(
            "(() => { const want = " + json.dumps(label) + ";"
            " const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);"
            " while (walker.nextNode()) { if (walker.currentNode.textContent.includes(want)) {"
            " walker.currentNode.parentElement.scrollIntoView({block: 'start'}); return; } } })()"
        )

    def click_text(self, label: str) -> None:
        """Click the first link, button or tab whose visible text is exactly ``label``."""
        found = self.evaluate(
            "(() => { const want = " + json.dumps(label) + ";"
            " const els = [...document.querySelectorAll('a,button,[role=tab],li,span')];"
            " const el = els.find(e => e.innerText && e.innerText.trim() === want);"
            " if (!el) return false; el.click(); return true; })()"
        )
        if not found:
            raise PageTimeout(f"no clickable {label!r} on the page:\n{self.text()[:2000]}")

    def screenshot(self, path: Path, scale: float = 0.6) -> Path:
        """A PNG of the viewport, scaled down so it stays small enough for the docs."""
        width, height = self.browser.width, self.browser.height
        clip = {"x": 0, "y": 0, "width": width, "height": height, "scale": scale}
        data = self.browser.call("Page.captureScreenshot", self.session, format="png", clip=clip)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data["data"]))
        return path
