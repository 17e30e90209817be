"""Attacks on a confined run, one guard each: a hostile test script, run as a repository's test
command (``python3 hostile.py``) through the real runner and a real ``bwrap``, goes after the
network, the GitHub token, the model key, the sealing key, the store, the files outside its copy
and the host's processes, and fails.

Each test was seen to fail with its guard weakened in ``agents/confine`` (named in its
docstring). ``tests/security/test_sandboxed_code.py`` runs one search for everything at once;
these say which guard stops which attack.

The planted secrets hold a needle that reaches the script in two halves (``probe.json``), so the
only whole copies are the planted ones. The script reports one line of hex JSON: the run's output
is redacted, and a token it printed would come back as ``[REDACTED:...]``, a leak the test
could not see.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import sqlite3
import subprocess
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents.confine import Limits, run_confined
from agents.confine.launch import HOST_USER
from tests.bwrap import require_bwrap

# What every script starts with: its config, the needles, a reader that never raises, and the
# report, printed as hex so that redaction cannot hide what it found.
PRELUDE = r"""
import errno, json, os, socket, sys

cfg = json.load(open("probe.json"))
needles = [(head + tail).encode() for head, tail in cfg["needles"]]
report = {}

def holds(data):
    return any(needle in data for needle in needles)

def read(path, limit=1 << 20):
    try:
        with open(path, "rb") as handle:
            return handle.read(limit)
    except OSError:
        return None

def failure(exc):
    return errno.errorcode.get(exc.errno or 0, type(exc).__name__)
"""
SYSTEM_PYTHON = "/usr/bin/python3"
REPORT = '\nprint("REPORT " + json.dumps(report).encode().hex())\n'


@pytest.fixture(autouse=True)
def _bwrap() -> None:
    require_bwrap()


def needle(what: str) -> str:
    return f"pl4nted-{what}-{uuid.uuid4().hex[:12]}"


def attack(work: Path, body: str, *, needles: tuple[str, ...] = (), **cfg: Any) -> dict[str, Any]:
    """Run ``body`` (after :data:`PRELUDE`) as the test command of the working copy ``work``;
    what the script reported."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "hostile.py").write_text(PRELUDE + textwrap.dedent(body) + REPORT)
    halves = [[value[:6], value[6:]] for value in needles]
    (work / "probe.json").write_text(json.dumps({"needles": halves, **cfg}))
    run = run_confined(work, ["python3", "hostile.py"], Limits(wall_seconds=30))
    assert run.exit_code == 0, run.output
    line = next(line for line in run.output.splitlines() if line.startswith("REPORT "))
    found: dict[str, Any] = json.loads(bytes.fromhex(line.removeprefix("REPORT ")))
    return found


class Listener:
    """A socket of the host that counts what reaches it: TCP connections or UDP datagrams."""

    def __init__(self, kind: socket.SocketKind, address: tuple[str, int] | str) -> None:
        family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
        self.socket = socket.socket(family, kind)
        self.socket.bind(address)
        if kind == socket.SOCK_STREAM:
            self.socket.listen(8)
        self.socket.setblocking(False)
        self.port: int = 0 if isinstance(address, str) else self.socket.getsockname()[1]

    def reached(self) -> int:
        count = 0
        while True:
            try:
                if self.socket.type == socket.SOCK_STREAM:
                    self.socket.accept()[0].close()
                else:
                    self.socket.recv(64)
            except BlockingIOError:
                return count
            count += 1


@pytest.fixture
def listeners() -> Iterator[list[Listener]]:
    made: list[Listener] = []
    yield made
    for listener in made:
        listener.socket.close()


def host_address() -> str:
    """A non-loopback address of this host (the one its default route leaves by); a
    documentation address, reachable by nobody, when it has none."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("203.0.113.1", 9))  # a UDP connect sends nothing
            address: str = probe.getsockname()[0]
        except OSError:
            return "198.51.100.1"
    return address if not address.startswith("127.") else "198.51.100.1"


@pytest.fixture
def victim() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A process of the host run by the very host user bwrap runs as (the one user a sandbox
    that shared our pid namespace could read and signal), with a token in its environment and
    its command line, as a tool given one would have. Yields it and its token."""
    token = "ghs_" + needle("victim").replace("-", "") + "VictimToken000000000"
    uid, gid = HOST_USER if HOST_USER else (None, None)
    process = subprocess.Popen(
        # The system's python: the host user may not reach ours (as root, it is nobody).
        [SYSTEM_PYTHON, "-c", "import time; time.sleep(60)", f"--token={token}"],
        env={"GITHUB_TOKEN": token},
        cwd="/",
        user=uid,
        group=gid,
        extra_groups=[] if HOST_USER else None,
        start_new_session=True,
    )
    try:
        yield process, token
    finally:
        process.kill()
        process.wait()


