"""A migrated Prefect database per Prefect version, kept in this user's cache and copied into a
data directory whose local Prefect server starts for the first time.

A new data directory's ``prefect server start`` spent most of its start creating Prefect's tables
in an empty SQLite database: 8.4 CPU-s to its first answer, against 3.5 from a copy of a migrated
database and 2.9 when the server started from that copy also skips the migration check and the
block-type registration (Prefect 3.9.1 on a 2-core machine; every new clone's first command pays
it, and the test suite starts about 17 such servers). So the first server of each Prefect version
leaves a copy of its database as it was when it first answered, before any command of ours wrote
to it (Prefect's tables, its block types, its schema version: nothing of a run), and the next new
data directory starts from that copy.

The copy is taken only where it cannot be wrong:

- the server keeps its database in the default place, ``<home>/prefect.db``: no
  ``PREFECT_SERVER_DATABASE_*`` or ``PREFECT_API_DATABASE_*`` setting reaches it (a PostgreSQL
  server is migrated by Prefect as usual);
- the data directory has no database yet (an existing one is migrated by Prefect, as after an
  upgrade);
- the copy is of this Prefect version (its name says which), a regular file of this user's that
  nobody else may write (another user's file would be their database in our server).

The cache is only a speed-up: a copy that cannot be read or written is left alone (one debug log
line), and a server that does not start from a copy is started again without it, the copy dropped.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import BinaryIO

from agents.private_files import make_folders

log = logging.getLogger("swarm.local")

DATABASE = "prefect.db"
# What the server may skip when it starts from a copy made by its own Prefect version: the
# migrations are at head and the block types registered.
FROM_COPY = {
    "PREFECT_SERVER_DATABASE_MIGRATE_ON_START": "false",
    "PREFECT_SERVER_REGISTER_BLOCKS_ON_START": "false",
}
_DATABASE_SETTINGS = ("PREFECT_SERVER_DATABASE_", "PREFECT_API_DATABASE_")
_OTHERS_WRITE = 0o022


def template_path(environ: Mapping[str, str]) -> Path | None:
    """Where the copy for the installed Prefect is kept: ``$XDG_CACHE_HOME/swarm`` (absolute),
    else ``~/.cache/swarm``; None when there is no home or no Prefect to name it by."""
    try:
        prefect_version = version("prefect")
    except PackageNotFoundError:
        return None
    cache = environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(cache):
        home = environ.get("HOME", "")
        if not os.path.isabs(home):
            return None
        cache = os.path.join(home, ".cache")
    return Path(cache) / "swarm" / f"prefect-{prefect_version}.db"


def applies(home: Path, server_env: Mapping[str, str]) -> bool:
    """Whether a server of ``home`` with ``server_env`` would create a new default database."""
    if any(key.startswith(_DATABASE_SETTINGS) for key in server_env):
        return False
    return not any((home / f"{DATABASE}{end}").exists() for end in ("", "-wal", "-journal"))


def seed(home: Path, template: Path | None, server_env: Mapping[str, str]) -> dict[str, str]:
    """Copy the database kept at ``template`` into ``home`` when it applies; the settings the
    server then starts with (none when nothing was copied)."""
    if template is None or not applies(home, server_env):
        return {}
    try:
        fd = os.open(template, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return {}  # none kept yet (or a link, which is not ours to follow)
    with os.fdopen(fd, "rb") as source:
        found = os.fstat(source.fileno())
        if (
            not stat.S_ISREG(found.st_mode)
            or found.st_uid != os.geteuid()
            or found.st_mode & _OTHERS_WRITE
        ):
            log.debug("not starting from %s: not a file of this user's alone", template)
            return {}
        try:
            with _partial(home) as (partial, out):
                while chunk := source.read(1 << 20):
                    out.write(chunk)
                out.close()
                if not _migrated(partial):
                    log.debug("not starting from %s: not a migrated Prefect database", template)
                    template.unlink(missing_ok=True)
                    return {}
                os.replace(partial, home / DATABASE)
        except OSError as exc:
            log.debug("not starting from %s: %s", template, exc.strerror)
            return {}
    return dict(FROM_COPY)


def _migrated(database: str) -> bool:
    """Whether ``database`` is a whole SQLite database that Prefect's migrations have run on (a
    server told to skip them would answer on anything else, and fail on its first query)."""
    try:
        found = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        try:
            checked = found.execute("PRAGMA quick_check").fetchone()
            head = found.execute("SELECT version_num FROM alembic_version").fetchone()
        finally:
            found.close()
    except sqlite3.Error:
        return False
    return checked == ("ok",) and head is not None


def keep(home: Path, template: Path | None) -> None:
    """Keep the database of the server of ``home``, which has just answered for the first time
    on a database it created, at ``template`` for later first starts (unless one is kept)."""
    if template is None or template.exists():
        return
    try:
        make_folders(template.parent)
        with _partial(template.parent) as (partial, out):
            out.close()
            # SQLite's online backup: a consistent copy of a database a server is using, its
            # write-ahead log included (a copy of the file alone misses what the log holds).
            source = sqlite3.connect(f"file:{home / DATABASE}?mode=ro", uri=True)
            copy = sqlite3.connect(partial)
            try:
                source.backup(copy)
            finally:
                copy.close()
                source.close()
            os.replace(partial, template)
    except (OSError, sqlite3.Error) as exc:
        log.debug("could not keep %s as %s: %s", home / DATABASE, template, exc)


def drop(home: Path, template: Path | None) -> None:
    """Forget the copy kept at ``template`` and what of it was copied into ``home``: a server
    did not start from it."""
    if template is not None:
        template.unlink(missing_ok=True)
    for end in ("", "-wal", "-shm", "-journal"):
        (home / f"{DATABASE}{end}").unlink(missing_ok=True)


@contextmanager
def _partial(folder: Path) -> Iterator[tuple[str, BinaryIO]]:
    """A new 0600 file in ``folder`` to write a copy into before it is renamed into place,
    removed when the rename did not happen: no half copy is ever found under the real name, and
    two processes writing at once each rename a whole file."""
    fd, path = tempfile.mkstemp(prefix=".partial-", dir=folder)
    out = os.fdopen(fd, "wb")
    try:
        yield path, out
    finally:
        out.close()
        with suppress(FileNotFoundError):
            os.unlink(path)
