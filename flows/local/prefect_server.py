"""One local Prefect server per data directory, started in the background on first use.

Without ``PREFECT_API_URL`` Prefect would start a temporary server inside every process (about
30 s each on this machine, and its history gone with the process). Instead the CLI starts one
``prefect server start`` in the background, with its home (database, logs) in
``<data dir>/prefect``, analytics off, and every later command reuses it: ``swarm run``, the demo
and ``swarm server start`` (the UI) all talk to the same server, so the UI shows what ran.

``server.json`` in that home says which process serves which port. A file lock makes two
commands that start at once share one server. The server gets an environment built from an
allow-list: no ``SWARM_`` setting, no API key or token reaches it.

Any local user can reach a loopback port, and Prefect's server has no credential unless it is
given one: another user read every run's parameters, logs and artifacts, wrote runs, and created
flow runs of the deployments ``swarm serve`` served (run then with this user's keys). So the
server requires an auth string (``PREFECT_SERVER_API_AUTH_STRING``: HTTP basic auth on every API
route but the health probe, and on its websockets), made once per data directory and kept 0600
in ``<home>/auth`` (the home is 0700); every client of ours gets it as ``PREFECT_API_AUTH_STRING``,
the UI asks for it once as its password. And a client proves who listens before it sends it:
the port's listening socket must be this user's (``/proc/net/tcp``), or nothing is sent.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path

from agents.errors import EXIT_FAILED, SwarmError
from agents.private_files import make_folders, private_file, private_folder
from agents.processes import pid_alive
from flows.local import server_template

PREFERRED_PORT = 4200
STATE_FILE = "server.json"
LOG_FILE = "server.log"
LOCK_FILE = "server.lock"
AUTH_FILE = "auth"
AUTH_ENV = "PREFECT_API_AUTH_STRING"
SERVER_AUTH_ENV = "PREFECT_SERVER_API_AUTH_STRING"
# /proc/net/tcp state of a listening socket.
LISTENING = "0A"
START_TIMEOUT_S = 240.0
START_ATTEMPTS = 3
STOP_TIMEOUT_S = 15.0
# Unused this long (no connection, no database write), the server stops; the next command
# starts it again in a few seconds.
IDLE_STOP_S = 2 * 3600.0
# What the server process may see of ours: locale, paths, and Prefect's own settings.
SERVER_ENV_NAMES = ("PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "USER", "LOGNAME")
SERVER_ENV_PREFIXES = ("LC_", "PREFECT_")
SERVER_ENV_DENIED = (
    "PREFECT_API_URL",
    "PREFECT_API_KEY",
    "PREFECT_PROFILE",
    "PREFECT_HOME",
    AUTH_ENV,
    SERVER_AUTH_ENV,
)
OFFLINE = {"DO_NOT_TRACK": "1", "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
# Prefect's client reuses an idle connection for up to 25 s, its server closes one after 5 s, so
# a request can meet a connection the server is closing and be retried seconds later. A server
# that keeps connections longer than any client reuses them never closes one under a request.
KEEPALIVE = {"PREFECT_SERVER_API_KEEPALIVE_TIMEOUT": "65"}


class ServerStartError(SwarmError, RuntimeError):
    """The local server did not come up; the message says where its log is. A failure of the
    machine, not of anything the person typed: exit status 1."""

    exit_code = EXIT_FAILED


class LoopbackServer:
    """A Prefect server on this machine's loopback interface, known by its port."""

    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        return f"{self.url}/api"


@dataclass(frozen=True)
class LocalServer(LoopbackServer):
    """A running local Prefect server."""

    pid: int
    port: int
    home: Path


def prefect_home(data_dir: Path) -> Path:
    return data_dir.resolve() / "prefect"


def auth_file(home: Path) -> Path:
    """Where the auth string of the server of ``home`` is kept (0600 in the 0700 home)."""
    return home / AUTH_FILE


def auth_string(home: Path) -> str:
    """The auth string of the server of ``home``, made on first use. Only this user can read
    it: the file is created 0600 (a copy loosened since is tightened, another user's refused)."""
    path = auth_file(home)
    private_file(path, "the local Prefect server's auth string")
    found = path.read_text(encoding="ascii", errors="replace").strip()
    if found:
        return found
    made = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(made + "\n")
    return made


def password_hint(home: Path) -> str:
    """How a person opens the UI of the server of ``home``: where its password is."""
    return f"the UI asks once per browser for the password kept in {auth_file(home)}"


def auth_header(auth: str) -> dict[str, str]:
    """HTTP basic auth as Prefect's server reads it: the base64 of the auth string alone."""
    return {"Authorization": "Basic " + base64.b64encode(auth.encode()).decode("ascii")}


NO_TABLE = -1