NETWORK = r"""
def tcp(host, port):
    try:
        socket.create_connection((host, port), timeout=2).close()
        return "connected"
    except OSError as exc:
        return failure(exc)

report["loopback"] = tcp("127.0.0.1", cfg["port"])
report["host_address"] = tcp(cfg["host_address"], cfg["port"])
try:
    socket.getaddrinfo("pypi.org", 443)
    report["dns"] = "resolved"
except OSError as exc:
    report["dns"] = type(exc).__name__
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
    try:
        udp.sendto(b"from the sandbox", ("127.0.0.1", cfg["udp_port"]))
    except OSError:
        pass
# An abstract socket name is not a file: only the network namespace keeps it apart.
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as unix:
    try:
        unix.connect("\0" + cfg["abstract"])
        report["abstract"] = "connected"
    except OSError as exc:
        report["abstract"] = failure(exc)
"""


def test_the_run_reaches_no_socket_of_the_host_on_loopback_another_address_or_dns(
    tmp_path: Path, listeners: list[Listener]
) -> None:
    """Guard: the network namespace (``--unshare-all``); fails with ``--share-net`` added."""
    # On every address of the host: reachable on loopback and on its own non-loopback address.
    tcp = Listener(socket.SOCK_STREAM, ("0.0.0.0", 0))
    udp = Listener(socket.SOCK_DGRAM, ("127.0.0.1", 0))
    abstract = f"swarm-isolation-{uuid.uuid4().hex}"
    unix = Listener(socket.SOCK_STREAM, "\0" + abstract)
    listeners += [tcp, udp, unix]
    seen = attack(
        tmp_path / "work",
        NETWORK,
        port=tcp.port,
        host_address=host_address(),
        udp_port=udp.port,
        abstract=abstract,
    )
    assert seen["loopback"] == "ECONNREFUSED"  # its own loopback, where nothing listens
    assert seen["host_address"] in {"ENETUNREACH", "EHOSTUNREACH"}
    assert seen["dns"] == "gaierror"
    assert seen["abstract"] == "ECONNREFUSED"
    assert (tcp.reached(), udp.reached(), unix.reached()) == (0, 0, 0)


ENVIRON = r"""
report["environ"] = dict(os.environ)
report["holds"] = holds(repr(sorted(os.environ.items())).encode())
report["home"] = sorted(os.listdir(os.path.expanduser("~")))
"""


def test_the_run_inherits_no_token_key_or_swarm_setting_and_gets_a_fresh_empty_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guard: bwrap started with an empty environment and ``--clearenv``; fails with both the
    parent's environment passed to bwrap and ``--clearenv`` dropped (either alone holds)."""
    secret = needle("env")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".netrc").write_text(f"machine github.com login x password {secret}\n")
    planted = {
        "GITHUB_TOKEN": f"ghs_{secret}",
        "GH_TOKEN": f"ghs_{secret}",
        "ANTHROPIC_API_KEY": f"sk-ant-api03-{secret}",
        "SWARM_SEALING_KEY": f"{secret}-sealing-key",
        "SWARM_APP_PRIVATE_KEY": f"-----BEGIN RSA PRIVATE KEY-----\n{secret}\n",
        "SWARM_APP_PRIVATE_KEY_FILE": str(tmp_path / "secrets" / "app-private-key.pem"),
        "SWARM_STORE_URL": f"postgresql+psycopg://swarm:{secret}@127.0.0.1:5432/swarm",
        "SWARM_DATA_DIR": str(tmp_path / ".swarm"),
        "SWARM_WEBHOOK_SECRET_FILE": str(tmp_path / "secrets" / "webhook-secret"),
        "HOME": str(home),
    }
    for name, value in planted.items():
        monkeypatch.setenv(name, value)
    seen = attack(tmp_path / "work", ENVIRON, needles=(secret,))
    environ: dict[str, str] = seen["environ"]
    assert environ["CI"] == "true"  # the dump is the sandbox's whole environment
    assert not seen["holds"]
    assert not {name for name in environ if name.startswith(("SWARM_", "GH_", "GITHUB_"))}
    assert "ANTHROPIC_API_KEY" not in environ
    dumped = json.dumps(environ)
    assert not [value for value in planted.values() if value in dumped]
    assert environ["HOME"] == "/home/sandbox"
    assert seen["home"] == []


