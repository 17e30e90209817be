"""Settings read from files in the git-ignored ``secrets/`` folder when the environment does
not give them (``secrets.example/`` mirrors the file names with fake values)."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import SecretStr

from agents.private_files import read_private_text

SECRETS_DIR = Path("secrets")


def secret_file_defaults() -> dict[str, Path | SecretStr | str]:
    """Settings read from ``secrets/`` when the environment does not give them."""
    found: dict[str, Path | SecretStr | str] = {}
    key = SECRETS_DIR / "app-private-key.pem"
    # The key file alone does not make an identity; it fills in the one SWARM_APP_ID names.
    if (
        "SWARM_APP_ID" in os.environ
        and "SWARM_APP_PRIVATE_KEY_FILE" not in os.environ
        and key.is_file()
    ):
        found["app_private_key_file"] = key
    sealing = SECRETS_DIR / "sealing-key"
    if "SWARM_SEALING_KEY" not in os.environ and sealing.is_file():
        found["sealing_key"] = SecretStr(read_private_text(sealing, "the sealing key").strip())
    anthropic = SECRETS_DIR / "anthropic-api-key"
    if "ANTHROPIC_API_KEY" not in os.environ and anthropic.is_file():
        found["ANTHROPIC_API_KEY"] = read_private_text(anthropic, "the model key").strip()
    return found
