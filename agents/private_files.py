"""Folders and files only this user can reach: the data directory, the store, the warm socket.

Another user of the same machine is outside the trust boundary. The data directory holds the
store (transcripts with previews of repository files) and the local Prefect server's database;
the warm starter's socket carries a command's whole environment, credentials included. So the
folders are 0700 and the files 0600, owned by the user who runs swarm, and a folder someone else
owns is refused rather than used.

Plain Python (no pydantic, nothing of ours but the error root): the warm client runs this before
any heavy import.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from agents.errors import SwarmError

log = logging.getLogger("swarm.files")

FOLDER_MODE = 0o700
FILE_MODE = 0o600
# Permission bits for the group and others: none of them on what is ours alone.
_OTHERS = 0o077


class PrivatePathError(SwarmError):
    """A folder or file that must be this user's alone is not, and swarm will not use it."""


def private_folder(path: Path, what: str) -> None:
    """Make ``path`` a folder only this user can reach, for ``what`` (named in messages).

    Missing: created 0700, and so are its missing parents (``.swarm`` of ``.swarm/sandbox``).
    Another user's:
    refused, since they could read and replace what swarm keeps there. Ours but open to others
    (every data directory made before swarm chose its modes is 0755): tightened to 0700, so an
    existing install is fixed by its next command. Reached through a symbolic link: its mode is
    left as it is, with one warning, because a repository can commit ``.swarm`` as a link to a
    folder that is not swarm's (as root, tightening ``/`` or ``/etc`` would lock every other user
    out); the store file in it is 0600 either way.
    """
    try:
        make_folders(path)
        info = path.stat()
    except OSError as exc:
        raise PrivatePathError(f"{what} {path} cannot be created ({exc.strerror})") from None
    if not stat.S_ISDIR(info.st_mode):
        raise PrivatePathError(f"{what} {path} is not a folder")
    if info.st_uid != os.geteuid():
        raise PrivatePathError(
            f"{what} {path} belongs to another user (uid {info.st_uid}), who could read and "
            "replace what swarm keeps there; use a folder of your own"
        )
    if not info.st_mode & _OTHERS:
        return
    if path.is_symlink():
        log.warning(
            "%s %s is a link to a folder other users may read (mode %s); swarm leaves its mode "
            "alone, run `chmod 700` on it if it is swarm's",
            what,
            path,
            _mode(info.st_mode),
        )
        return
    path.chmod(FOLDER_MODE)


def make_folders(path: Path) -> None:
    """Create ``path`` and those of its parents that are missing, each 0700; what exists is
    left as it is. A link to nowhere is not followed: it stops here as "File exists"."""
    missing = []
    for folder in [path, *path.parents]:
        if os.path.lexists(folder):
            break
        missing.append(folder)
    for folder in reversed(missing):
        folder.mkdir(mode=FOLDER_MODE, exist_ok=True)


