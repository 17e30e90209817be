"""A writer's branch and its throwaway copy: read a branch's head, create the writer's own
branch (again after a crash: the same branch, never a second), and fetch a commit's files into a
directory by code, so the model works on a copy and never holds the token that fetched it.

Every call goes through the gateway (:meth:`ThrottledClient.request`): throttled, audited, and
each write counted against the run's caps like any other.
"""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from agents.github.endpoints import GitHubEndpoints
from agents.github.errors import GitHubApiError
from agents.github.paths import repo_name

# The most of an archive (and of the files in it) a copy takes.
_MAX_ARCHIVE_BYTES = 200 * 1024 * 1024


class ForeignBranch(Exception):
    """The branch exists and holds a commit the writer did not make: it is someone else's, and
    the writer never pushes to a branch it did not create."""


class UnsafeArchive(Exception):
    """The archive holds an entry that could land outside the copy, or is larger than allowed."""


@dataclass(frozen=True)
class Branch:
    """A branch and its head commit; ``created``: made by this call (not found from before)."""

    name: str
    head: str
    created: bool


@dataclass(frozen=True)
class Copy:
    """A commit's files written under ``root``; links and special files are left out."""

    root: Path
    sha: str
    files: int
    bytes: int
    skipped: tuple[str, ...]


def _ref_path(repo: str, name: str) -> str:
    if not name or any(part in ("", ".", "..") for part in name.split("/")):
        raise ValueError(f"not a branch name: {name!r}")
    return f"/repos/{repo_name(repo)}/git/ref/heads/{quote(name, safe='/')}"


async def default_branch(gateway: GitHubEndpoints, repo: str) -> str:
    """The repository's default branch (``GET /repos/{owner}/{repo}``'s ``default_branch``)."""
    response = await gateway.request("GET", f"/repos/{repo_name(repo)}")
    name = response.json().get("default_branch")
    if not isinstance(name, str) or not name:
        raise GitHubApiError(200, "GET", "/repos/{owner}/{repo}", "no default branch")
    return name


async def branch_head(gateway: GitHubEndpoints, repo: str, name: str) -> str | None:
    """The SHA ``name`` points to, or None when there is no such branch (GitHub's 404)."""
    try:
        response = await gateway.request("GET", _ref_path(repo, name))
    except GitHubApiError as exc:
        if exc.status == 404:
            return None
        raise
    sha: str = response.json()["object"]["sha"]
    return sha


async def _made_by(gateway: GitHubEndpoints, repo: str, sha: str, login: str) -> bool:
    """Whether commit ``sha`` is ``login``'s, signed (GitHub signs what the writer commits
    through ``createCommitOnBranch``; a commit pushed by anyone else is not both)."""
    response = await gateway.request("GET", f"/repos/{repo_name(repo)}/commits/{sha}")
    page = response.json()
    author = (page.get("author") or {}).get("login")
    verification = (page.get("commit") or {}).get("verification") or {}
    return author == login and verification.get("verified") is True


async def ensure_branch(
    gateway: GitHubEndpoints, repo: str, name: str, base_sha: str, *, login: str
) -> Branch:
    """The writer's branch ``name``: created at ``base_sha``, or the one a run before made.

    An existing branch is the writer's when its head is ``base_sha`` (nothing on it yet) or a
    signed commit by ``login`` (the writer bot); anything else raises :class:`ForeignBranch`.
    Creating races a second run safely: GitHub's "Reference already exists" (422) sends it
    to the same check."""
    found = await branch_head(gateway, repo, name)
    if found is None:
        body = {"ref": f"refs/heads/{name}", "sha": base_sha}
        try:
            await gateway.request("POST", f"/repos/{repo_name(repo)}/git/refs", json=body)
            return Branch(name, base_sha, created=True)
        except GitHubApiError as exc:
            if exc.status != 422 or "already exists" not in exc.message:
                raise
        found = await branch_head(gateway, repo, name)
        if found is None:
            raise GitHubApiError(404, "GET", "/repos/{owner}/{repo}/git/ref/{ref}", "Not Found")
    if found != base_sha and not await _made_by(gateway, repo, found, login):
        raise ForeignBranch(
            f"branch {name!r} of {repo} holds commit {found[:12]}, which {login} did not make: "
            "it is not the writer's branch, so nothing is pushed to it"
        )
    return Branch(name, found, created=False)


async def fetch_copy(
    gateway: GitHubEndpoints,
    repo: str,
    sha: str,
    dest: Path,
    *,
    max_bytes: int = _MAX_ARCHIVE_BYTES,
) -> Copy:
    """Commit ``sha``'s files into ``dest`` (created; must be empty) from GitHub's tarball.

    GitHub answers ``GET .../tarball/{ref}`` with a redirect to a short-lived archive link,
    which the client follows (without the token, on another host). The archive's one top
    directory is dropped. Only regular files and directories are written: a symbolic or hard
    link, a device, an absolute path or a ``..`` is never followed or created (a link could
    point the sandboxed test run outside its copy); links are listed in ``skipped``."""
    response = await gateway.request("GET", f"/repos/{repo_name(repo)}/tarball/{sha}")
    data = response.content
    if len(data) > max_bytes:
        raise UnsafeArchive(f"the archive of {repo}@{sha[:12]} is over {max_bytes} bytes")
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise ValueError(f"{dest} is not empty")
    files = written = 0
    skipped: list[str] = []
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar:
            relative = _inside(member.name)
            if relative is None:
                continue  # the top directory itself, or GitHub's pax header
            if member.isdir():
                (dest / relative).mkdir(parents=True, exist_ok=True)
                continue
            if not member.isfile():
                skipped.append(relative.as_posix())
                continue
            written += member.size
            if written > max_bytes:
                raise UnsafeArchive(f"the files of {repo}@{sha[:12]} are over {max_bytes} bytes")
            source = tar.extractfile(member)
            assert source is not None
            target = dest / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read())
            target.chmod(0o755 if member.mode & 0o111 else 0o644)
            files += 1
    return Copy(dest, sha, files, written, tuple(skipped))


def _inside(name: str) -> PurePosixPath | None:
    """An entry's path below the archive's top directory, or None for the top itself; refuses
    (raises) anything that could leave the copy."""
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or "\\" in name:
        raise UnsafeArchive(f"archive entry {name!r} would leave the copy")
    if name == "pax_global_header" or len(path.parts) < 2:
        return None
    return PurePosixPath(*path.parts[1:])
