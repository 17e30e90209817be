"""The nouns the sandbox GitHub keeps: apps, users, tokens, repos, commits, PRs, issues."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Literal

from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

PERMISSION_LEVELS: dict[str, int] = {"read": 1, "write": 2, "admin": 3}

# The permission keys GitHub accepts when minting; anything else is refused (422).
KNOWN_PERMISSIONS: frozenset[str] = frozenset(
    {
        "actions",
        "administration",
        "checks",
        "contents",
        "deployments",
        "discussions",
        "environments",
        "issues",
        "members",
        "metadata",
        "organization_administration",
        "packages",
        "pages",
        "pull_requests",
        "repository_hooks",
        "secrets",
        "security_events",
        "statuses",
        "vulnerability_alerts",
        "workflows",
    }
)

TokenKind = Literal["installation", "pat_classic", "pat_fine_grained"]


def sha_of(*parts: str) -> str:
    """A deterministic 40-hex id, like a git object name."""
    return hashlib.sha1("\0".join(parts).encode(), usedforsecurity=False).hexdigest()


@dataclass
class User:
    login: str
    id: int
    type: Literal["User", "Bot", "Organization"] = "User"
    name: str | None = None
    site_admin: bool = False


@dataclass
class Registration:
    """What an App made from a manifest asked for (the seeded Apps have none)."""

    permissions: dict[str, str]
    events: list[str]
    hook_url: str | None
    webhook_secret: str | None
    redirect_url: str
    setup_url: str | None
    client_secret: str


@dataclass
class App:
    id: int
    slug: str
    name: str
    owner_login: str
    private_key: RSAPrivateKey
    bot: User
    registration: Registration | None = None
    # What the App subscribes to (GET /app's ``events``); a registration's own when made from
    # a manifest.
    events: list[str] = field(default_factory=list)
    # What the App's registration asks for (GET /app's ``permissions``); an installation grants
    # them once its owner accepts (``Installation.permissions``, which may lag behind).
    permissions: dict[str, str] = field(default_factory=dict)


@dataclass
class Installation:
    id: int
    app_id: int
    account_login: str
    permissions: dict[str, str]
    # None means "all repositories" of the account.
    repository_ids: set[int] | None = None


@dataclass
class Token:
    value: str
    kind: TokenKind
    login: str
    permissions: dict[str, str]
    # None means every repository the owner of the token can see.
    repository_ids: set[int] | None
    expires_at: float | None
    installation_id: int | None = None
    revoked: bool = False
    # A classic PAT's OAuth scopes (sent back as x-oauth-scopes); None for other kinds.
    scopes: tuple[str, ...] | None = None


# A file's content in a tree: text, or bytes for a binary file or one that is not UTF-8.
Blob = str | bytes


@dataclass
class Commit:
    sha: str
    tree: dict[str, Blob]
    parents: list[str]
    message: str
    author_login: str
    at: float
    # The App whose commit GitHub signed (``createCommitOnBranch`` as an App: GitHub signs it
    # and shows it verified); None for a commit pushed unsigned.
    signed_by: str | None = None


@dataclass
class PullFile:
    """One changed file as GitHub lists it. ``patch`` is None where GitHub leaves it out (a
    binary file, a diff over its size limits, a pure rename); ``previous_filename`` names the
    file a rename came from."""

    filename: str
    status: Literal["added", "removed", "modified", "renamed"]
    additions: int
    deletions: int
    patch: str | None
    sha: str
    previous_filename: str | None = None


@dataclass
class Label:
    id: int
    name: str
    color: str = "ededed"
    description: str | None = None


@dataclass
class Reaction:
    id: int
    content: str  # +1, -1, laugh, confused, heart, hooray, rocket, eyes
    user_login: str
    at: float


@dataclass
class ReviewComment:
    id: int
    review_id: int
    pull_number: int
    path: str
    body: str
    commit_id: str
    line: int | None
    side: str
    position: int | None
    diff_hunk: str
    user_login: str
    at: float
    in_reply_to_id: int | None = None
    reactions: list[Reaction] = field(default_factory=list)
    # On the first comment of a thread: who resolved the thread (None while it is open).
    resolved_by: str | None = None
    # Who last resolved or reopened it: the sender of the thread's event.
    thread_changed_by: str | None = None
    # A multi-line comment's first line (``line`` is its last), and that line's side.
    start_line: int | None = None
    start_side: str | None = None


@dataclass
class Review:
    id: int
    pull_number: int
    user_login: str
    body: str
    state: str
    commit_id: str
    at: float
    comment_ids: list[int] = field(default_factory=list)

    @property
    def files_a_reply(self) -> bool:
        """Whether this is the bodyless ``COMMENTED`` review GitHub files a reply in a thread
        under, not a review anyone posted."""
        return self.state == "COMMENTED" and not self.body


@dataclass
class IssueComment:
    id: int
    issue_number: int
    user_login: str
    body: str
    at: float
    # (login, content) pairs, e.g. ("swarm-reviewer[bot]", "eyes").
    reactions: list[tuple[str, str]] = field(default_factory=list)
    # When the text was last replaced (None: never edited), and how many times.
    edited_at: float | None = None
    edits: int = 0


@dataclass
class Issue:
    """An issue; a pull request is an issue with ``pull`` set, sharing the number space."""

    number: int
    title: str
    body: str | None
    user_login: str
    created_at: float
    updated_at: float
    state: Literal["open", "closed"] = "open"
    labels: list[Label] = field(default_factory=list)
    comments: list[IssueComment] = field(default_factory=list)
    pull: Pull | None = None
    # The issue's timeline of label changes, oldest first (``GET .../issues/{n}/events``).
    events: list[IssueEvent] = field(default_factory=list)


@dataclass(frozen=True)
class IssueEvent:
    """One entry of an issue's events: ``labeled`` by ``actor`` at ``at``."""

    id: int
    event: str
    actor: str
    label: str
    at: float


@dataclass
class Pull:
    number: int
    head_ref: str
    head_sha: str
    base_ref: str
    base_sha: str
    files: list[PullFile]
    commit_shas: list[str]
    draft: bool = False
    reviews: list[Review] = field(default_factory=list)
    review_comments: list[ReviewComment] = field(default_factory=list)


@dataclass
class Repo:
    id: int
    owner: User
    name: str
    default_branch: str
    created_at: float
    description: str | None = None
    private: bool = True
    branches: dict[str, str] = field(default_factory=dict)
    commits: dict[str, Commit] = field(default_factory=dict)
    issues: dict[int, Issue] = field(default_factory=dict)
    labels: dict[str, Label] = field(default_factory=dict)
    next_number: int = 1
    # login -> "read" | "write" | "admin": what GET .../collaborators/{login}/permission says.
    collaborators: dict[str, str] = field(default_factory=dict)

    @property
    def full_name(self) -> str:
        return f"{self.owner.login}/{self.name}"

    def resolve(self, ref: str) -> Commit | None:
        """A branch name or a commit SHA (full or abbreviated to >= 7 chars)."""
        if ref in self.branches:
            return self.commits[self.branches[ref]]
        if ref in self.commits:
            return self.commits[ref]
        if len(ref) >= 7:
            for sha, commit in self.commits.items():
                if sha.startswith(ref):
                    return commit
        return None

    def pulls(self) -> list[Issue]:
        return [i for i in self.issues.values() if i.pull is not None]