def private_file(path: Path, what: str) -> None:
    """Make ``path`` a file only this user can read and write: created empty 0600 when missing
    (SQLite reads an empty file as an empty database and gives its ``-wal`` and ``-shm`` files
    the database's mode), tightened to 0600 when ours, refused when another user's."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            info = os.fstat(fd)
            if info.st_uid != os.geteuid():
                raise PrivatePathError(
                    f"{what} {path} belongs to another user (uid {info.st_uid}), who could read "
                    "and change it; use a file of your own"
                )
            if info.st_mode & _OTHERS:
                os.fchmod(fd, FILE_MODE)
        finally:
            os.close(fd)
    except OSError as exc:
        raise PrivatePathError(f"{what} {path} cannot be opened ({exc.strerror})") from None


def runtime_folder(environ: Mapping[str, str] = os.environ) -> Path:
    """Where this user's sockets live: ``$XDG_RUNTIME_DIR/swarm`` when that folder is ours and
    0700 (as the XDG spec promises), else ``swarm-<uid>`` in ``$TMPDIR`` (absolute) or ``/tmp``.
    Never under the current folder, whatever the data directory is. Nothing is created here."""
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime) and _ours_alone(Path(runtime)):
        return Path(runtime) / "swarm"
    tmp = environ.get("TMPDIR", "")
    # A shared place, so the folder in it is made 0700 and refused when another user made it
    # first (make_runtime_folder, unsafe_folder).
    shared = tmp if os.path.isabs(tmp) else "/tmp"  # noqa: S108
    return Path(shared) / f"swarm-{os.geteuid()}"


def make_runtime_folder(folder: Path) -> None:
    """Create ``folder`` 0700, or accept an existing one only as :func:`unsafe_folder` allows.
    In a shared place such as ``/tmp`` another user may have made it first: then it is refused,
    never tightened (what they put in it while it was theirs stays theirs)."""
    try:
        folder.mkdir(mode=FOLDER_MODE)
    except FileExistsError:
        pass
    except OSError as exc:
        raise PrivatePathError(f"{folder} cannot be created ({exc.strerror})") from None
    reason = unsafe_folder(folder)
    if reason is not None:
        raise PrivatePathError(reason)


def unsafe_folder(folder: Path) -> str | None:
    """Why ``folder`` is not one only this user can reach, or None when it is: a real folder (not
    a link), ours, 0700, and every folder above it ours or root's and, where others may write,
    sticky (so nobody else can rename it away and put their own in its place)."""
    uid = os.geteuid()
    try:
        info = os.lstat(folder)
    except OSError as exc:
        return f"{folder} cannot be read ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode):
        return f"{folder} is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return f"{folder} is not a folder"
    if info.st_uid != uid:
        return f"{folder} belongs to another user (uid {info.st_uid})"
    if info.st_mode & _OTHERS:
        return f"{folder} is open to other users (mode {_mode(info.st_mode)})"
    for parent in folder.absolute().parents:
        try:
            above = parent.stat()
        except OSError as exc:
            return f"{parent} cannot be read ({exc.strerror})"
        if above.st_uid not in (uid, 0):
            return f"{parent} belongs to another user (uid {above.st_uid})"
        if above.st_mode & 0o022 and not above.st_mode & stat.S_ISVTX:
            return f"{parent} may be changed by other users (mode {_mode(above.st_mode)})"
    return None


def unsafe_socket(path: Path) -> str | None:
    """Why the socket at ``path`` is not one this user made, or None when it is."""
    try:
        info = os.lstat(path)
    except OSError as exc:
        return f"{path} cannot be read ({exc.strerror})"
    if not stat.S_ISSOCK(info.st_mode):
        return f"{path} is not a socket"
    if info.st_uid != os.geteuid():
        return f"{path} belongs to another user (uid {info.st_uid})"
    return None


def _ours_alone(folder: Path) -> bool:
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & _OTHERS


def _mode(st_mode: int) -> str:
    return f"{stat.S_IMODE(st_mode):04o}"


# Mode bits for the group and others: writing, reading.
_OTHERS_WRITE = 0o022
_OTHERS_READ = 0o044


def read_private_text(path: Path, what: str) -> str:
    """The text of a secret file (a private key, the sealing key, a model key, a webhook
    secret), refused when another user owns it or the group or others may write it (they could
    have put their own key there), with a warning when others may read it, as ssh does.

    The checks are of the file opened (``fstat``), so a swap between check and read changes
    nothing; root's files are taken (root can do anything anyway). Raises ``OSError`` and
    ``UnicodeDecodeError`` as reading does, for the caller to word.
    """
    fd = os.open(path, os.O_RDONLY)
    with os.fdopen(fd, "rb") as handle:
        found = os.fstat(handle.fileno())
        if found.st_uid not in (os.geteuid(), 0):
            raise PrivatePathError(
                f"{what} {path} belongs to another user (uid {found.st_uid}): swarm takes no "
                "secret someone else controls; use a copy of your own (chmod 600)"
            )
        mode = stat.S_IMODE(found.st_mode)
        if mode & _OTHERS_WRITE:
            raise PrivatePathError(
                f"{what} {path} can be written by others (mode {mode:04o}): swarm takes no "
                f"secret someone else could replace; chmod 600 {path}"
            )
        if mode & _OTHERS_READ:
            log.warning(
                "%s %s can be read by others (mode %04o): chmod 600 %s", what, path, mode, path
            )
        return handle.read().decode("utf-8")
