"""``createCommitOnBranch``: the one way a worker commits, signed by GitHub.

docs.github.com/graphql/reference/mutations#createcommitonbranch: the commit's parent is the
branch's head, the branch moves to it; it is authored by the owner of the credential (an App's
bot) and committed as the web interface commits (GitHub's web-flow), which GitHub signs
(anthropics/claude-code-action#1511: REST git-data commits are unsigned, these are signed as the
App). ``expectedHeadOid`` must be the branch's head, or the mutation fails with ``STALE_DATA``
"Expected branch to point to "<oid>" but it did not.  Pull and try again."
(ministryofjustice/modernisation-platform#11985, planetscale/ghcommit#153). Writing a
repository's contents needs ``contents: write``; a token without it gets GitHub's "Resource not
accessible by integration" (the ``FORBIDDEN`` every write without its permission gets).
"""

from __future__ import annotations

import base64
import binascii

from sandbox.github.gate import Ctx
from sandbox.github.graphql_parse import JSON, Field, GraphQLFailure, read_input
from sandbox.github.model import Blob, Repo
from sandbox.github.render import node_id

PATH = ["createCommitOnBranch"]


def _repo_and_branch(ctx: Ctx, branch: object) -> tuple[Repo, str]:
    spec = branch if isinstance(branch, dict) else {}
    full_name = str(spec.get("repositoryNameWithOwner") or "")
    name = str(spec.get("branchName") or "").removeprefix("refs/heads/")
    repo = ctx.state.find_repo(full_name)
    if repo is None or not ctx.identity.can_see(repo):
        raise GraphQLFailure(
            f"Could not resolve to a Repository with the name '{full_name}'.", "NOT_FOUND", PATH
        )
    if not ctx.identity.has("contents", "write"):
        raise GraphQLFailure(ctx.identity.forbidden_message, "FORBIDDEN", PATH)
    if name not in repo.branches:
        # GitHub's wording for a missing branch is not sourced here; the product creates its
        # branch first and never relies on this text.
        raise GraphQLFailure(f"A ref named 'refs/heads/{name}' does not exist.", "NOT_FOUND", PATH)
    return repo, name


def _changes(file_changes: object) -> dict[str, Blob | None]:
    spec = file_changes if isinstance(file_changes, dict) else {}
    changes: dict[str, Blob | None] = {}
    for deletion in spec.get("deletions") or []:
        changes[str(deletion.get("path"))] = None
    for addition in spec.get("additions") or []:
        try:
            raw = base64.b64decode(str(addition.get("contents") or ""), validate=True)
        except (binascii.Error, ValueError):
            raise GraphQLFailure(
                "Argument 'contents' on FileAddition has an invalid value: it must be Base64.",
                "UNPROCESSABLE",
                PATH,
            ) from None
        try:
            changes[str(addition.get("path"))] = raw.decode("utf-8")
        except UnicodeDecodeError:
            changes[str(addition.get("path"))] = raw
    return changes


def create_commit_on_branch(ctx: Ctx, field: Field, variables: JSON) -> JSON:
    data = read_input(field, variables)
    repo, branch = _repo_and_branch(ctx, data.get("branch"))
    expected = str(data.get("expectedHeadOid") or "")
    if repo.branches[branch] != expected:
        raise GraphQLFailure(
            f'Expected branch to point to "{expected}" but it did not.  Pull and try again.',
            "STALE_DATA",
            PATH,
        )
    message = data.get("message") if isinstance(data.get("message"), dict) else {}
    assert isinstance(message, dict)
    headline, body = str(message.get("headline") or ""), message.get("body")
    text = headline if not body else f"{headline}\n\n{body}"
    author = ctx.identity.login
    if author not in ctx.state.users:
        ctx.state.add_user(author, type="Bot" if author.endswith("[bot]") else "User")
    signer = ctx.identity.app.slug if ctx.identity.app is not None else author
    commit = ctx.state.commit_as(
        repo, branch, _changes(data.get("fileChanges")), text, author, signed_by=signer
    )
    url = f"{ctx.urls.web}/{repo.full_name}/commit/{commit.sha}"
    return {
        "clientMutationId": data.get("clientMutationId"),
        "commit": {
            "__typename": "Commit",
            "id": node_id("C", commit.sha),
            "oid": commit.sha,
            "url": url,
            "message": commit.message,
            "messageHeadline": headline,
            "signature": {"isValid": True, "state": "VALID", "wasSignedByGitHub": True},
        },
        "ref": {
            "__typename": "Ref",
            "id": node_id("REF", repo.id, f"refs/heads/{branch}"),
            "name": branch,
            "prefix": "refs/heads/",
            "target": {"__typename": "Commit", "oid": commit.sha},
        },
    }


MUTATIONS = {"createCommitOnBranch": create_commit_on_branch}
