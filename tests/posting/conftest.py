"""Posting tests through the real worker: a sandbox GitHub, the scripted model, the store on
SQLite and PostgreSQL (two runtimes over one store, for two workers at once)."""

from __future__ import annotations

from tests.security.conftest import (
    make_swarm,
    pg_session_url,
    sqlite_template,
    store_target,
    swarm,
    two_swarms,
)

__all__ = [
    "make_swarm",
    "pg_session_url",
    "sqlite_template",
    "store_target",
    "swarm",
    "two_swarms",
]