def listener_uid(port: int) -> int | None:
    """The uid that owns the socket listening on 127.0.0.1:``port`` (Linux ``/proc/net/tcp``);
    None when nobody listens there, ``NO_TABLE`` where the system has no such table."""
    wanted = f"0100007F:{port:04X}"
    try:
        lines = Path("/proc/net/tcp").read_text(encoding="ascii").splitlines()[1:]
    except OSError:
        return NO_TABLE
    for line in lines:
        fields = line.split()
        if len(fields) > 7 and fields[1] == wanted and fields[3] == LISTENING:
            return int(fields[7])
    return None


def _listener_is_mine(port: int) -> bool:
    """Whether this user listens on ``port``. Where the system cannot tell (no ``/proc``: not
    Linux), the port is taken as ours: the server still refuses everyone without the auth
    string, and only a squatter on a stopped server's port could collect it there."""
    found = listener_uid(port)
    return found in (os.geteuid(), NO_TABLE)


def status(home: Path) -> LocalServer | None:
    """The server recorded in ``home`` if it is alive and answers; a stale record is removed."""
    recorded = _read_state(home)
    if recorded is None:
        return None
    if pid_alive(recorded.pid) and _serves(recorded):
        return recorded
    if not pid_alive(recorded.pid):
        (home / STATE_FILE).unlink(missing_ok=True)
    return None


def ensure_running(
    home: Path, *, timeout: float = START_TIMEOUT_S, idle_stop_s: float = IDLE_STOP_S
) -> tuple[LocalServer, bool]:
    """The server of ``home``, started when none runs; ``True`` when this call started it.
    A server started here stops by itself once unused for ``idle_stop_s``, or when ``home``
    is deleted (:mod:`flows.local.server_keeper`)."""
    # A missing data directory is made 0700 here; an existing one is the callers' to check with
    # private_folder (they have its path before resolving, so they know whether it is a link).
    try:
        make_folders(home.parent)
    except OSError as exc:
        raise ServerStartError(f"{home.parent} cannot be created ({exc.strerror})") from None
    private_folder(home, "the local Prefect server's folder")
    with _locked(home):
        running = status(home)
        if running is not None:
            return running, False
        recorded = _read_state(home)
        if recorded is not None and pid_alive(recorded.pid):
            # Alive but not answering: an earlier start that hangs. Replace it.
            _terminate(recorded.pid)
        return _start(home, timeout, idle_stop_s), True


def stop(home: Path) -> LocalServer | None:
    """Stop the server of ``home``; returns what was stopped, or None when nothing ran."""
    if not home.is_dir():
        return None
    with _locked(home):
        recorded = _read_state(home)
        if recorded is None:
            return None
        if pid_alive(recorded.pid):
            _terminate(recorded.pid)
        (home / STATE_FILE).unlink(missing_ok=True)
        return recorded


def server_environment(
    host: Mapping[str, str], home: Path, port: int = PREFERRED_PORT, auth: str | None = None
) -> dict[str, str]:
    """The server's environment: an allow-list of the host's, plus its home, its own
    address and its auth string, offline.

    ``prefect server start --port`` moves the API but not the UI: the UI asks the server's
    ``/ui-settings`` where its API is, and without ``PREFECT_UI_API_URL`` that answer names
    ``PREFECT_SERVER_API_PORT``, 4200. The UI of a server on another port then showed "Can't
    connect to Server API", or, with another Prefect server on 4200, that server's runs. So the
    server is told its own address, over anything the host's environment says.
    """
    env = {
        key: value
        for key, value in host.items()
        if (key in SERVER_ENV_NAMES or key.startswith(SERVER_ENV_PREFIXES))
        and key not in SERVER_ENV_DENIED
    }
    env.update(OFFLINE)
    env = {**KEEPALIVE, **env}  # an operator's own keep-alive setting wins
    env["PREFECT_HOME"] = str(home)
    env["PREFECT_SERVER_API_HOST"] = "127.0.0.1"
    env["PREFECT_SERVER_API_PORT"] = str(port)
    env["PREFECT_UI_API_URL"] = f"http://127.0.0.1:{port}/api"
    env["PREFECT_UI_URL"] = f"http://127.0.0.1:{port}"
    if auth is not None:
        env[SERVER_AUTH_ENV] = auth
    return env


def _start(home: Path, timeout: float, idle_stop_s: float) -> LocalServer:
    """Start a server; when another process takes its port first, try again on a free one.
    A new data directory's server starts from the migrated database kept for this Prefect
    version (:mod:`flows.local.server_template`), or keeps its own as that copy."""
    deadline = time.monotonic() + timeout
    template = server_template.template_path(os.environ)
    creates = server_template.applies(home, os.environ)
    from_copy = server_template.seed(home, template, os.environ)
    for attempt in range(START_ATTEMPTS):
        port = _free_port(preferred=attempt == 0)
        server = _launch(home, port, deadline, idle_stop_s, from_copy)
        if server is not None:
            if creates and not from_copy:
                server_template.keep(home, template)
            _write_state(server)
            return server
        if from_copy:
            # Whatever stopped it, the next attempt starts as if no copy were kept, and the
            # copy is dropped: a copy a server cannot start from must not stop every new one.
            server_template.drop(home, template)
            from_copy = {}
    raise ServerStartError(f"the local Prefect server did not start; see {home / LOG_FILE}")


