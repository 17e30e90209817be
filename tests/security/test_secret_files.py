"""Trust class 8 of issue 37: secret files are taken only from this user, and not open to
writing by others.

The attack: another user of the machine puts a ``secrets/sealing-key`` or
``secrets/anthropic-api-key`` of their own in a shared working folder (or owns the file a
setting names), so swarm seals envelopes under a key they know or sends prompts under their
account; a key copied from ``secrets.example`` stayed 0644 without a word. Now a secret file
another user owns, or one the group or others may write, is refused in one line; one others may
read is taken with a warning, as ssh does.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from agents.private_files import PrivatePathError, read_private_text
from agents.settings.secret_files import secret_file_defaults
from tests.other_user import as_other_user, require_second_uid, shared_folder


def _planted_by_other_user(folder: Path) -> None:
    def plant() -> str:
        secrets = folder / "secrets"
        secrets.mkdir(mode=0o755)
        for name in ("sealing-key", "anthropic-api-key"):
            path = secrets / name
            path.write_text("the-other-users-key-0123456789\n")
            path.chmod(0o644)
        return "planted"

    assert as_other_user(plant) == "planted"


def test_secret_files_another_user_planted_in_the_working_folder_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_second_uid()
    monkeypatch.delenv("SWARM_SEALING_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with shared_folder() as folder:
        _planted_by_other_user(folder)
        monkeypatch.chdir(folder)
        with pytest.raises(PrivatePathError, match="belongs to another user"):
            secret_file_defaults()


def test_a_secret_file_others_may_write_is_refused_and_one_they_may_read_is_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "app-private-key.pem"
    path.write_text("secret\n")
    os.chmod(path, 0o666)
    with pytest.raises(PrivatePathError, match="can be written by others"):
        read_private_text(path, "the private key")
    os.chmod(path, 0o644)
    with caplog.at_level(logging.WARNING, logger="swarm.files"):
        assert read_private_text(path, "the private key") == "secret\n"
    assert "can be read by others" in caplog.text
    os.chmod(path, 0o600)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="swarm.files"):
        read_private_text(path, "the private key")
    assert caplog.text == ""
