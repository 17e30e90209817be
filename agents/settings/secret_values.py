"""Every secret value the configuration holds, registered with redaction at start-up.

Patterns know the shapes of tokens and keys; a webhook secret, a sealing key or a PAT of a new
format has no shape, so its value itself is redacted wherever it appears. The walk is generic
(every ``SecretStr`` field, every ``*key_file``/``*token_file``/``*secret_file`` file), so a
secret setting added later is covered without a change here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, SecretStr

from agents.redact import register_secret

_SECRET_FILE_SUFFIXES = ("key_file", "token_file", "secret_file")


def configured_secret_values(settings: BaseModel) -> list[str]:
    """The secret values in ``settings`` and in the secret files it names (readable ones)."""
    found: list[str] = []
    for item in _walk(settings, ""):
        if isinstance(item, str):
            found.append(item)
            continue
        try:
            text = item.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            continue  # a missing or unreadable file is reported where it is used
        if text:
            found.append(text)
    return list(dict.fromkeys(found))


def configured_secret_files(settings: BaseModel) -> list[Path]:
    """The secret files ``settings`` names (App keys, PAT files), as configured."""
    return list(dict.fromkeys(p for p in _walk(settings, "") if isinstance(p, Path)))


def _walk(value: object, name: str) -> Iterator[str | Path]:
    if isinstance(value, SecretStr):
        if value.get_secret_value():
            yield value.get_secret_value()
    elif isinstance(value, BaseModel):
        for field in type(value).model_fields:
            yield from _walk(getattr(value, field), field)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _walk(item, name)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _walk(item, name)
    elif isinstance(value, Path) and name.endswith(_SECRET_FILE_SUFFIXES):
        yield value


def register_configured_secrets(settings: BaseModel) -> None:
    for value in configured_secret_values(settings):
        register_secret(value)