def _launch(
    home: Path, port: int, deadline: float, idle_stop_s: float, settings: Mapping[str, str]
) -> LocalServer | None:
    """One start on ``port``, with ``settings`` over the server's environment: the server
    once it answers as ours, None when it exited early."""
    command = [sys.executable, "-m", "flows.local.server_keeper", str(home), str(port)]
    command += [str(idle_stop_s), "--", sys.executable, "-m", "prefect", "server", "start"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--analytics-off"]
    with (home / LOG_FILE).open("ab") as log:
        process = subprocess.Popen(
            command,
            env={**server_environment(os.environ, home, port, auth_string(home)), **settings},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=home,
            # Ctrl-C on the command that started it leaves it running; the keeper and the
            # server share this new process group, which stopping it signals.
            start_new_session=True,
        )
    server = LocalServer(pid=process.pid, port=port, home=home)
    while not _serves(server):
        if process.poll() is not None:
            return None  # e.g. the port was taken between choosing and binding it
        if time.monotonic() > deadline:
            _terminate(process.pid)
            raise ServerStartError(
                f"the local Prefect server did not start in time; see {home / LOG_FILE}"
            )
        time.sleep(0.25)
    return server


def _free_port(*, preferred: bool) -> int:
    """4200 (the port people know the Prefect UI by) when it is free, else any free port."""
    for port in (PREFERRED_PORT, 0) if preferred else (0,):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(sock.getsockname()[1])
    raise ServerStartError("no free port on 127.0.0.1 for the local Prefect server")


def _serves(server: LocalServer) -> bool:
    """Whether the server at ``server.url`` answers and is this home's (not another Prefect
    server that happens to hold the port). The auth string goes only to a listener of this
    user's: another user who took the port after ours stopped gets nothing."""
    if not _listener_is_mine(server.port) or not auth_file(server.home).is_file():
        return False
    settings_url = f"{server.api_url}/admin/settings"
    asked = urllib.request.Request(  # noqa: S310
        settings_url, headers=auth_header(auth_string(server.home))
    )
    try:
        with urllib.request.urlopen(asked, timeout=2) as reply:  # noqa: S310
            settings = json.loads(reply.read())
    except (OSError, ValueError):
        return False
    if not isinstance(settings, dict) or settings.get("home") != str(server.home):
        return False
    return _closed(settings_url)


def _closed(url: str) -> bool:
    """Whether ``url`` turns away a caller without the auth string (a server started before
    servers had one answers anyone: it is replaced, not reused)."""
    try:
        with urllib.request.urlopen(url, timeout=2):  # noqa: S310
            return False
    except urllib.error.HTTPError as refused:
        return refused.code == HTTPStatus.UNAUTHORIZED
    except OSError:
        return False


def _terminate(pid: int) -> None:
    """SIGTERM the server's process group, SIGKILL what is left after a grace period."""
    for sig, grace in ((signal.SIGTERM, STOP_TIMEOUT_S), (signal.SIGKILL, 5.0)):
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
        deadline = time.monotonic() + grace
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not pid_alive(pid):
            return


def _read_state(home: Path) -> LocalServer | None:
    try:
        data = json.loads((home / STATE_FILE).read_text(encoding="utf-8"))
        return LocalServer(pid=int(data["pid"]), port=int(data["port"]), home=home)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_state(server: LocalServer) -> None:
    path = server.home / STATE_FILE
    path.write_text(json.dumps({"pid": server.pid, "port": server.port}), encoding="utf-8")


@contextmanager
def _locked(home: Path) -> Iterator[None]:
    import fcntl

    with (home / LOCK_FILE).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def use_local_prefect(data_dir: Path, *, force: bool = False) -> str:
    """Point Prefect at the local server of ``data_dir`` (started when needed) unless the person
    configured a Prefect API; ``force`` ignores their configuration (the offline demo).
    Returns the API URL in use."""
    if not force:
        from flows.local.env import configured_api_url

        chosen = configured_api_url()
        if chosen:
            return chosen
    from flows.local.warm_client import start as start_warm_server

    private_folder(data_dir, "the data directory (SWARM_DATA_DIR)")
    server, _ = ensure_running(prefect_home(data_dir))
    start_warm_server(server.home, server.pid)
    os.environ["PREFECT_API_URL"] = server.api_url
    os.environ[AUTH_ENV] = auth_string(server.home)
    os.environ.pop("PREFECT_API_KEY", None)
    return server.api_url