PROCESSES = r"""
pids = {p for p in os.listdir("/proc") if p.isdigit()}
report["pids"] = sorted(pids, key=int)
found, read_any = [], False
for pid in sorted(pids | {str(cfg["parent_pid"]), str(cfg["victim_pid"]), "1"}):
    for part in ("environ", "cmdline"):
        data = read(f"/proc/{pid}/{part}")
        read_any = read_any or data is not None
        if data is not None and holds(data):
            found.append(f"/proc/{pid}/{part}")
report["found"], report["read_any"] = found, read_any
"""


def test_no_process_the_run_can_see_holds_a_secret_in_its_environment_or_command_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    victim: tuple[subprocess.Popen[bytes], str],
) -> None:
    """Guards: the pid namespace (fails with ``--unshare-all`` replaced by every other
    ``--unshare-*``: the victim's command line is read; its environment stays shut, as the
    kernel lets no process of a child user namespace read it) and bwrap started with an empty
    environment (fails with the parent's environment passed to bwrap: the sandbox's pid 1 is
    bwrap, and its ``/proc/1/environ`` is what bwrap was started with, ``--clearenv`` or
    not)."""
    process, token = victim
    monkeypatch.setenv("ANTHROPIC_API_KEY", token)
    seen = attack(
        tmp_path / "work",
        PROCESSES,
        needles=(token,),
        parent_pid=os.getpid(),
        victim_pid=process.pid,
    )
    assert seen["read_any"]  # its own entries at least: the search ran
    assert seen["found"] == []
    assert str(process.pid) not in seen["pids"]


SIGNALS = r"""
import signal
try:
    os.kill(cfg["victim_pid"], signal.SIGKILL)
    report["kill"] = "sent"
except OSError as exc:
    report["kill"] = failure(exc)
cmdlines = []
for pid in (p for p in os.listdir("/proc") if p.isdigit()):
    data = read(f"/proc/{pid}/cmdline")
    cmdlines.append(data.decode(errors="replace") if data is not None else None)
report["cmdlines"] = cmdlines
"""


def test_the_run_sees_and_signals_no_process_of_the_host(
    tmp_path: Path, victim: tuple[subprocess.Popen[bytes], str]
) -> None:
    """Guard: the pid namespace; fails with ``--unshare-all`` replaced by every other
    ``--unshare-*`` (the victim, the same host user as the sandbox, is killed)."""
    process, token = victim
    seen = attack(tmp_path / "work", SIGNALS, victim_pid=process.pid)
    assert seen["kill"] == "ESRCH"
    assert process.poll() is None
    # Only bwrap's own pid 1 and the script: nothing of the host.
    assert len(seen["cmdlines"]) == 2
    assert any("hostile.py" in (line or "") for line in seen["cmdlines"])
    assert not any(token in (line or "") for line in seen["cmdlines"])


FILES = r"""
import sqlite3, time

reads = {}
for path in cfg["planted"] + cfg["relative"]:
    data = read(path)
    reads[path] = data is not None
report["reads"] = reads
found, looked = [], 0
walk_ends = time.monotonic() + 10
report["walked"] = True
for top, dirs, files in os.walk("/"):
    # /usr is the host's system, read-only and large: nothing of ours is in it.
    if top in ("/proc", "/sys", "/dev", "/usr"):
        dirs[:] = []
        continue
    if time.monotonic() > walk_ends:
        report["walked"] = False
        break
    for name in files + dirs:
        path = os.path.join(top, name)
        if holds(path.encode()):
            found.append("name:" + path)
        if name in files and os.path.isfile(path):
            data = read(path)
            if data is not None:
                looked += 1
                if holds(data):
                    found.append(path)
report["found"], report["looked"] = found, looked
report["root"] = sorted(os.listdir("/"))
report["etc"] = sorted(os.listdir("/etc"))
"""

