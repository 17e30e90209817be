"""What the tools call: typed helpers over :meth:`GitHubGateway.request`, one per REST route.

Each returns GitHub's JSON as the TypedDict of :mod:`agents.github.models` for its resource (why
those and not githubkit's generated models: that module's docstring). The JSON is not validated
on the way in, as it was not before: a TypedDict names the fields GitHub documents, and the
sandbox test holds the sandbox's answers to GitHub's published models.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar
from urllib.parse import quote

from agents.github.committed import RETRY, CommittedFiles, Key, Outcome
from agents.github.errors import GitHubApiError
from agents.github.graphql_policy import check_graphql
from agents.github.models import (
    CollaboratorPermission,
    Issue,
    Label,
    Pull,
    Reaction,
    ReviewComment,
    ReviewThread,
)
from agents.github.paths import repo_name, repo_path
from agents.github.pull_listing import (
    BLOB_FIELDS,
    MAX_PAGES,
    PAGE_SIZES,
    Listing,
    add_page,
    blob_text,
    pulls_query,
    timed_out,
)
from agents.github.pull_snapshots import PullSnapshots
from agents.github.review_threads import RESOLVE_THREAD, REVIEW_THREADS, thread_of
from agents.github.throttled_client import Kept, ThrottledClient
from agents.json_value import JSONObject, JSONValue, as_object, objects, text_or_none
from agents.ratelimit.github.requests import classify_graphql
from agents.ratelimit.github.snapshot import IdentitySnapshot

log = logging.getLogger(__name__)

# The resource a route answers with (a TypedDict of agents.github.models).
T = TypeVar("T")

REVIEW_EVENTS = frozenset({"COMMENT", "APPROVE", "REQUEST_CHANGES"})
# How many pages of 100 one read of a repository's review comments takes at most.
REVIEW_COMMENT_PAGES = 10
REACTIONS = frozenset({"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"})


def _repo(repo: str) -> str:
    return repo_name(repo)


class GitHubEndpoints(ThrottledClient):
    """Typed helpers over :meth:`ThrottledClient.request`, one per route the tools use.

    ``get_pull`` answers a :class:`~agents.github.models.Pull`, as its readers (the tools, the
    writer, fix rounds) take one. ``compare``, ``list_reviews``, ``list_pull_review_comments``
    and the issue-comment writes still answer ``dict[str, Any]``: their readers in the tools and
    the write path annotate ``dict[str, Any]`` or read fields untyped, so neither a TypedDict of
    :mod:`agents.github.models` nor ``JSONObject`` type-checks on both sides yet. They move to
    ``Review`` and ``ReviewComment`` with their readers."""

    # Files read at a commit, shared by the runtime's gateways (None: every read goes to GitHub).
    committed: CommittedFiles | None = None
    # What discovery read of each PR at its head, for the workers reviewing it (None: none kept).
    snapshots: PullSnapshots | None = None

    # -- helpers over request() ---------------------------------------------------------------
    async def _answer(
        self,
        kind: type[T],
        method: str,
        path: str,
        *,
        json: object = None,
        safe_to_retry: bool | None = None,
        mentions: Collection[str] = (),
    ) -> T:
        """GitHub's answer, as the resource ``kind`` the route returns (not validated)."""
        response = await self.request(
            method, path, json=json, safe_to_retry=safe_to_retry, kept=Kept(mentions=mentions)
        )
        answer: T = response.json()
        return answer

    async def _comment(
        self,
        method: str,
        path: str,
        body: str,
        *,
        safe_to_retry: bool = False,
        mentions: Collection[str] = (),
    ) -> dict[str, Any]:
        """Write a comment's text (a new comment, a reply, or a replacement); the comment."""
        return await self._answer(
            dict,
            method,
            path,
            json={"body": body},
            safe_to_retry=safe_to_retry,
            mentions=mentions,
        )

    async def _paged(
        self,
        kind: type[T],
        path: str,
        params: Mapping[str, str] | None = None,
        *,
        max_pages: int = 30,
    ) -> list[T]:
        return (await self._pages(kind, path, params, max_pages=max_pages))[0]

    async def _pages(
        self,
        kind: type[T],
        path: str,
        params: Mapping[str, str] | None = None,
        *,
        max_pages: int = 30,
    ) -> tuple[list[T], bool]:
        """The items (each a ``kind``, not validated) of up to ``max_pages`` pages, and whether
        they are all (no page left)."""
        per_page = 100
        items: list[T] = []
        for page in range(1, max_pages + 1):
            response = await self.request(
                "GET", path, params={**(params or {}), "per_page": per_page, "page": page}
            )
            answer = response.json()
            if not isinstance(answer, list):
                raise GitHubApiError(response.status_code, "GET", path, "expected a JSON list")
            batch: list[T] = answer
            items.extend(batch)
            if len(batch) < per_page or "next" not in response.links:
                return items, True
        return items, False

    # -- what the tools call ------------------------------------------------------------------
    async def get_pull(self, repo: str, number: int) -> Pull:
        return await self._answer(Pull, "GET", f"/repos/{_repo(repo)}/pulls/{number}")

    async def list_open_pulls(self, repo: str, config_path: str) -> Listing:
        """The open PRs of ``repo`` with their latest reviews, and the file at ``config_path``
        on the default branch: one GraphQL query a page (:mod:`agents.github.pull_listing`)."""
        owner, name = _repo(repo).split("/", 1)
        listing = Listing()
        config = f"HEAD:{config_path}"  # HEAD: the default branch
        after: str | None = None
        sizes = list(PAGE_SIZES)
        pages = 0
        while pages < MAX_PAGES:
            variables = {"owner": owner, "name": name, "after": after, "config": config}
            try:
                # Not retried as it is: a page that timed out is asked again smaller.
                data = await self.graphql(pulls_query(sizes[0]), variables, safe_to_retry=False)
            except GitHubApiError as exc:
                if not timed_out(exc.status, exc.message) or len(sizes) == 1:
                    raise
                log.warning(
                    "listing %s: a page of %d PRs timed out (%d); asking for %d",
                    repo,
                    sizes[0],
                    exc.status,
                    sizes[1],
                )
                sizes.pop(0)
                continue
            pages += 1
            more, after = add_page(listing, repo, data)
            if not more:
                break
        return listing

    async def list_pull_files(self, repo: str, number: int) -> list[JSONObject]:
        # GitHub lists at most 3000 files: 30 pages of 100.
        return await self._paged(JSONObject, f"/repos/{_repo(repo)}/pulls/{number}/files")

    async def get_file(self, repo: str, path: str, ref: str | None = None) -> str:
        """A file's text at ``ref`` (None: the default branch), over REST."""
        return await self._read_file(repo, path, ref)

    async def get_files(
        self, repo: str, paths: Sequence[str], ref: str | None = None
    ) -> dict[str, str | None]:
        """The text of each of ``paths`` at ``ref`` (None: the default branch), None for one
        that is not there. At a commit SHA, what this identity read there before is not read
        again (a file at a commit never changes; :mod:`agents.github.committed`), and the rest
        are read together in one GraphQL query, not one REST read each. Only the caller knows
        the read is one every holder of the identity may make."""
        committed = self.committed
        keys = {p: CommittedFiles.key(self.identity, repo, p, ref) for p in paths}
        found: dict[str, str | None] = {}
        waiting: dict[str, tuple[Key, Future[Outcome]]] = {}
        mine: dict[str, tuple[Key, Future[Outcome]] | None] = {}
        for path, key in keys.items():
            if committed is None or key is None:
                mine[path] = None
                continue
            outcome, first = committed.claim(key)
            (mine if first else waiting)[path] = (key, outcome)
        settled: dict[str, object] = {}
        try:
            if mine:
                read = await self._read_files(repo, list(mine), ref)
                settled.update(read)
                found.update(read)
        finally:
            for path, claimed in mine.items():
                if claimed is not None and committed is not None:
                    committed.settle(claimed[0], settled.get(path, RETRY))
        for path, (_key, outcome) in waiting.items():
            known = await asyncio.wrap_future(outcome)
            if known is RETRY:
                found.update(await self._read_files(repo, [path], ref))
            else:
                found[path] = known if isinstance(known, str) else None
        return {p: found.get(p) for p in paths}

    async def _read_files(
        self, repo: str, paths: Sequence[str], ref: str | None
    ) -> dict[str, str | None]:
        owner, name = _repo(repo).split("/", 1)
        variables: dict[str, str] = {"owner": owner, "name": name}
        asked, wanted = [], []
        for n, path in enumerate(paths):
            variables[f"e{n}"] = f"{ref or 'HEAD'}:{path}"
            wanted.append(f"$e{n}: String!")
            asked.append(f"f{n}: object(expression: $e{n}) {{ {BLOB_FIELDS} }}")
        document = (
            f"query($owner: String!, $name: String!, {', '.join(wanted)}) {{"
            f" repository(owner: $owner, name: $name) {{ {' '.join(asked)} }} }}"
        )
        data = await self.graphql(document, variables, safe_to_retry=True)
        repository = data.get("repository")
        if not isinstance(repository, Mapping):
            raise GitHubApiError(404, "POST", "/graphql", f"no repository {repo}")
        return {path: blob_text(repository.get(f"f{n}")) for n, path in enumerate(paths)}

    async def _read_file(self, repo: str, path: str, ref: str | None) -> str:
        response = await self.request(
            "GET",
            f"/repos/{_repo(repo)}/contents/{repo_path(path)}",
            params={"ref": ref} if ref else None,
            headers={"Accept": "application/vnd.github.raw+json"},
        )
        # GitHub labels a raw file "application/vnd.github.raw+json" (the "+json" names the
        # media type asked for, not the body); a directory or a submodule comes back as JSON.
        media = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media.endswith("json") and not media.startswith("application/vnd.github.raw"):
            body = response.json()
            if isinstance(body, Mapping) and body.get("encoding") == "base64":
                return base64.b64decode(str(body.get("content", ""))).decode("utf-8", "replace")
            if isinstance(body, Mapping) and isinstance(body.get("content"), str):
                return str(body["content"])
            raise GitHubApiError(response.status_code, "GET", "contents", f"{path!r} is not a file")
        return response.text

    async def compare(self, repo: str, base: str, head: str) -> dict[str, Any]:
        basehead = f"{quote(base, safe='')}...{quote(head, safe='')}"
        return await self._answer(dict, "GET", f"/repos/{_repo(repo)}/compare/{basehead}")

    async def list_reviews(self, repo: str, number: int) -> list[dict[str, Any]]:
        return await self._paged(dict, f"/repos/{_repo(repo)}/pulls/{number}/reviews")

    async def create_review(
        self,
        repo: str,
        number: int,
        body: str,
        event: str = "COMMENT",
        commit_id: str | None = None,
        comments: Sequence[Mapping[str, object]] | None = None,
        *,
        safe_to_retry: bool = False,
        mentions: Collection[str] = (),
    ) -> JSONObject:
        """Post a review; ``mentions`` (here and in the other writes of text) names the logins
        the calling code means to ping: every other mention is neutralised on the way out."""
        if event not in REVIEW_EVENTS:
            raise ValueError(f"review event must be one of {sorted(REVIEW_EVENTS)}, got {event!r}")
        payload: dict[str, object] = {"body": body, "event": event}
        if commit_id:
            payload["commit_id"] = commit_id
        if comments:
            payload["comments"] = comments
        return await self._answer(
            JSONObject,
            "POST",
            f"/repos/{_repo(repo)}/pulls/{number}/reviews",
            json=payload,
            safe_to_retry=safe_to_retry,
            mentions=mentions,
        )

    async def create_issue_comment(
        self, repo: str, number: int, body: str, *, mentions: Collection[str] = ()
    ) -> dict[str, Any]:
        path = f"/repos/{_repo(repo)}/issues/{number}/comments"
        return await self._comment("POST", path, body, mentions=mentions)

    async def add_labels(self, repo: str, number: int, labels: list[str]) -> list[Label]:
        # Adding a label twice leaves the same labels: safe to repeat.
        return await self._answer(
            list[Label],
            "POST",
            f"/repos/{_repo(repo)}/issues/{number}/labels",
            json={"labels": labels},
            safe_to_retry=True,
        )

    async def list_issues(
        self, repo: str, state: str = "open", labels: list[str] | None = None
    ) -> list[Issue]:
        if state not in ("open", "closed", "all"):
            raise ValueError(f"state must be 'open', 'closed' or 'all', got {state!r}")
        params = {"state": state}
        if labels:
            params["labels"] = ",".join(labels)
        return await self._paged(Issue, f"/repos/{_repo(repo)}/issues", params, max_pages=10)

    async def add_comment_reaction(self, repo: str, comment_id: int, content: str) -> None:
        """React to an issue or PR conversation comment; reacting twice keeps one reaction."""
        if content not in REACTIONS:
            raise ValueError(f"reaction must be one of {sorted(REACTIONS)}, got {content!r}")
        await self.request(
            "POST",
            f"/repos/{_repo(repo)}/issues/comments/{int(comment_id)}/reactions",
            json={"content": content},
            safe_to_retry=True,
        )

    async def update_issue_comment(
        self, repo: str, comment_id: int, body: str, *, mentions: Collection[str] = ()
    ) -> dict[str, Any]:
        """Replace a conversation comment's text; the same text twice is the same comment."""
        path = f"/repos/{_repo(repo)}/issues/comments/{int(comment_id)}"
        return await self._comment("PATCH", path, body, safe_to_retry=True, mentions=mentions)

    async def reply_to_review_comment(
        self,
        repo: str,
        number: int,
        comment_id: int,
        body: str,
        *,
        mentions: Collection[str] = (),
    ) -> ReviewComment:
        """A reply in the review thread of ``comment_id`` (the thread's first comment)."""
        path = f"/repos/{_repo(repo)}/pulls/{int(number)}/comments/{int(comment_id)}/replies"
        return await self._answer(
            ReviewComment, "POST", path, json={"body": body}, mentions=mentions
        )

    async def resolve_review_thread(self, thread_id: str) -> bool:
        """Resolve a review thread (GraphQL node id ``PRRT_...``; REST cannot); whether it is
        resolved now. Resolving a resolved thread changes nothing, so it is safe to repeat."""
        data = await self.graphql(RESOLVE_THREAD, {"thread": thread_id}, safe_to_retry=True)
        thread = as_object(as_object(data.get("resolveReviewThread")).get("thread"))
        return bool(thread.get("isResolved"))

    async def list_issue_comments(self, repo: str, number: int) -> list[JSONObject]:
        path = f"/repos/{_repo(repo)}/issues/{number}/comments"
        return await self._paged(JSONObject, path, max_pages=10)

    async def get_issue(self, repo: str, number: int) -> Issue:
        return await self._answer(Issue, "GET", f"/repos/{_repo(repo)}/issues/{number}")

    async def list_repo_review_comments(
        self, repo: str, since: str | None = None
    ) -> list[JSONObject]:
        """Every review comment of the repository, replies included (``in_reply_to_id``)."""
        return (await self.read_repo_review_comments(repo, since))[0]

    async def read_repo_review_comments(
        self, repo: str, since: str | None = None
    ) -> tuple[list[JSONObject], bool]:
        """The repository's review comments last updated at or after ``since`` (ISO 8601; None:
        all), oldest id first as GitHub lists them, and whether that is all of them (False: more
        pages were left than one read takes, ``REVIEW_COMMENT_PAGES``)."""
        params = {"since": since} if since else None
        path = f"/repos/{_repo(repo)}/pulls/comments"
        return await self._pages(JSONObject, path, params, max_pages=REVIEW_COMMENT_PAGES)

    async def list_pull_review_comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        """The review comments of one pull request, replies included (``in_reply_to_id``)."""
        path = f"/repos/{_repo(repo)}/pulls/{int(number)}/comments"
        return await self._paged(dict, path, max_pages=10)

    async def list_review_comment_reactions(self, repo: str, comment_id: int) -> list[Reaction]:
        return await self._paged(
            Reaction,
            f"/repos/{_repo(repo)}/pulls/comments/{int(comment_id)}/reactions",
            max_pages=3,
        )

    async def list_review_threads(self, repo: str, number: int) -> list[ReviewThread]:
        """The pull request's review threads: resolved or not, by whom, and the first comment's
        id (GraphQL: REST does not say whether a thread is resolved)."""
        owner, name = _repo(repo).split("/", 1)
        threads: list[ReviewThread] = []
        after: str | None = None
        for _page in range(10):
            data = await self.graphql(
                REVIEW_THREADS,
                {"owner": owner, "name": name, "number": int(number), "after": after},
                safe_to_retry=True,
            )
            pull = as_object(as_object(data.get("repository")).get("pullRequest"))
            page = as_object(pull.get("reviewThreads"))
            threads.extend(thread_of(node) for node in objects(page.get("nodes")))
            info = as_object(page.get("pageInfo"))
            after = text_or_none(info.get("endCursor"))
            if not info.get("hasNextPage") or not after:
                break
        return threads

    async def collaborator_permission(self, repo: str, login: str) -> str:
        """``admin``, ``maintain``, ``write``, ``triage``, ``read`` or ``none`` for ``login``."""
        path = f"/repos/{_repo(repo)}/collaborators/{quote(login, safe='')}/permission"
        try:
            body = await self._answer(CollaboratorPermission, "GET", path)
        except GitHubApiError as exc:
            if exc.status == 404:  # not a collaborator, or no such user
                return "none"
            raise
        role = body.get("role_name") if isinstance(body, Mapping) else None
        permission = body.get("permission") if isinstance(body, Mapping) else None
        return str(role if role in ("maintain", "triage") else permission or "none")

    async def graphql(
        self,
        query: str,
        variables: Mapping[str, object] | None = None,
        *,
        safe_to_retry: bool = False,
        verbatim: Mapping[str, str] | None = None,
    ) -> JSONObject:
        """Run an allow-listed GraphQL operation; anything else is refused before sending.
        ``verbatim``: see :meth:`ThrottledClient.request`."""
        operation = check_graphql(query)
        spec = classify_graphql(
            is_mutation=operation.kind == "mutation",
            creates_content=operation.creates_content,
            limits=self.throttle.limits,
            primary_cost=operation.primary_cost,
        )
        response = await self.request(
            "POST",
            "/graphql",
            json={"query": query, "variables": dict(variables or {})},
            safe_to_retry=safe_to_retry,
            spec=spec,
            kept=Kept(verbatim=verbatim),
        )
        body: JSONValue = response.json()
        errors = body.get("errors") if isinstance(body, dict) else None
        if errors:
            text = "; ".join(str(e.get("message", e)) for e in objects(errors))
            raise GitHubApiError(response.status_code, "POST", "/graphql", text or "GraphQL error")
        return as_object(as_object(body).get("data"))

    async def viewer_login(self) -> str:
        data = await self.graphql("query { viewer { login } }")
        viewer = data["viewer"]
        if not isinstance(viewer, dict):
            raise KeyError("viewer")
        return str(viewer["login"])

    async def rate_limit(self) -> JSONObject:
        """``GET /rate_limit`` (free of charge); its figures also refresh the buckets."""
        body = as_object((await self.request("GET", "/rate_limit")).json())
        await self.throttle.absorb_rate_limit_body(body)
        return body

    async def snapshot(self) -> IdentitySnapshot:
        return await self.throttle.snapshot()
