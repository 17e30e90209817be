"""What the writer may change: never the protected paths, and no more than the caps allow.

The defaults (DESIGN rule 15) are what steers or runs other code: GitHub's workflows and
settings (``.github/**``, ``CODEOWNERS`` wherever GitHub reads it), the guidance other agents
read (``AGENTS.md``, ``CLAUDE.md`` in any directory), and every dependency manifest and lock
file (a changed dependency runs its code in CI and on every developer's machine). A
repository's base-branch ``.github/swarm.yaml`` can add globs and lower the caps; it can never
remove a default or raise a cap.

Paths are compared case-folded, with the trailing dots and spaces Windows drops removed from
each segment: on a case-insensitive filesystem ``agents.MD`` or ``Package.JSON.`` is the file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agents.planning.globs import matches

# Defaults, small on purpose: one issue's fix, not a rewrite (swarm.yaml may lower them).
DEFAULT_MAX_FILES = 10
DEFAULT_MAX_BYTES = 100 * 1024

# Any directory of this name, and everything in it.
PROTECTED_DIRS: frozenset[str] = frozenset(
    {".git", ".github", ".claude", ".cursor", ".devcontainer"}
)
# These file names in any directory.
PROTECTED_NAMES: frozenset[str] = frozenset(
    {
        # Review ownership (GitHub reads it at the root, docs/ and .github/: any is refused).
        "codeowners",
        # Agent guidance.
        "agents.md",
        "agents.override.md",
        "claude.md",
        "claude.local.md",
        "gemini.md",
        ".cursorrules",
        # Repository plumbing that fetches or runs code.
        ".gitmodules",
        ".pre-commit-config.yaml",
        # Python.
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "pipfile",
        "pipfile.lock",
        "poetry.lock",
        "uv.lock",
        "pdm.lock",
        "pixi.lock",
        "pixi.toml",
        "environment.yml",
        "environment.yaml",
        "tox.ini",
        "noxfile.py",
        "manifest.in",
        # JavaScript.
        "package.json",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "pnpm-workspace.yaml",
        "bun.lock",
        "bun.lockb",
        ".npmrc",
        ".yarnrc",
        ".yarnrc.yml",
        "deno.json",
        "deno.jsonc",
        "deno.lock",
        # Rust, Go, Ruby, PHP.
        "cargo.toml",
        "cargo.lock",
        "go.mod",
        "go.sum",
        "go.work",
        "go.work.sum",
        "gemfile",
        "gemfile.lock",
        "composer.json",
        "composer.lock",
        # JVM, .NET, Apple, others.
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "settings.gradle.kts",
        "gradle.lockfile",
        "gradle-wrapper.properties",
        "packages.config",
        "packages.lock.json",
        "directory.packages.props",
        "directory.build.props",
        "nuget.config",
        "package.swift",
        "package.resolved",
        "podfile",
        "podfile.lock",
        "cartfile",
        "cartfile.resolved",
        "mix.exs",
        "mix.lock",
        "pubspec.yaml",
        "pubspec.lock",
        "rebar.config",
        "rebar.lock",
        "stack.yaml",
        "cabal.project",
        "flake.nix",
        "flake.lock",
        "vcpkg.json",
        "conanfile.txt",
        "conanfile.py",
        "module.bazel",
        "module.bazel.lock",
        "renv.lock",
    }
)
# File names starting and ending so (``requirements-dev.txt``, ``constraints.in``).
PROTECTED_AFFIXES: tuple[tuple[str, str], ...] = (
    ("requirements", ".txt"),
    ("requirements", ".in"),
    ("constraints", ".txt"),
    ("constraints", ".in"),
)
# File name endings: every lock file and package manifest whatever its tool calls it.
PROTECTED_SUFFIXES: tuple[str, ...] = (
    ".lock",
    ".lockb",
    ".lockfile",
    "-lock.json",
    "-lock.yaml",
    ".gemspec",
    ".csproj",
    ".fsproj",
    ".vbproj",
    ".cabal",
    ".nuspec",
)


class ChangeRefused(Exception):
    """A change the writer may not make; the text says which path or cap, for the model."""


def folded(path: str) -> str:
    """``path`` as a case-insensitive filesystem sees it: case-folded, each segment without the
    trailing dots and spaces Windows ignores."""
    return "/".join(part.rstrip(". ") or part for part in path.casefold().split("/"))


def default_protection(path: str) -> str | None:
    """Why ``path`` is protected by default, or None."""
    parts = folded(path).split("/")
    name = parts[-1]
    if any(part in PROTECTED_DIRS for part in parts[:-1]):
        return "GitHub's and agents' settings (.github/ and the like) are protected"
    if name in PROTECTED_NAMES:
        return f"{parts[-1]!r} is protected (ownership, agent guidance or dependencies)"
    if any(name.startswith(a) and name.endswith(b) for a, b in PROTECTED_AFFIXES):
        return "dependency lists are protected"
    if name.endswith(PROTECTED_SUFFIXES):
        return "dependency manifests and lock files are protected"
    return None


@dataclass(frozen=True)
class ChangePolicy:
    """The writer's limits for one repository: the defaults plus the base branch's additions.

    ``extra_protected`` are globs from swarm.yaml (``*`` within a directory, ``**`` across);
    caps above the defaults are clamped to them, so a configuration can only tighten."""

    extra_protected: tuple[str, ...] = ()
    max_files: int = DEFAULT_MAX_FILES
    max_bytes: int = DEFAULT_MAX_BYTES

    @classmethod
    def tightened(
        cls,
        extra_protected: Iterable[str] = (),
        max_files: int | None = None,
        max_bytes: int | None = None,
    ) -> ChangePolicy:
        """The defaults with a repository's additions; a cap above the default stays the default."""
        return cls(
            tuple(extra_protected),
            min(max_files or DEFAULT_MAX_FILES, DEFAULT_MAX_FILES),
            min(max_bytes or DEFAULT_MAX_BYTES, DEFAULT_MAX_BYTES),
        )

    def protection(self, path: str) -> str | None:
        """Why the writer may not change ``path``, or None when it may."""
        reason = default_protection(path)
        if reason is not None:
            return reason
        patterns = [p.casefold() for p in self.extra_protected]
        if patterns and matches(folded(path), patterns):
            return "the repository's .github/swarm.yaml protects this path"
        return None

    def check_path(self, path: str) -> None:
        """Raise :class:`ChangeRefused` when ``path`` is protected."""
        reason = self.protection(path)
        if reason is not None:
            raise ChangeRefused(f"{path}: the writer never changes this file ({reason})")