# The sandbox's whole /etc: the made-up files and the loader's, nothing that may hold a
# credential (pip.conf, apt's auth.conf, gitconfig, environment, ssh keys).
SANDBOX_ETC = {
    "alternatives",
    "group",
    "hostname",
    "hosts",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "nsswitch.conf",
    "passwd",
}
SANDBOX_ROOT = {"bin", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "proc", "repo"}
SANDBOX_ROOT |= {"sbin", "tmp", "usr"}


def plant_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret: str) -> dict[str, Path]:
    """The parent's secret files where the product keeps them (``secrets/``, the data
    directory, HOME), each holding ``secret``; the parent's cwd is its checkout."""
    host = tmp_path / "host"
    data = host / ".swarm"
    home = tmp_path / "home"
    for folder in (host / "secrets", data / "secrets", home / ".config" / "gh"):
        folder.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(host)
    planted = {
        "app key": host / "secrets" / "app-private-key.pem",
        "sealing key": data / "secrets" / "sealing-key",
        "model key": host / "secrets" / "anthropic-api-key",
        "netrc": home / ".netrc",
        "gh": home / ".config" / "gh" / "hosts.yml",
        "git credentials": home / ".git-credentials",
        "beside the copy": tmp_path / "outside-the-copy.txt",
    }
    for path in planted.values():
        path.write_text(f"a secret of the parent: {secret}\n")
    store = data / "swarm.db"
    with sqlite3.connect(store) as db:
        db.execute("create table transcript (body text)")
        db.execute("insert into transcript values (?)", (f"a token in a transcript: {secret}",))
    db.close()
    return {**planted, "store": store}


def test_no_secret_file_outside_the_copy_is_found_by_path_by_link_or_by_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards: only the copy and the system's folders are mounted (fails with pytest's
    temporary folders bound in and bwrap run as us, not nobody: as root the switch to nobody
    alone keeps those 0700 folders shut; fails with ``/work`` bound in, by the root's listing),
    only a made-up ``/etc`` (fails with ``--ro-bind /etc /etc`` instead of the tmpfs), and the
    copy keeps links as links (fails with ``copytree``'s ``symlinks=False``: the secret is
    copied in)."""
    secret = needle("file")
    planted = plant_host(tmp_path, monkeypatch, secret)
    # The working copy in the data directory, as the writer's are, with links out of it: a
    # hostile repository ships them.
    work = planted["store"].parent / "work" / "acme-widgets"
    work.mkdir(parents=True)
    (work / "abs-link").symlink_to(planted["sealing key"])
    (work / "rel-link").symlink_to(Path("..", "..", "secrets", "sealing-key"))
    seen = attack(
        work,
        FILES,
        needles=(secret,),
        planted=[str(path) for path in planted.values()],
        relative=["abs-link", "rel-link", "../../secrets/sealing-key", "../../swarm.db"],
    )
    assert seen["walked"], "the search of / did not finish"
    assert seen["looked"] > 5  # it read files: /etc's, its own
    assert seen["found"] == []
    assert [path for path, read in seen["reads"].items() if read] == []
    assert set(seen["root"]) <= SANDBOX_ROOT
    assert set(seen["etc"]) <= SANDBOX_ETC


STORE = r"""
import sqlite3
opened = {}
for path in cfg["stores"]:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            opened[path] = holds(repr(db.execute("select * from transcript").fetchall()).encode())
    except sqlite3.Error as exc:
        opened[path] = type(exc).__name__
report["sqlite"] = opened
try:
    socket.create_connection(("127.0.0.1", 5432), timeout=2).close()
    report["postgresql"] = "connected"
except OSError as exc:
    report["postgresql"] = failure(exc)
