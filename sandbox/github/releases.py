"""Real pull requests nobody here wrote: two adjacent releases of a well-known package, as base
and head of one PR the sandbox serves.

The source distributions come from PyPI's JSON API (``https://pypi.org/pypi/<name>/json``) at
test and bench time, checked against the SHA-256 PyPI publishes and kept in a cache folder
(``$SANDBOX_RELEASES_CACHE``, else ``~/.cache/swarm/releases``), so the repository stores none of
them and a second run downloads nothing. Each release is unpacked as it was published (its top
folder stripped): text files as text, binary files and files that are not UTF-8 as bytes. The
sandbox then lists the PR's files with GitHub's conventions (``sandbox.github.diffs``).

``python -m sandbox.github --releases`` serves :data:`RELEASES`; ``bench/real_prs.py`` and
``tests/run/test_real_pulls.py`` review them.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sandbox.github.model import Blob, Issue
from sandbox.github.state import SandboxState

PYPI = "https://pypi.org/pypi"
ORG = "acme"
_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Release:
    """``name`` from version ``base`` to ``head``, and what makes it worth reviewing."""

    name: str
    base: str
    head: str
    why: str

    @property
    def repo(self) -> str:
        return f"{ORG}/{self.name}"


# Chosen for what real pull requests carry (figures of the sdists, not of GitHub's listing).
RELEASES: tuple[Release, ...] = (
    Release("idna", "3.6", "3.7", "8 files; a generated Unicode data module"),
    Release("certifi", "2024.2.2", "2024.6.2", "5 files; the CA bundle, data"),
    Release("emoji", "2.10.1", "2.11.0", "5 files; a 5 MB diff of a data module, patch omitted"),
    Release("requests", "2.31.0", "2.32.0", "61 files; the package moved under src/: renames"),
    Release("attrs", "23.2.0", "24.1.0", "71 files; source and tests in different shards"),
    Release("click", "8.1.7", "8.1.8", "106 files; 50 deleted, 2 binary"),
    Release("pycountry", "23.12.11", "24.6.1", "121 files; 113 binary translations, JSON data"),
)


class ReleasesUnavailable(RuntimeError):
    """PyPI could not be reached or answered something unusable; the message says which."""


def user_cache(name: str) -> Path:
    """``name`` in the user's cache folder for swarm (``$XDG_CACHE_HOME``, else ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "swarm" / name


def cache_dir() -> Path:
    configured = os.environ.get("SANDBOX_RELEASES_CACHE")
    return Path(configured) if configured else user_cache("releases")


def _get(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=_TIMEOUT_S) as answer:  # noqa: S310 (https only)
            data: bytes = answer.read()
            return data
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise ReleasesUnavailable(f"cannot reach PyPI ({url}): {exc}") from None


def sdist(name: str, version: str, cache: Path | None = None) -> bytes:
    """The source distribution of ``name`` ``version``, from the cache or from PyPI."""
    folder = cache or cache_dir()
    kept = folder / f"{name}-{version}.sdist"
    if kept.is_file():
        return kept.read_bytes()
    index = f"{PYPI}/{urllib.parse.quote(name)}/json"
    try:
        files = json.loads(_get(index))["releases"][version]
        chosen = next(f for f in files if f["packagetype"] == "sdist")
        url, digest = urllib.parse.urljoin(index, chosen["url"]), chosen["digests"]["sha256"]
    except (ValueError, KeyError, StopIteration, TypeError):
        raise ReleasesUnavailable(f"PyPI lists no sdist of {name} {version}") from None
    if urllib.parse.urlsplit(url).scheme != "https":
        raise ReleasesUnavailable(f"PyPI's link for {name} {version} is not https: {url}")
    data = _get(url)
    if hashlib.sha256(data).hexdigest() != digest:
        raise ReleasesUnavailable(f"{name} {version}: the download does not match PyPI's SHA-256")
    folder.mkdir(parents=True, exist_ok=True)
    partial = kept.with_suffix(".partial")
    partial.write_bytes(data)
    partial.replace(kept)  # whole or not at all: a cut download never counts as cached
    return data


def _blob(raw: bytes) -> Blob:
    if b"\0" in raw[:8000]:
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def unpack(data: bytes) -> dict[str, Blob]:
    """The files of an sdist (tar or zip), paths without the release's top folder."""
    members: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            for member in archive.getmembers():
                handle = archive.extractfile(member) if member.isfile() else None
                if handle is not None:
                    members[member.name] = handle.read()
    except tarfile.ReadError:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                if not info.is_dir():
                    members[info.filename] = archive.read(info)
    tree: dict[str, Blob] = {}
    for path, raw in members.items():
        _top, _, inner = path.partition("/")
        if inner and ".." not in inner.split("/"):
            tree[inner] = _blob(raw)
    return tree


def add_release_pull(state: SandboxState, release: Release, cache: Path | None = None) -> Issue:
    """Repository ``acme/<name>`` at the base release and one open PR to the head release."""
    base = unpack(sdist(release.name, release.base, cache))
    head = unpack(sdist(release.name, release.head, cache))
    state.add_repo(release.repo, base, description=f"{release.name}, as released on PyPI")
    changes: dict[str, Blob | None] = {p: b for p, b in head.items() if base.get(p) != b}
    changes |= {p: None for p in base if p not in head}
    body = (
        f"Everything that changed between {release.name} {release.base} and {release.head}, "
        "as published on PyPI."
    )
    return state.add_pull(
        release.repo,
        f"{release.name} {release.head}",
        changes,
        body=body,
        author="release-bot",
        head_ref=f"release-{release.head}",
    )


def add_release_pulls(
    state: SandboxState, releases: Sequence[Release] = RELEASES, cache: Path | None = None
) -> list[Issue]:
    """:func:`add_release_pull` for each release."""
    return [add_release_pull(state, release, cache) for release in releases]
