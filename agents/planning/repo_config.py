"""``.github/swarm.yaml``: what one repository asks of the swarm, with a strict schema.

The file is read by the bot at the repository's default branch, never at a pull request's head
(a PR author controls the head, and could otherwise skip their own review or add instructions).
Unknown keys and wrong types are refused, and every problem is reported as ``file:line: what``
so a maintainer can fix it without guessing. Instructions in the file are repository guidance:
they reach the model as delimited data, never as a system block.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Collection
from typing import Protocol

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from agents.errors import SwarmError
from agents.posting.findings import Severity
from agents.work import DEFAULT_MAX_COMMENTS, DEFAULT_MIN_SEVERITY, MAX_INLINE
from agents.workspace.policy import DEFAULT_MAX_BYTES, DEFAULT_MAX_FILES, ChangePolicy

CONFIG_PATH = ".github/swarm.yaml"
MAX_CONFIG_BYTES = 64 * 1024
MAX_NODES = 5000
MAX_DEPTH = 16
MAX_NUMBER_CHARS = 32
_YAML = "tag:yaml.org,2002:"
# What a configuration is made of; timestamps, binary, sets and every ``!!python/...`` or
# application tag are refused before anything is constructed.
_PLAIN_TAGS = frozenset(
    _YAML + t for t in ("str", "int", "float", "bool", "null", "seq", "map", "merge")
)
_NUMBER_TAGS = frozenset({_YAML + "int", _YAML + "float"})
INSTRUCTION_CHARS = 2000

# Reviewed by nobody by default: lockfiles, vendored code, generated and minified files.
DEFAULT_EXCLUDES: tuple[str, ...] = (
    "*.lock",
    "package-lock.json",
    "pnpm-lock.yaml",
    "go.sum",
    "npm-shrinkwrap.json",
    "**/vendor/**",
    "**/third_party/**",
    "**/node_modules/**",
    "*_pb2.py",
    "*_pb2_grpc.py",
    "*.pb.go",
    "*.generated.*",
    "*.min.js",
    "*.min.css",
    "*.map",
)

_ROLE = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
_LANGUAGE = re.compile(r"^[A-Za-z][A-Za-z ()-]{1,39}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class PathRules(_Strict):
    include: tuple[str, ...] = ("**",)
    exclude: tuple[str, ...] = ()
    # Turn off to review lockfiles, vendored, generated and minified files too.
    default_excludes: bool = True

    @property
    def excluded(self) -> tuple[str, ...]:
        return (*(DEFAULT_EXCLUDES if self.default_excludes else ()), *self.exclude)


class SkipRules(_Strict):
    authors: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    drafts: bool = True


class Instruction(_Strict):
    paths: tuple[str, ...] = ("**",)
    text: str = Field(min_length=1, max_length=INSTRUCTION_CHARS)


class ReviewRules(_Strict):
    """How loud a review is: findings below ``min_severity`` and beyond ``max_comments`` (the
    most severe first) are not posted inline; the summary counts them."""

    min_severity: Severity = DEFAULT_MIN_SEVERITY
    max_comments: int = Field(default=DEFAULT_MAX_COMMENTS, ge=0, le=MAX_INLINE)


# Fix rounds (agents/kinds/fix.py): how many times the writer answers the reviewer's blocking
# findings before it stops and lists what is left, and the lowest severity that blocks. Three
# rounds is what the peers settled on (fullsend-ai/fullsend#1088); ten is already far past the
# point where a person should look.
DEFAULT_FIX_ROUNDS = 3
MAX_FIX_ROUNDS = 10
# Critical and major findings block; a minor one or a nit is left for the person who reviews.
DEFAULT_BLOCKING: Severity = "major"
# Plan approval (docs/writer.md, "Plan approval"): how long a plan waits for a maintainer's
# decision before the run fails closed. Three days covers a weekend; thirty is the most a
# suspended run is worth keeping.
DEFAULT_APPROVAL_TIMEOUT_S = 3 * 24 * 3600
MAX_APPROVAL_TIMEOUT_S = 30 * 24 * 3600


class WriterRules(_Strict):
    """What the writer may change here: ``protected_paths`` (globs) are added to the defaults,
    which no file removes; the caps can be lowered, never raised (agents/workspace/policy.py).
    ``rounds``: at most this many fix rounds on the reviewer's findings (0: none); ``blocking``:
    the lowest severity of the reviewer's own scale that a fix round answers. ``approval``: the
    writer posts its plan on the issue and writes nothing until someone with write access
    approves it, for at most ``approval_timeout_seconds`` (then nothing is written)."""

    protected_paths: tuple[str, ...] = ()
    max_files: int = Field(default=DEFAULT_MAX_FILES, ge=1, le=DEFAULT_MAX_FILES)
    max_bytes: int = Field(default=DEFAULT_MAX_BYTES, ge=1, le=DEFAULT_MAX_BYTES)
    rounds: int = Field(default=DEFAULT_FIX_ROUNDS, ge=0, le=MAX_FIX_ROUNDS)
    blocking: Severity = DEFAULT_BLOCKING
    approval: bool = False
    approval_timeout_seconds: int = Field(
        default=DEFAULT_APPROVAL_TIMEOUT_S, ge=1, le=MAX_APPROVAL_TIMEOUT_S
    )

    def policy(self) -> ChangePolicy:
        return ChangePolicy.tightened(self.protected_paths, self.max_files, self.max_bytes)


class RepoTests(_Strict):
    """The repository's test command. It runs only in the sandbox (:mod:`agents.confine`), and
    only as the base branch's file says: a command in an issue or at a head is never read."""

    # An argv; one string is split as a shell would split it, and never run by a shell.
    command: tuple[str, ...] = Field(min_length=1, max_length=64)
    timeout_seconds: int = Field(default=300, ge=1, le=3600)

    @field_validator("command", mode="before")
    @classmethod
    def _split_a_line(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                return tuple(shlex.split(value))
            except ValueError as exc:
                raise ValueError(f"not a command line: {exc}") from None
        return value

    @field_validator("command")
    @classmethod
    def _plain_arguments(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value[0] or any("\0" in arg or len(arg) > 4096 for arg in value):
            raise ValueError("a program name, then arguments of at most 4096 characters")
        return value


class RepoConfig(_Strict):
    """One repository's settings; every field has a default, so an empty file is valid."""

    # The roles allowed to work here (None: every role).
    roles: tuple[str, ...] | None = None
    paths: PathRules = PathRules()
    skip: SkipRules = SkipRules()
    instructions: tuple[Instruction, ...] = ()
    max_files: int | None = Field(default=None, ge=1, le=3000)
    language: str | None = None
    review: ReviewRules = ReviewRules()
    # What the writer runs to test a change (None: it runs no tests).
    tests: RepoTests | None = None
    writer: WriterRules = WriterRules()

    @field_validator("roles")
    @classmethod
    def _role_names(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        for name in value or ():
            if not _ROLE.match(name):
                raise ValueError(f"{name!r} is not a role name")
        return value

    @field_validator("language")
    @classmethod
    def _language_name(cls, value: str | None) -> str | None:
        if value is not None and not _LANGUAGE.match(value):
            raise ValueError("a language name such as 'English' or 'Deutsch'")
        return value


class RepoConfigError(SwarmError, ValueError):
    """The file is not valid; ``problems`` are ``file:line: what`` lines; ``digest`` is the
    SHA-256 of the file's text (None when it could not be read), so each version of a broken
    file is reported once."""

    def __init__(self, problems: list[str], digest: str | None = None) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems
        self.digest = digest


def parse_repo_config(
    text: str, source: str = CONFIG_PATH, known_roles: Collection[str] | None = None
) -> RepoConfig:
    """The configuration in ``text``, or :class:`RepoConfigError` naming each problem's line.
    With ``known_roles``, a role the file names that is not one of them is a problem too: a
    misspelt role (``reviewr``) would otherwise switch every real role off in silence."""
    try:
        return _parse(text, source, known_roles)
    except RepoConfigError as exc:
        digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()
        raise RepoConfigError(exc.problems, digest) from None


class FileReads(Protocol):
    """The gateway's one read :func:`config_at` makes, as the bot."""

    async def get_file(self, repo: str, path: str, ref: str | None = None) -> str: ...


async def config_at(gateway: FileReads, repo: str, ref: str | None = None) -> RepoConfig:
    """``repo``'s file at ``ref`` (a commit or a branch; None: the default branch), read as the
    bot: the defaults when there is no file, :class:`RepoConfigError` when it is invalid. What
    an invalid file means is the caller's: the writer refuses to work, a fix discovery skips
    the repository, the plan approval reads it as asking for nothing (the writer's bench then
    refuses). Any other error of GitHub's is raised: unreadable is not absent."""
    from agents.github.errors import GitHubApiError

    try:
        text = await gateway.get_file(repo, CONFIG_PATH, ref=ref)
    except GitHubApiError as exc:
        if exc.status == 404:
            return RepoConfig()
        raise
    return parse_repo_config(text)


def _parse(text: str, source: str, known_roles: Collection[str] | None) -> RepoConfig:
    loaded = _load(text, source)
    if loaded is None:
        return RepoConfig()
    data, root = loaded
    if not isinstance(data, dict):
        raise RepoConfigError([f"{source}:1: the file must be a mapping of settings"])
    try:
        config = RepoConfig.model_validate(_lists_as_tuples(data))
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            loc = error["loc"]
            where = ".".join(str(part) for part in loc) or "(top)"
            message = "unknown key" if error["type"] == "extra_forbidden" else error["msg"]
            problems.append(f"{source}:{_line_of(root, loc)}: {where}: {message}")
        raise RepoConfigError(problems) from None
    unknown = _unknown_roles(config, known_roles)
    if unknown:
        raise RepoConfigError(
            [f"{source}:{_line_of(root, ('roles', i))}: roles.{i}: {what}" for i, what in unknown]
        )
    return config


def _unknown_roles(
    config: RepoConfig, known_roles: Collection[str] | None
) -> list[tuple[int, str]]:
    """(index, what is wrong) for each role of ``roles:`` that is not a known role."""
    if known_roles is None or config.roles is None:
        return []
    from agents.permissions import did_you_mean

    known = set(known_roles)
    return [
        (i, f"unknown role {name!r}{did_you_mean(name, known)} (known: {', '.join(sorted(known))})")
        for i, name in enumerate(config.roles)
        if name not in known
    ]


def _load(text: str, source: str) -> tuple[object, Node] | None:
    """The file's data and its node tree (for line numbers), or None for an empty file.

    Built only after its size, depth, node count and every scalar's tag and length were
    checked; anything PyYAML or Python raises on the way is this file's problem (a
    ``RecursionError``, an integer of 5,000 digits, a ``!!python/...`` tag), never the run's.
    """
    if len(text.encode("utf-8", "replace")) > MAX_CONFIG_BYTES:
        raise RepoConfigError([f"{source}:1: larger than {MAX_CONFIG_BYTES} bytes"])
    try:
        return _compose_and_construct(text, source)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise RepoConfigError([f"{source}:{line}: not valid YAML: {exc.problem}"]) from None
    except (yaml.YAMLError, RecursionError, ValueError, TypeError, OverflowError) as exc:
        if isinstance(exc, RepoConfigError):
            raise
        too_deep = isinstance(exc, RecursionError)
        reason = "nested too deep" if too_deep else " ".join(str(exc).split())[:200]
        raise RepoConfigError([f"{source}:1: not valid YAML: {reason}"]) from None


def _compose_and_construct(text: str, source: str) -> tuple[object, Node] | None:
    _check_depth(text, source)
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        if _count_nodes(root) > MAX_NODES:
            raise RepoConfigError([f"{source}:1: too many YAML nodes (aliases?)"])
        _check_scalars(root, source)
        return loader.construct_document(root), root
    finally:
        loader.dispose()


def _check_depth(text: str, source: str) -> None:
    """Refuse nesting deeper than any configuration needs, from the parser's events (which
    PyYAML makes without recursion), before the recursive composer sees the text."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                line = event.start_mark.line + 1 if event.start_mark else 1
                raise RepoConfigError([f"{source}:{line}: nested deeper than {MAX_DEPTH} levels"])
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _check_scalars(root: Node, source: str) -> None:
    """Every scalar's tag is one of plain YAML's, and no number is longer than any setting."""
    stack = [root]
    while stack:
        node = stack.pop()
        line = node.start_mark.line + 1
        if node.tag not in _PLAIN_TAGS:
            raise RepoConfigError([f"{source}:{line}: the tag {node.tag!r} is not allowed"])
        if isinstance(node, MappingNode):
            stack += [part for pair in node.value for part in pair]
        elif isinstance(node, SequenceNode):
            stack += node.value
        elif node.tag in _NUMBER_TAGS and len(str(node.value)) > MAX_NUMBER_CHARS:
            raise RepoConfigError([f"{source}:{line}: a number longer than {MAX_NUMBER_CHARS}"])


def _lists_as_tuples(value: object) -> object:
    # Strict mode takes a tuple only from a tuple; YAML gives lists.
    if isinstance(value, list):
        return tuple(_lists_as_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _lists_as_tuples(v) for k, v in value.items()}
    return value


def _count_nodes(root: Node) -> int:
    # Aliases share nodes; counting every visit bounds what expanding them would cost.
    count, stack = 0, [root]
    while stack and count <= MAX_NODES:
        node = stack.pop()
        count += 1
        if isinstance(node, MappingNode):
            stack += [part for pair in node.value for part in pair]
        elif isinstance(node, SequenceNode):
            stack += node.value
    return count


def _line_of(root: Node, loc: tuple[int | str, ...]) -> int:
    """The 1-based line of the YAML node at ``loc`` (or of the nearest parent found)."""
    node, line = root, root.start_mark.line + 1
    for part in loc:
        if isinstance(node, MappingNode):
            found = next(
                ((k, v) for k, v in node.value if isinstance(k, ScalarNode) and k.value == part),
                None,
            )
            if found is None:
                break
            line = found[0].start_mark.line + 1
            node = found[1]
        elif isinstance(node, SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line
