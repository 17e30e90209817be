"""Code from a repository is hostile (rule 16): a test script run through the real runner and a
real ``bwrap`` hunts for every secret the parent holds, and for a way out.

Planted in the parent, as a worker's host has them: a GitHub token and the model key in its
environment (and a ``SWARM_`` sealing key), the model key, the sealing key and an App key in
files of a data directory and of the parent's working folder, a SQLite store, a ``.netrc`` in
its HOME, a file beside the working copy. Each holds one needle; the script searches its
environment, every ``/proc/*/environ`` and ``cmdline`` it can see, the parent's ``/proc`` entry,
each planted path by name, and every file under ``/`` (the system's ``/usr`` by name only), then
tries a TCP listener this test opens, DNS, and writes outside its copy. A process of the host
holds the token in its command line (readable by every user, without a pid namespace). The
needle reaches the script in two halves, so the only whole copies are the planted ones.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents.confine import Limits, run_confined
from tests.bwrap import require_bwrap

NEEDLE = "pl4nted-" + uuid.uuid4().hex[:12]
GITHUB_TOKEN = f"ghs_{NEEDLE}GitHubTokenOfTheParent0000000000"
MODEL_KEY = f"sk-ant-api03-{NEEDLE}ModelKeyOfTheParent000000000000"
SEALING_KEY = f"{NEEDLE}-sealing-key-of-the-parent-0000000000000000"

HOSTILE = r"""
import json, os, socket, sys, time

cfg = json.load(open("probe.json"))
needle = (cfg["needle"][0] + cfg["needle"][1]).encode()
found, reads, writes = [], {}, {}

def look(where, data):
    if needle in data:
        found.append(where)

def read(path, limit=4 << 20):
    try:
        with open(path, "rb") as handle:
            return handle.read(limit)
    except OSError as exc:
        return None

for name, value in os.environ.items():
    look("env:" + name, (name + "=" + value).encode())
for pid in [p for p in os.listdir("/proc") if p.isdigit()] + [str(cfg["parent_pid"]), "1"]:
    for part in ("environ", "cmdline"):
        data = read(f"/proc/{pid}/{part}")
        if data is not None:
            look(f"/proc/{pid}/{part}", data)
    for link in ("cwd", "root"):
        try:
            look(f"/proc/{pid}/{link}", os.readlink(f"/proc/{pid}/{link}").encode())
            for entry in os.listdir(f"/proc/{pid}/{link}"):
                look(f"/proc/{pid}/{link}/{entry}", entry.encode())
                data = read(f"/proc/{pid}/{link}/{entry}")
                if data is not None:
                    look(f"/proc/{pid}/{link}/{entry}", data)
        except OSError:
            pass
for path in cfg["planted"]:
    data = read(path)
    reads[path] = data is not None
    if data is not None:
        look(path, data)
try:
    socket.create_connection(("127.0.0.1", cfg["port"]), timeout=3).close()
    net = "connected"
except OSError as exc:
    net = "refused: " + type(exc).__name__
try:
    socket.getaddrinfo("pypi.org", 443)
    dns = "resolved"
except OSError as exc:
    dns = "failed: " + type(exc).__name__
for path in cfg["write_to"]:
    try:
        with open(path, "w") as handle:
            handle.write("written by the sandbox")
        writes[path] = "written"
    except OSError as exc:
        writes[path] = type(exc).__name__
walk_ends = time.monotonic() + cfg["walk_seconds"]
walked = True
for top, dirs, files in os.walk("/"):
    if top in ("/proc", "/sys", "/dev"):
        dirs[:] = []
        continue
    if time.monotonic() > walk_ends:
        walked = False
        break
    for name in files:
        path = os.path.join(top, name)
        look("name:" + path, path.encode())
        if not path.startswith("/usr/") and os.path.isfile(path) and not os.path.islink(path):
            data = read(path)
            if data is not None:
                look(path, data)
