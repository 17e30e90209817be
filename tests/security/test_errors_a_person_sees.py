"""Trust class 12, errors a person sees: a misconfiguration is one line naming the setting the
person actually set, exit status 2, never a traceback and never the secret it carries.

More CLI mistakes (flags, ids, roles) are in tests/cli/test_errors.py, which uses the same
``assert_error`` promise.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli.conftest import EXIT_USAGE, assert_error, clean_env, swarm
from tests.python_process import run_python

__all__ = ["clean_env"]  # the CLI tests' fixture: no SWARM_* settings, an empty directory

PASSWORD = "hunter2-store-password"
NOT_SHOWN = "the value is not shown, it may hold a password"


@pytest.mark.parametrize(
    ("name", "value", "first_line"),
    [
        (
            "SWARM_STORE_URL",
            f"postgresql//swarm:{PASSWORD}@db.internal/swarm",
            "error: SWARM_STORE_URL: not a database URL (expected postgresql+psycopg://USER@HOST/DB"
            f" or sqlite:////PATH/swarm.db; {NOT_SHOWN})",
        ),
        (
            "SWARM_STORE_URL",
            f"swarm:{PASSWORD}@db.internal/swarm",
            "error: SWARM_STORE_URL: not a database URL (expected postgresql+psycopg://USER@HOST/DB"
            f" or sqlite:////PATH/swarm.db; {NOT_SHOWN})",
        ),
        (
            "SWARM_STORE_URL",
            f"mysql://swarm:{PASSWORD}@db/swarm",
            "error: SWARM_STORE_URL: backend 'mysql' is not supported; use postgresql+psycopg:// "
            "or sqlite:///",
        ),
        (
            "SWARM_STORE_ULR",
            f"postgresql+psycopg://swarm:{PASSWORD}@db/swarm",
            "error: SWARM_STORE_ULR is not a swarm setting (did you mean SWARM_STORE_URL?); unset "
            "it, or name it in SWARM_ALLOW_UNKNOWN if it is meant for something else",
        ),
        (
            "SWARM_SEALING_KEY",
            PASSWORD,
            "error: SWARM_SEALING_KEY must be 32 random bytes, urlsafe base64 encoded (leave it "
            "unset to generate one per run)",
        ),
        (
            "SWARM_APP_PRIVATE_KEY",
            f"-----BEGIN RSA PRIVATE KEY-----\n{PASSWORD}\n-----END RSA PRIVATE KEY-----",
            "error: missing settings: SWARM_APP_ID, SWARM_APP_INSTALLATION_ID "
            "(docs/configuration.md explains each)",
        ),
    ],
    ids=["no-scheme", "no-url", "backend", "misspelled", "sealing-key", "inline-key"],
)
def test_a_misconfiguration_is_one_line_without_its_secret(
    name: str, value: str, first_line: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, value)
    assert_error(swarm("runs"), first_line, EXIT_USAGE, secrets=[PASSWORD])


NOT_A_URL = (
    "error: SWARM_STORE_URL is not a database URL (expected postgresql+psycopg://USER@HOST/DB or "
    f"sqlite:////PATH/swarm.db; {NOT_SHOWN})"
)


@pytest.mark.parametrize(
    ("url", "first_line"),
    [
        (f"postgresql+psycopg://swarm:{PASSWORD}@db:notaport/x", NOT_A_URL),
        (f"postgresql+psycopg://swarm:{PASSWORD}@[::1/x", NOT_A_URL),
        (
            f"sqlite://swarm:{PASSWORD}@/x.db",
            "error: SWARM_STORE_URL is not a SQLite file URL (expected sqlite:////PATH/swarm.db, "
            "without user, password or host)",
        ),
        (
            "sqlite:////proc/no-such-dir/swarm.db",
            "error: SWARM_STORE_URL: the folder /proc/no-such-dir cannot be created (No such file "
            "or directory)",
        ),
    ],
    ids=["bad-port", "bad-bracket", "sqlite-with-password", "folder-not-creatable"],
)
def test_a_store_url_the_driver_cannot_use_is_one_line_naming_the_setting(
    url: str, first_line: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # These pass the shape check and used to surface as "this looks like a bug" (exit 1).
    monkeypatch.setenv("SWARM_STORE_URL", url)
    assert_error(swarm("runs"), first_line, EXIT_USAGE, secrets=[PASSWORD])


def test_the_installed_command_prints_one_line_for_a_malformed_url(tmp_path: Path) -> None:
    # The real entry point, as a person runs it: no traceback, no password, exit status 2.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWARM_")}
    env["SWARM_STORE_URL"] = f"postgresql//swarm:{PASSWORD}@db.internal/swarm"
    done = run_python("-m", "flows", "runs", env=env, cwd=tmp_path)
    assert done.returncode == EXIT_USAGE
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "error: SWARM_STORE_URL: not a database URL (expected postgresql+psycopg://USER@HOST/DB"
        f" or sqlite:////PATH/swarm.db; {NOT_SHOWN})"
    ]
    assert PASSWORD not in done.stderr


def test_an_unreachable_store_is_one_line_without_the_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Port 1 on loopback refuses at once: the driver's own error, never the URL's password.
    monkeypatch.setenv("SWARM_STORE_URL", f"postgresql+psycopg://swarm:{PASSWORD}@127.0.0.1:1/x")
    seen = swarm("memory", "list")
    assert seen.first_line.startswith("error: cannot open the store (check SWARM_STORE_URL): ")
    assert_error(seen, seen.first_line, EXIT_USAGE, secrets=[PASSWORD])


@pytest.mark.parametrize(
    ("name", "setting"),
    [
        ("SWARM_APP_PRIVATE_KEY", "SWARM_APP_PRIVATE_KEY"),
        ("SWARM_APP_PRIVATE_KEY_FILE", "SWARM_APP_PRIVATE_KEY_FILE"),
    ],
)
def test_a_bad_app_key_is_named_by_the_variable_the_person_set(
    name: str, setting: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    text = f"not a key, but secret: {PASSWORD}"
    key_file = tmp_path / "key.pem"
    key_file.write_text(text)
    monkeypatch.setenv(name, text if name == "SWARM_APP_PRIVATE_KEY" else str(key_file))
    monkeypatch.setenv("SWARM_APP_ID", "1001")
    monkeypatch.setenv("SWARM_APP_INSTALLATION_ID", "2001")
    monkeypatch.setenv("SWARM_MAINTAINER_LOGIN", "octo-maintainer")
    assert_error(
        swarm("exec", "--role", "reviewer", "--repo", "acme/widgets", "--", "true"),
        f"error: {setting} (the App private key of identity 'default') is not a PEM private key "
        "(expected '-----BEGIN ... KEY-----')",
        EXIT_USAGE,
        secrets=[PASSWORD],
    )
