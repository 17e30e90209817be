"""Find planted secrets in everything a run persisted: database rows, files, log text."""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterable
from pathlib import Path

import sqlalchemy as sa

from agents.dispatch.envelope import SealedEnvelope


def database_text(url: str) -> str:
    """Every value of every table, as text."""
    engine = sa.create_engine(url)
    chunks: list[str] = []
    try:
        meta = sa.MetaData()
        meta.reflect(bind=engine)
        with engine.connect() as conn:
            for table in meta.sorted_tables:
                for row in conn.execute(sa.select(table)):
                    chunks.append(f"{table.name}: " + " | ".join(str(v) for v in row))
    finally:
        engine.dispose()
    return "\n".join(chunks)


def files_text(root: Path) -> str:
    """Every file under ``root`` as text (binary files too: SQLite pages hold plain strings)."""
    parts = []
    for path in sorted(root.rglob("*")):
        if path.is_file():
            parts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(parts)


def sealed_forms(sealed: SealedEnvelope) -> list[str]:
    """Every way a sealed envelope is printed or serialised (it travels as a Prefect parameter)."""
    return [
        repr(sealed),
        str(sealed),
        str(sealed.model_dump()),
        sealed.model_dump_json(),
        json.dumps(sealed.model_dump(mode="json")),
        pickle.dumps(sealed).decode("latin-1"),
    ]


FRAGMENT = 20


def fragments(secret: str) -> list[str]:
    """The secret and every piece of it an attacker could use: overlapping windows of 20
    characters over it, so a tail that survived redaction (after a dot of a stateless token, a
    space, a line break) is found as surely as the whole."""
    if len(secret) < 2 * FRAGMENT:
        return [secret]
    step = FRAGMENT // 2
    return [secret, *(secret[i : i + FRAGMENT] for i in range(0, len(secret) - FRAGMENT + 1, step))]


def leaks(secrets: Iterable[str], *texts: str) -> list[str]:
    """The planted secrets (shown by their first 8 characters) found, whole or in part, in any
    text."""
    found = []
    for secret in secrets:
        if secret and any(part in text for part in fragments(secret) for text in texts):
            found.append(secret[:8] + "...")
    return found