seen = {"found": found, "reads": reads, "net": net, "dns": dns, "writes": writes, "walked": walked}
print("REPORT " + json.dumps(seen))
"""


class Listener:
    """A TCP listener on the host's loopback that counts who connects."""

    def __init__(self) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(8)
        self.socket.setblocking(False)
        self.port: int = self.socket.getsockname()[1]

    def connections(self) -> int:
        count = 0
        while True:
            try:
                conn, _ = self.socket.accept()
            except BlockingIOError:
                return count
            conn.close()
            count += 1


@pytest.fixture
def listener() -> Iterator[Listener]:
    held = Listener()
    try:
        yield held
    finally:
        held.socket.close()


def plant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[Path]]:
    """The parent's secrets in its environment and files; the working copy inside its data
    directory. Returns (the working copy, the planted files)."""
    require_bwrap()
    monkeypatch.setenv("GITHUB_TOKEN", GITHUB_TOKEN)
    monkeypatch.setenv("GH_TOKEN", GITHUB_TOKEN)
    monkeypatch.setenv("ANTHROPIC_API_KEY", MODEL_KEY)
    monkeypatch.setenv("SWARM_SEALING_KEY", SEALING_KEY)
    host = tmp_path / "host"
    data = host / ".swarm"
    (data / "secrets").mkdir(parents=True)
    (host / "secrets").mkdir()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(host)
    planted = {
        data / "secrets" / "anthropic-api-key": MODEL_KEY,
        data / "secrets" / "sealing-key": SEALING_KEY,
        host / "secrets" / "app-private-key.pem": f"-----BEGIN RSA PRIVATE KEY-----\n{NEEDLE}\n",
        host / "secrets" / "anthropic-api-key": MODEL_KEY,
        home / ".netrc": f"machine github.com login x password {GITHUB_TOKEN}\n",
        tmp_path / "outside-the-copy.txt": f"a file beside the working copy: {NEEDLE}\n",
    }
    for path, text in planted.items():
        path.write_text(text)
    store = data / "swarm.db"
    with sqlite3.connect(store) as db:
        db.execute("create table transcript (body text)")
        db.execute("insert into transcript values (?)", (f"token {GITHUB_TOKEN} {MODEL_KEY}",))
    db.close()
    work = data / "work" / "acme-widgets"
    work.mkdir(parents=True)
    return work, [*planted, store]


def report(output: str) -> dict[str, Any]:
    line = next(line for line in output.splitlines() if line.startswith("REPORT "))
    loaded: dict[str, Any] = json.loads(line.removeprefix("REPORT "))
    return loaded


def test_a_hostile_test_script_finds_no_token_key_store_or_file_and_no_way_out(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    listener: Listener,
    request: pytest.FixtureRequest,
) -> None:
    work, planted = plant(tmp_path, monkeypatch)
    escape = Path("/tmp") / f"swarm-confine-escape-{uuid.uuid4().hex}"
    write_to = [escape, tmp_path / "written-outside", Path.cwd() / "written-in-cwd"]
    (work / "hostile.py").write_text(HOSTILE)
    # A process of the host whose command line holds a token, as a tool given one by flag has.
    other = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(300)", f"--token={GITHUB_TOKEN}"]
    )
    request.addfinalizer(other.kill)
    (work / "probe.json").write_text(
        json.dumps(
            {
                "needle": [NEEDLE[:4], NEEDLE[4:]],
                "parent_pid": os.getpid(),
                "planted": [str(p) for p in planted],
                "port": listener.port,
                "write_to": [str(p) for p in write_to],
                "walk_seconds": 60,
            }
        )
    )
    run = run_confined(work, ["python3", "hostile.py"], Limits(wall_seconds=120))
    assert run.exit_code == 0, run.output
    seen = report(run.output)
    assert seen["found"] == []
    assert seen["walked"], "the search of / did not finish"
    assert not any(seen["reads"].values())
    assert seen["net"].startswith("refused")
    assert listener.connections() == 0
    assert seen["dns"].startswith("failed")
    for path in write_to:
        assert not path.exists()
    assert set(os.listdir(work)) == {"hostile.py", "probe.json"}
    escape.unlink(missing_ok=True)