"""


def test_the_store_is_out_of_reach_neither_its_sqlite_file_nor_postgresql_on_5432(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listeners: list[Listener]
) -> None:
    """Guards: only the copy mounted (fails with pytest's temporary folders bound in and bwrap
    run as us) and the network namespace (fails with ``--share-net``: the stand-in on 5432 is
    reached)."""
    secret = needle("store")
    store = plant_host(tmp_path, monkeypatch, secret)["store"]
    monkeypatch.setenv("SWARM_STORE_URL", f"sqlite:///{store}")
    try:  # a stand-in PostgreSQL, unless a real one already holds the port
        listeners.append(Listener(socket.SOCK_STREAM, ("127.0.0.1", 5432)))
    except OSError as exc:
        assert exc.errno == errno.EADDRINUSE
    work = store.parent / "work" / "acme-widgets"
    seen = attack(work, STORE, needles=(secret,), stores=[str(store), "../../swarm.db"])
    assert set(seen["sqlite"].values()) == {"OperationalError"}  # unable to open it
    assert seen["postgresql"] == "ECONNREFUSED"
    assert [listener.reached() for listener in listeners] == [0] * len(listeners)


WRITES = r"""
written = {}
for path in cfg["write_to"]:
    try:
        with open(path, "w") as handle:
            handle.write("written by the sandbox")
        written[path] = "written"
    except OSError as exc:
        written[path] = failure(exc)
report["written"] = written
"""


def test_writes_aimed_outside_the_copy_land_nowhere_on_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards: a private tmpfs ``/tmp`` (fails with ``--bind /tmp /tmp`` instead: the file
    appears in the host's ``/tmp``) and only the copy mounted (the parent's folders do not
    exist in the sandbox; as root, nobody could not reach them either)."""
    home = tmp_path / "home"
    outside = tmp_path / "outside"
    for folder in (home, outside):
        folder.mkdir()
        folder.chmod(0o777)  # a folder the sandbox's host user may write, were it mounted
    monkeypatch.setenv("HOME", str(home))
    host_tmp = Path("/tmp") / f"swarm-isolation-{uuid.uuid4().hex}"
    targets = [host_tmp, home / "written", outside / "written", tmp_path / "written"]
    try:
        seen = attack(tmp_path / "work", WRITES, write_to=[str(path) for path in targets])
        # Its /tmp takes the write (the attempt was made), and keeps it to itself.
        assert seen["written"][str(host_tmp)] == "written"
        assert not host_tmp.exists()
    finally:
        host_tmp.unlink(missing_ok=True)
    assert [path for path in targets if path.exists()] == []
    assert list(home.iterdir()) == [] and list(outside.iterdir()) == []


def test_the_sandbox_root_and_dev_are_read_only_so_no_write_escapes_the_size_bounds(
    tmp_path: Path,
) -> None:
    """Guard: ``--remount-ro`` of ``/`` and ``/dev``, bwrap's own tmpfs folders of no set size
    (half the host's RAM each), which the sandbox's user owns; fails without them (a hole this
    test found). The bounded folders stay writable."""
    readonly = ["/written", "/home/written", "/dev/written", "/etc/written"]
    writable = ["/tmp/written", "/home/sandbox/written", "/dev/shm/written", "/repo/written"]
    seen = attack(tmp_path / "work", WRITES, write_to=readonly + writable)
    assert seen["written"] == {
        **dict.fromkeys(readonly, "EROFS"),
        **dict.fromkeys(writable, "written"),
    }


NAMESPACES = r"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER = 0x10000000
made = libc.unshare(CLONE_NEWUSER) == 0
report["unshare"] = "made" if made else errno.errorcode[ctypes.get_errno()]
"""


def test_the_run_cannot_make_a_user_namespace_of_its_own(tmp_path: Path) -> None:
    """Guard: ``--disable-userns`` (a namespace of its own is more kernel to attack, and a way
    to be root again in it); fails without it."""
    seen = attack(tmp_path / "work", NAMESPACES)
    assert seen["unshare"] in {"ENOSPC", "EPERM"}


FDS = r"""
open_fds = []
for fd in range(3, 1024):
    try:
        os.fstat(fd)
    except OSError:
        continue
    try:
        open_fds.append((fd, os.readlink(f"/proc/self/fd/{fd}")))
    except OSError as exc:
        open_fds.append((fd, failure(exc)))
report["fds"] = open_fds
"""


def test_the_run_holds_no_open_file_of_the_host_but_its_output(tmp_path: Path) -> None:
    """Guard: bwrap gets only the descriptors it consumes (``pass_fds``), and closes them; an
    inherited descriptor of a host folder would be a way out of every mount (``openat`` from it
    walks the host's tree). Fails with one more folder descriptor passed to bwrap."""
    seen = attack(tmp_path / "work", FDS)
    assert seen["fds"] == []
