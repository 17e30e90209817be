"""Trust class 3, ``swarm exec`` hands the host to the child: a maintainer's machine is full of
ways to act as them, and a child launched with a bot token must find none of them.

Planted on the host, as a real workstation or CI runner has them: an SSH agent socket, a netrc
(by ``NETRC`` and in ``HOME``), a ``.gitconfig`` credential helper and ``.git-credentials`` in
``HOME``, a gh ``hosts.yml``, ``GIT_CONFIG_PARAMETERS`` and ``GIT_CONFIG_COUNT`` helpers,
``GITHUB_PAT``, Actions runtime tokens, askpass programs, and every ``SWARM_`` setting (the App
key path, the sealing key). The real ``swarm`` runs as a subprocess against the sandbox.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli.app import app
from sandbox.server import SandboxServer
from tests.paths import ROOT
from tests.run.conftest import Swarm, use_sandbox_settings

MAINTAINER_PAT = "ghp_MAINTAINERplantedHOSTtoken00000000042"
ACTIONS_TOKEN = "eyJhbGciOiJSUzI1NiJ9.planted-actions-runtime.sig"
SSH_SOCK = "/tmp/planted-ssh-agent/agent.4242"
ALLOWED = {
    "PATH",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GH_HOST",
    "GH_CONFIG_DIR",
    "GH_PROMPT_DISABLED",
    "GH_NO_UPDATE_NOTIFIER",
    "GITHUB_API_URL",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_TERMINAL_PROMPT",
}
CHILD = r"""
import json, os, subprocess, sys

def git(*args, stdin=""):
    done = subprocess.run(["git", *args], input=stdin, capture_output=True, text=True)
    return {"code": done.returncode, "out": done.stdout, "err": done.stderr}