def limited(tmp_path: Path, script: str, limits: Limits) -> Any:
    require_bwrap()
    work = tmp_path / "copy"
    work.mkdir()
    (work / "script.py").write_text(textwrap.dedent(script))
    return run_confined(work, ["python3", "script.py"], limits)


def test_a_fork_bomb_meets_the_process_limit(tmp_path: Path) -> None:
    script = """
        import os, time
        made = 0
        try:
            for _ in range(300):
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
                made += 1
            print("made", made)
        except BlockingIOError:
            print("refused after", made)
    """
    run = limited(tmp_path, script, Limits(processes=16, wall_seconds=60))
    assert run.exit_code == 0 and run.stopped is None, run.output
    assert run.output.startswith("refused after "), run.output
    assert int(run.output.split()[-1]) < 16


def test_a_memory_hog_meets_the_memory_limit_and_the_tmpfs_their_size(tmp_path: Path) -> None:
    script = """
        import os
        try:
            hog = bytearray(1 << 30)
            print("memory: got a GiB")
        except MemoryError:
            print("memory: refused")
        for folder in ("/tmp", os.environ["HOME"], "/dev/shm"):
            try:  # in files of 1 MiB each: the file size limit does not stop it
                for n in range(64):
                    with open(os.path.join(folder, f"hog{n}"), "wb") as out:
                        out.write(b"x" * (1 << 20))
                print(folder, "got 64 MiB")
            except OSError as exc:
                print(folder, "refused:", exc.strerror)
        try:
            with open("big", "wb") as out:
                out.write(b"x" * (32 << 20))
            print("file: got 32 MiB")
        except OSError as exc:
            print("file: refused:", exc.strerror)
    """
    limits = Limits(memory_bytes=512 << 20, scratch_bytes=16 << 20, file_bytes=8 << 20)
    run = limited(tmp_path, script, limits)
    assert run.exit_code == 0, run.output
    assert run.output.splitlines() == [
        "memory: refused",
        "/tmp refused: No space left on device",
        "/home/sandbox refused: No space left on device",
        "/dev/shm refused: No space left on device",
        "file: refused: File too large",
    ]


def test_an_infinite_loop_is_stopped_by_its_cpu_limit(tmp_path: Path) -> None:
    run = limited(tmp_path, "while True:\n    pass\n", Limits(cpu_seconds=1, wall_seconds=30))
    assert run.stopped == "cpu time"
    assert run.summary().startswith("stopped by its cpu time limit")


def test_a_run_past_its_wall_time_is_killed_with_every_process_it_started(
    tmp_path: Path,
) -> None:
    mark = f"{uuid.uuid4().int % 10**6}.{os.getpid()}"
    script = f"""
        import os, subprocess, time
        subprocess.Popen(["sleep", "{mark}"])
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execvp("sleep", ["sleep", "{mark}"])
            os._exit(0)
        print("started", flush=True)
        time.sleep(1000)
    """
    run = limited(tmp_path, script, Limits(wall_seconds=3))
    assert (run.stopped, run.timed_out, run.output) == ("wall time", True, "started\n")
    survivors = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if mark.encode() in cmdline:
            survivors.append(pid)
    assert survivors == []


def test_an_output_flood_is_stopped_and_reported_as_one(tmp_path: Path) -> None:
    script = "import sys\nwhile True:\n    sys.stdout.write('flood ' * 1000 + '\\n')\n"
    run = limited(tmp_path, script, Limits(output_bytes=4096, wall_seconds=30))
    assert (run.stopped, run.truncated) == ("output flood", True)
    assert run.output_bytes > 64 * 4096
    assert len(run.output) < 4096 + 200
