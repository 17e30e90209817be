"""Everything the sandbox GitHub knows, behind one lock, plus the knobs tests turn."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal

from cryptography.hazmat.primitives import serialization

from sandbox.github.clock import SandboxClock
from sandbox.github.diffs import tree_diff
from sandbox.github.hook_log import HookLog
from sandbox.github.limits import RateLimiter, RateLimits
from sandbox.github.model import (
    App,
    Blob,
    Commit,
    Installation,
    Issue,
    IssueComment,
    IssueEvent,
    Label,
    Pull,
    Repo,
    ReviewComment,
    Token,
    User,
    sha_of,
)
from sandbox.github.records import (
    FailureRule,
    IdentityCounters,
    Knobs,
    RecordedRequest,
    TokenFormat,
)
from sandbox.github.tokens import new_token_value

# (event, action, repo, issue, comment, label, sender): see SandboxState.listeners.
Listener = Callable[
    [str, str, Repo, Issue, IssueComment | ReviewComment | None, Label | None, str | None], None
]

__all__ = ["FailureRule", "IdentityCounters", "Knobs", "RecordedRequest", "SandboxState"]


class SandboxState:
    """Apps, users, tokens, repos and the request log. Seeded unless ``seed=False``."""

    def __init__(
        self,
        clock: SandboxClock | None = None,
        limits: RateLimits | None = None,
        *,
        token_format: TokenFormat | None = None,
        seed: bool = True,
    ) -> None:
        self.lock = threading.RLock()
        self.clock = clock or SandboxClock()
        self.limits = limits or RateLimits()
        self.limiter = RateLimiter(self.limits)
        self.knobs = Knobs() if token_format is None else Knobs(token_format=token_format)
        self.failures: list[FailureRule] = []
        self.requests: list[RecordedRequest] = []
        # Each file GraphQL's ``object(expression:)`` was asked for: (login, repo, "REF:path").
        self.blob_reads: list[tuple[str, str, str]] = []
        # Repositories whose GraphQL reads answer an error (see ``fail_graphql_repository``).
        self.graphql_repository_errors: dict[str, str] = {}
        self.users: dict[str, User] = {}
        self.apps: dict[int, App] = {}
        self.installations: dict[int, Installation] = {}
        self.repos: dict[str, Repo] = {}
        self.tokens: dict[str, Token] = {}
        # The manifest flow's one-time codes: code -> (App id, when it lapses).
        self.manifest_codes: dict[str, tuple[int, float]] = {}
        # The tarball redirects' links: code -> (repository, commit SHA, when it lapses).
        self.archive_links: dict[str, tuple[str, str, float]] = {}
        self._ids = itertools.count(100_000)
        self.maintainer_pat = ""
        self.bot_pat = ""
        # Called as (event, action, repo, issue, comment, label, sender) when something a
        # webhook reports happens: see sandbox.github.webhooks. ``label`` is the label an
        # ``issues``/``pull_request`` ``labeled`` event names; ``sender`` who acted, where that is
        # not the author of what the event carries (None: the author).
        # Every webhook delivery attempt, as GitHub keeps them for ``GET /app/hook/deliveries``.
        self.hook_log = HookLog()
        self.listeners: list[Listener] = []
        if seed:
            from sandbox.github.seed import seed_state

            seed_state(self)

    def next_id(self) -> int:
        return next(self._ids)

    def emit(
        self,
        event: str,
        action: str,
        repo: Repo,
        issue: Issue,
        comment: IssueComment | ReviewComment | None = None,
        *,
        label: Label | None = None,
        sender: str | None = None,
    ) -> None:
        with self.lock:
            for listener in list(self.listeners):
                listener(event, action, repo, issue, comment, label, sender)

    # ---- lookups -------------------------------------------------------------------

    def find_repo(self, full_name: str) -> Repo | None:
        return self.repos.get(full_name.lower())

    def repo(self, full_name: str) -> Repo:
        repo = self.find_repo(full_name)
        if repo is None:
            raise KeyError(f"no sandbox repository {full_name!r}")
        return repo

    def repo_by_id(self, repo_id: int) -> Repo | None:
        return next((r for r in self.repos.values() if r.id == repo_id), None)

    def installation_repos(self, inst: Installation) -> list[Repo]:
        return [
            r
            for r in self.repos.values()
            if r.owner.login == inst.account_login
            and (inst.repository_ids is None or r.id in inst.repository_ids)
        ]

    def app_by_slug(self, slug: str) -> App:
        return next(a for a in self.apps.values() if a.slug == slug)

    def private_key_pem(self, app_id: int) -> str:
        return (
            self.apps[app_id]
            .private_key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
            .decode()
        )

    def pull(self, full_name: str, number: int) -> Issue:
        issue = self.repo(full_name).issues.get(number)
        if issue is None or issue.pull is None:
            raise KeyError(f"no pull request #{number} in {full_name}")
        return issue

    def requests_by(self, login: str) -> list[RecordedRequest]:
        with self.lock:
            return [r for r in self.requests if r.login == login]

    # ---- building the world --------------------------------------------------------

    def add_user(
        self,
        login: str,
        *,
        type: Literal["User", "Bot", "Organization"] = "User",
        name: str | None = None,
    ) -> User:
        with self.lock:
            user = User(login=login, id=self.next_id(), type=type, name=name)
            self.users[login] = user
            return user

    def add_pat(
        self,
        login: str,
        *,
        fine_grained: bool = False,
        permissions: dict[str, str] | None = None,
        repositories: list[str] | None = None,
        expires_at: float | None = None,
        scopes: tuple[str, ...] = ("repo",),
    ) -> str:
        """A personal access token for ``login``; ``repositories`` None = all it can see.
        A classic PAT carries ``scopes`` (GitHub lists them in ``x-oauth-scopes``)."""
        with self.lock:
            value = new_token_value("github_pat_" if fine_grained else "ghp_")
            repo_ids = None if repositories is None else {self.repo(n).id for n in repositories}
            self.tokens[value] = Token(
                value=value,
                kind="pat_fine_grained" if fine_grained else "pat_classic",
                login=login,
                permissions=permissions or {},
                repository_ids=repo_ids,
                expires_at=expires_at,
                scopes=None if fine_grained else tuple(scopes),
            )
            return value

    def mint_token(
        self,
        installation_id: int,
        *,
        repositories: list[str] | None = None,
        permissions: dict[str, str] | None = None,
    ) -> str:
        """An installation token without the HTTP round trip (same rules as the endpoint)."""
        from sandbox.github.tokens import MintRequest, mint

        with self.lock:
            token, _ = mint(self, installation_id, MintRequest(repositories, None, permissions))
            return token.value

    def add_repo(
        self,
        full_name: str,
        files: Mapping[str, Blob],
        *,
        default_branch: str = "main",
        description: str | None = None,
    ) -> Repo:
        with self.lock:
            owner_login, name = full_name.split("/", 1)
            owner = self.users.get(owner_login) or self.add_user(owner_login, type="Organization")
            repo = Repo(
                id=self.next_id(),
                owner=owner,
                name=name,
                default_branch=default_branch,
                created_at=self.clock.now() - 86400 * 90,
                description=description,
            )
            root = self._commit(repo, None, files, "Initial commit", owner_login, replace=True)
            repo.branches[default_branch] = root.sha
            self.repos[full_name.lower()] = repo
            return repo

    def _commit(
        self,
        repo: Repo,
        parent: Commit | None,
        changes: Mapping[str, Blob | None],
        message: str,
        author: str,
        *,
        replace: bool = False,
        signed_by: str | None = None,
    ) -> Commit:
        tree = _applied({} if replace or parent is None else parent.tree, changes)
        parent_sha = parent.sha if parent else ""
        sha = sha_of(repo.full_name, parent_sha, message, repr(sorted(tree.items())))
        commit = Commit(
            sha,
            tree,
            [parent_sha] if parent else [],
            message,
            author,
            self.clock.now(),
            signed_by=signed_by,
        )
        repo.commits[sha] = commit
        return commit

    def add_pull(
        self,
        full_name: str,
        title: str,
        changes: Mapping[str, Blob | None],
        *,
        body: str | None = None,
        author: str = "octo-contributor",
        base: str | None = None,
        head_ref: str | None = None,
        draft: bool = False,
    ) -> Issue:
        """Open a PR whose head commit applies ``changes`` (path -> new text, None deletes)."""
        with self.lock:
            repo = self.repo(full_name)
            if author not in self.users:
                self.add_user(author)
            base_ref = base or repo.default_branch
            base_commit = repo.commits[repo.branches[base_ref]]
            number = repo.next_number
            repo.next_number += 1
            head = head_ref or f"{author}/change-{number}"
            commit = self._commit(repo, base_commit, changes, title, author)
            repo.branches[head] = commit.sha
            now = self.clock.now()
            pull = Pull(
                number=number,
                head_ref=head,
                head_sha=commit.sha,
                base_ref=base_ref,
                base_sha=base_commit.sha,
                files=tree_diff(base_commit.tree, commit.tree),
                commit_shas=[commit.sha],
                draft=draft,
            )
            issue = Issue(number, title, body, author, now, now, pull=pull)
            repo.issues[number] = issue
            self.emit("pull_request", "opened", repo, issue)
            return issue

    def push_commit(
        self,
        full_name: str,
        number: int,
        changes: Mapping[str, Blob | None],
        message: str = "Address review",
        *,
        force: bool = False,
    ) -> str:
        """A new commit of ``changes`` on the PR's head branch; returns the new head SHA. With
        ``force`` (``git push --force``) the head branch is replaced by that one commit on the
        PR's base, and the earlier commits leave the PR."""
        with self.lock:
            repo = self.repo(full_name)
            issue = self.pull(full_name, number)
            pull = issue.pull
            assert pull is not None
            parent = repo.commits[pull.base_sha if force else pull.head_sha]
            commit = self._commit(repo, parent, changes, message, issue.user_login)
            kept = [] if force else pull.commit_shas
            return self._new_head(repo, issue, commit, [*kept, commit.sha])

    def change_pull(self, full_name: str, number: int, action: str) -> Issue:
        """A PR closed, reopened or marked ready for review, as its author or a maintainer does
        on GitHub; the ``pull_request`` event of that action follows."""
        if action not in ("closed", "reopened", "ready_for_review", "converted_to_draft"):
            raise ValueError(f"not a change of a pull request: {action}")
        with self.lock:
            issue = self.pull(full_name, number)
            assert issue.pull is not None
            if action in ("ready_for_review", "converted_to_draft"):
                issue.pull.draft = action == "converted_to_draft"
            else:
                issue.state = "closed" if action == "closed" else "open"
            issue.updated_at = self.clock.now()
            self.emit("pull_request", action, self.repo(full_name), issue)
            return issue

    def sha_for(
        self, full_name: str, parent_sha: str, changes: Mapping[str, Blob | None], message: str
    ) -> str:
        """The SHA the commit of ``changes`` on ``parent_sha`` will have, before it exists: a PR
        author knows a commit's name before pushing it."""
        repo = self.repo(full_name)
        tree = _applied(repo.commits[parent_sha].tree, changes)
        return sha_of(repo.full_name, parent_sha, message, repr(sorted(tree.items())))

    def _new_head(self, repo: Repo, issue: Issue, commit: Commit, shas: list[str]) -> str:
        """``commit`` becomes the PR's head, ``shas`` its commits; GitHub says so by webhook."""
        pull = issue.pull
        assert pull is not None
        repo.branches[pull.head_ref] = commit.sha
        pull.head_sha = commit.sha
        pull.commit_shas = shas
        pull.files = tree_diff(repo.commits[pull.base_sha].tree, commit.tree)
        issue.updated_at = self.clock.now()
        self.emit("pull_request", "synchronize", repo, issue)
        return commit.sha

    def commit_as(
        self,
        repo: Repo,
        branch: str,
        changes: Mapping[str, Blob | None],
        message: str,
        author: str,
        *,
        signed_by: str | None = None,
    ) -> Commit:
        """A commit of ``changes`` on ``branch``'s head, made through the API by ``author``;
        the branch moves to it, and an open pull request whose head it is gets the commit (and
        its ``synchronize`` event), as a push does. Caller holds the lock."""
        parent = repo.commits[repo.branches[branch]]
        commit = self._commit(repo, parent, changes, message, author, signed_by=signed_by)
        repo.branches[branch] = commit.sha
        for issue in repo.pulls():
            pull = issue.pull
            if pull is not None and issue.state == "open" and pull.head_ref == branch:
                self._new_head(repo, issue, commit, [*pull.commit_shas, commit.sha])
        return commit

    def commit_to_branch(
        self,
        full_name: str,
        changes: Mapping[str, Blob | None],
        *,
        branch: str | None = None,
        message: str = "Update",
        author: str = "octo-maintainer",
    ) -> str:
        """A new commit on ``branch`` (default: the default branch); returns its SHA."""
        with self.lock:
            repo = self.repo(full_name)
            name = branch or repo.default_branch
            commit = self._commit(repo, repo.commits[repo.branches[name]], changes, message, author)
            repo.branches[name] = commit.sha
            return commit.sha

    def add_issue(
        self,
        full_name: str,
        title: str,
        body: str | None = None,
        *,
        author: str = "octo-contributor",
        labels: list[str] | None = None,
    ) -> Issue:
        with self.lock:
            repo = self.repo(full_name)
            if author not in self.users:
                self.add_user(author)
            now = self.clock.now()
            issue = Issue(repo.next_number, title, body, author, now, now)
            repo.next_number += 1
            issue.labels = [self.label(repo, name) for name in labels or []]
            repo.issues[issue.number] = issue
            self.emit("issues", "opened", repo, issue)
            return issue

    def add_comment(
        self, full_name: str, number: int, body: str, *, author: str = "octo-maintainer"
    ) -> IssueComment:
        """A person's comment on an issue or PR (the API route is for tokens)."""
        with self.lock:
            repo = self.repo(full_name)
            issue = repo.issues[number]
            if author not in self.users:
                self.add_user(author, type="Bot" if author.endswith("[bot]") else "User")
            comment = IssueComment(self.next_id(), number, author, body, self.clock.now())
            issue.comments.append(comment)
            issue.updated_at = comment.at
            self.emit("issue_comment", "created", repo, issue, comment)
            return comment

    def label_issue(self, full_name: str, number: int, name: str, *, by: str) -> Label:
        """``by`` adds the label ``name`` to an issue or PR (a person in the web UI or a token
        through ``POST .../issues/{n}/labels``). GitHub sends ``issues`` (``pull_request`` on a
        PR) ``labeled`` naming the label and the sender, only when the label was not there:
        docs.github.com/webhooks/webhook-events-and-payloads#issues (action ``labeled``)."""
        with self.lock:
            repo = self.repo(full_name)
            issue = repo.issues[number]
            if by not in self.users:
                self.add_user(by, type="Bot" if by.endswith("[bot]") else "User")
            lbl = self.label(repo, name)
            if lbl not in issue.labels:
                issue.labels.append(lbl)
                issue.updated_at = self.clock.now()
                issue.events.append(
                    IssueEvent(self.next_id(), "labeled", by, lbl.name, issue.updated_at)
                )
                event = "pull_request" if issue.pull is not None else "issues"
                self.emit(event, "labeled", repo, issue, label=lbl, sender=by)
            return lbl

    def label(self, repo: Repo, name: str) -> Label:
        with self.lock:
            if name not in repo.labels:
                repo.labels[name] = Label(id=self.next_id(), name=name)
            return repo.labels[name]

    # ---- knobs and bookkeeping -----------------------------------------------------

    def inject_failure(
        self,
        route: str | None = None,
        *,
        status: int = 502,
        count: int = 1,
        method: str | None = None,
        path: str | None = None,
        after_handling: bool = False,
    ) -> None:
        """The next ``count`` requests to ``route`` answer ``status``.

        ``route`` is a template like ``/repos/{owner}/{repo}/pulls`` (None: any route);
        ``path`` narrows it to one exact request path (``/repos/acme/gadgets/pulls``). With
        ``after_handling`` the request is carried out first (a review is stored) and only its
        answer is replaced: the "stored, then answered 502" case of a lost write.
        """
        with self.lock:
            self.failures.append(
                FailureRule(route, status, count, method, path, after_handling=after_handling)
            )

    def fail_graphql_repository(self, full_name: str, kind: str) -> None:
        """GraphQL reads of ``full_name`` answer an error as GitHub does, with HTTP 200 and the
        rest of the answer intact: ``NOT_FOUND`` (a repository the token cannot see),
        ``FORBIDDEN`` (a permission it lacks), or ``INTERNAL`` (GitHub's "Something went wrong
        while executing your query", its answer to a query that timed out)."""
        with self.lock:
            self.graphql_repository_errors[full_name.lower()] = kind

    def take_failure(
        self, method: str, route: str, path: str | None = None, *, after_handling: bool = False
    ) -> int | None:
        with self.lock:
            for rule in self.failures:
                if (
                    rule.remaining > 0
                    and rule.after_handling == after_handling
                    and rule.route in (None, route)
                    and rule.method in (None, method)
                    and rule.path in (None, path)
                ):
                    rule.remaining -= 1
                    return rule.status
            return None

    def counter(self, login: str) -> IdentityCounters:
        return IdentityCounters.of(self.requests_by(login))

    @property
    def counters(self) -> dict[str, IdentityCounters]:
        """Every login that made a request, with its counts."""
        with self.lock:
            logins = {r.login for r in self.requests if r.login is not None}
        return {login: self.counter(login) for login in sorted(logins)}

    def write_credentials(self, directory: str | Path, api_url: str) -> Path:
        """Write ``<slug>.pem`` per App and a ``sandbox.env`` with the SWARM_* settings."""
        from sandbox.github.seed import write_credentials

        return write_credentials(self, Path(directory), api_url)


def _applied(tree: Mapping[str, Blob], changes: Mapping[str, Blob | None]) -> dict[str, Blob]:
    """``tree`` with ``changes`` made (path -> new content, None deletes)."""
    out = dict(tree)
    for path, content in changes.items():
        if content is None:
            out.pop(path, None)
        else:
            out[path] = content
    return out