origin = sys.argv[1]
scheme, host = origin.split("://")
print(json.dumps({
    "env": dict(os.environ),
    "config": git("config", "--list", "--show-origin"),
    "bot_host": git("credential", "fill", stdin=f"protocol={scheme}\nhost={host}\n\n"),
    "other_host": git("credential", "fill", stdin="protocol=https\nhost=example.org\n\n"),
    "ssh_remote": git("ls-remote", "--get-url", f"git@{host}:acme/widgets.git"),
}))
"""


@pytest.fixture
def host(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[Swarm, dict[str, str]]]:
    """The sandbox's settings plus every credential a maintainer's machine holds."""
    with SandboxServer() as server:
        swarm = use_sandbox_settings(monkeypatch, server, tmp_path)
        home = tmp_path / "maintainer-home"
        (home / ".config" / "gh").mkdir(parents=True)
        (home / ".netrc").write_text(
            f"machine 127.0.0.1 login octo-maintainer password {MAINTAINER_PAT}\n"
        )
        (home / ".git-credentials").write_text(f"http://octo-maintainer:{MAINTAINER_PAT}@x\n")
        (home / ".gitconfig").write_text(
            f'[credential]\n\thelper = "!echo password={MAINTAINER_PAT}"\n\thelper = store\n'
        )
        (home / ".config" / "gh" / "hosts.yml").write_text(
            f"github.com:\n    oauth_token: {MAINTAINER_PAT}\n    user: octo-maintainer\n"
        )
        planted = {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "NETRC": str(home / ".netrc"),
            "SSH_AUTH_SOCK": SSH_SOCK,
            "SSH_AGENT_PID": "4242",
            "GIT_CONFIG_PARAMETERS": f"'credential.helper'='!echo password={MAINTAINER_PAT}'",
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "credential.helper",
            "GIT_CONFIG_VALUE_0": f"!echo password={MAINTAINER_PAT}",
            "GIT_ASKPASS": "/planted/askpass",
            "SSH_ASKPASS": "/planted/ssh-askpass",
            "GIT_SSH_COMMAND": "ssh -i /planted/id_maintainer",
            "GITHUB_PAT": MAINTAINER_PAT,
            "GH_TOKEN": MAINTAINER_PAT,
            "GITHUB_TOKEN": MAINTAINER_PAT,
            "GH_ENTERPRISE_TOKEN": MAINTAINER_PAT,
            "ACTIONS_RUNTIME_TOKEN": ACTIONS_TOKEN,
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": ACTIONS_TOKEN,
            "AWS_SECRET_ACCESS_KEY": "planted-aws-secret-access-key-0042",
            "MY_TOOL_SETTING": "passed-on-request",
        }
        for name, value in planted.items():
            monkeypatch.setenv(name, value)
        yield swarm, planted


def _swarm_exec(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "flows",
            "exec",
            "--role",
            "reviewer",
            "--repo",
            "acme/widgets",
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=dict(os.environ),
        timeout=300,
        check=False,
    )


def _secrets(planted: dict[str, str]) -> dict[str, str]:
    """Every host value the child must not see, by name (besides the names themselves)."""
    # GIT_CONFIG_KEY_0's value ("credential.helper") is a setting's name, no secret.
    kept = {n: v for n, v in planted.items() if n not in ("MY_TOOL_SETTING", "GIT_CONFIG_KEY_0")}
    found = {n: v for n, v in kept.items() if len(v) >= 8}
    for name, value in os.environ.items():
        # The API's URL is given on purpose (as GITHUB_API_URL); every other setting is not.
        if name.startswith("SWARM_") and name != "SWARM_GITHUB_API_URL" and len(value) >= 8:
            found[name] = value
    found["App key"] = Path(os.environ["SWARM_APP_PRIVATE_KEY_FILE"]).read_text().splitlines()[5]
    return found


def test_the_child_environment_is_the_allow_list_and_nothing_of_the_host(
    host: tuple[Swarm, dict[str, str]],
) -> None:
    swarm, planted = host
    done = _swarm_exec("--env", "MY_TOOL_SETTING", "--", "env", "-0")
    assert done.returncode == 0, done.stderr
    env = dict(item.split("=", 1) for item in done.stdout.split("\0") if "=" in item)
    names = set(env)
    assert names - ALLOWED - {"MY_TOOL_SETTING"} == {n for n in names if n.startswith("LC_")}
    assert env["MY_TOOL_SETTING"] == "passed-on-request"
    assert env["GH_TOKEN"].startswith("ghs_") and env["GITHUB_TOKEN"] == env["GH_TOKEN"]
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_TERMINAL_PROMPT"] == "0"
    for name, secret in _secrets(planted).items():
        assert not [k for k, v in env.items() if secret in v], f"{name} reached the child"
    assert not Path(env["HOME"]).exists(), "the temporary HOME must be removed after the child"
    assert all(t.revoked for t in swarm.state.tokens.values() if t.kind == "installation")


def test_git_in_the_child_offers_only_the_bot_token_and_only_to_its_host(
    host: tuple[Swarm, dict[str, str]], tmp_path: Path
) -> None:
    swarm, planted = host
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    origin = swarm.server.url
    # Outside any repository: a repository's own .git/config is the person's choice of cwd.
    done = _swarm_exec("--", sys.executable, str(script), origin, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    home = seen["env"]["HOME"]
    bot_token = seen["env"]["GH_TOKEN"]

    # git reads one file: the fresh HOME's .gitconfig (no system, no host global, no parameters).
    origins = {line.split("\t", 1)[0] for line in seen["config"]["out"].splitlines()}
    assert origins == {f"file:{home}/.gitconfig"}, seen["config"]
    fill = seen["bot_host"]
    assert fill["code"] == 0, fill
    assert "username=x-access-token" in fill["out"]
    assert f"password={bot_token}" in fill["out"]
    # Another host gets nothing, and git does not prompt for it.
    assert seen["other_host"]["code"] != 0
    assert "password=" not in seen["other_host"]["out"]
    # SSH remotes are rewritten to HTTPS: no SSH agent or key is ever consulted.
    assert seen["ssh_remote"]["out"].strip().startswith(origin)
    text = json.dumps(seen)
    for name, secret in _secrets(planted).items():
        assert secret not in text, f"{name} reached the child"
    assert not Path(home).exists()
    # The token itself is never written into the HOME (the helper reads $GH_TOKEN).
    assert bot_token not in seen["config"]["out"]


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("GITHUB_PAT", "refused: never passed to the child"),
        ("SSH_AUTH_SOCK", "refused: never passed to the child"),
        ("SWARM_SEALING_KEY", "refused: never passed to the child"),
        ("ACTIONS_RUNTIME_TOKEN", "refused: never passed to the child"),
        ("LAUNDERED_PAT", "refused: its value holds a GitHub token"),
        ("KEY_PATH", "refused: its value holds a credential"),
        ("AGENT", "refused: its value holds a credential"),
        ("UNSET_NAME", "is not set in your environment"),
    ],
)
def test_env_refuses_credentials_by_name_and_by_value_before_minting(
    host: tuple[Swarm, dict[str, str]], monkeypatch: pytest.MonkeyPatch, name: str, reason: str
) -> None:
    swarm, _planted = host
    monkeypatch.setenv("LAUNDERED_PAT", f"x {MAINTAINER_PAT}")
    monkeypatch.setenv("KEY_PATH", os.environ["SWARM_APP_PRIVATE_KEY_FILE"])
    monkeypatch.setenv("AGENT", SSH_SOCK)
    monkeypatch.delenv("UNSET_NAME", raising=False)
    minted = len(swarm.state.tokens)
    result = CliRunner().invoke(
        app,
        ["exec", "--role", "reviewer", "--repo", "acme/widgets", "--env", name, "--", "true"],
        terminal_width=200,
    )
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"error: --env {name} {reason}"), line
    assert len(swarm.state.tokens) == minted, "nothing may be minted for a refused command"
    for secret in (MAINTAINER_PAT, SSH_SOCK, os.environ["SWARM_APP_PRIVATE_KEY_FILE"]):
        assert secret not in result.output
