"""The writer's GitHub calls (agents/github/branches.py, commits.py, drafts.py) through the real
gateway and githubkit against the sandbox GitHub, as the writer App: a copy fetched by code, its
own branch made once, signed commits that never overwrite a moved head, one draft PR. The branch
test mints through the product's minter under the writer ceiling (SWARM_IDENTITIES__WRITER__
CEILING=writing in sandbox.env), as workers do; the rest take a sandbox token directly."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from graphql import parse, validate

from agents.github import IdentityThrottle
from agents.github.branches import ForeignBranch, branch_head, ensure_branch, fetch_copy
from agents.github.commits import CREATE_COMMIT, StaleHead, commit_on_branch
from agents.github.drafts import comment_on_issue, open_draft_pull
from agents.github.gateway import GatewayRun, GitHubGateway
from agents.github.issues import labelled_open_issues, may_write
from agents.github.models import author_login
from agents.github.writes import WriteCaps, WriteLedger, WriteRefused
from agents.identity import TokenScope
from agents.identity.sources import open_identity
from sandbox.github.seed import (
    MAINTAINER,
    READER,
    WIDGETS,
    WIDGETS_ISSUE_BUG,
    WIDGETS_PR_DEBUG_PRINT,
    WRITER,
    WRITER_BOT,
    WRITER_INSTALLATION_ID,
)
from sandbox.server import SandboxServer
from tests.github.sandbox_helpers import sandbox_clock
from tests.github_schema import answer_problems, github_schema
from tests.identity.conftest import settings_for

pytestmark = pytest.mark.anyio

BRANCH = "swarm/issue-4"
FIX = {"src/widgets/fix.py": "def ok() -> bool:\n    return True\n"}


def writer(
    sandbox: SandboxServer, ledger: WriteLedger | None = None, target: str | None = None
) -> GitHubGateway:
    token = sandbox.state.mint_token(WRITER_INSTALLATION_ID)
    throttle = IdentityThrottle(WRITER_BOT, clock=sandbox_clock(sandbox))
    return GitHubGateway(
        sandbox.url,
        WRITER_BOT,
        lambda: token,
        throttle,
        run=GatewayRun(writes=ledger, write_target=target),
    )


@asynccontextmanager
async def minted_writer(sandbox: SandboxServer, tmp_path: Path) -> AsyncIterator[GitHubGateway]:
    """The writer's gateway holding a token the product's minter made (the path workers take),
    for WIDGETS under the writer ceiling; revoked when the block ends."""
    source = open_identity(settings_for(sandbox, tmp_path), "writer")
    scope = TokenScope(
        repositories=(WIDGETS,),
        permissions={"contents": "write", "pull_requests": "write", "metadata": "read"},
    )
    lease = await source.acquire(scope, role="writer", holder="writer-test")
    token = lease.token.get_secret_value()
    throttle = IdentityThrottle(WRITER_BOT, clock=sandbox_clock(sandbox))
    gh = GitHubGateway(sandbox.url, WRITER_BOT, lambda: token, throttle)
    try:
        yield gh
    finally:
        await gh.aclose()
        await source.release(lease)
        await source.aclose()


def sent(sandbox: SandboxServer, method: str, route: str) -> int:
    return sum(
        1 for r in sandbox.state.requests_by(WRITER_BOT) if (r.method, r.route) == (method, route)
    )


async def test_the_default_branch_head_is_fetched_into_a_copy_by_code(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    gh = writer(sandbox)
    head = await branch_head(gh, WIDGETS, "main")
    assert head == sandbox.state.repo(WIDGETS).branches["main"]
    copy = await fetch_copy(gh, WIDGETS, head, tmp_path / "copy")
    tree = sandbox.state.repo(WIDGETS).commits[head].tree
    written = {p.relative_to(copy.root).as_posix() for p in copy.root.rglob("*") if p.is_file()}
    assert written == set(tree) and copy.files == len(tree) and copy.skipped == ()
    for path, text in tree.items():
        assert (copy.root / path).read_bytes() == (text.encode() if isinstance(text, str) else text)
    assert await branch_head(gh, WIDGETS, "no-such-branch") is None
    await gh.aclose()


async def test_the_writers_branch_is_made_once_and_found_again_after_a_crash(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    async with minted_writer(sandbox, tmp_path) as gh:
        base = sandbox.state.repo(WIDGETS).branches["main"]
        first = await ensure_branch(gh, WIDGETS, BRANCH, base, login=WRITER_BOT)
        again = await ensure_branch(gh, WIDGETS, BRANCH, base, login=WRITER_BOT)
        assert (first.created, again.created, again.head) == (True, False, base)
        made = await commit_on_branch(gh, WIDGETS, BRANCH, base, "Fix", additions=FIX)
        after = await ensure_branch(gh, WIDGETS, BRANCH, base, login=WRITER_BOT)
        assert (after.created, after.head) == (False, made.oid)
        assert sent(sandbox, "POST", "/repos/{owner}/{repo}/git/refs") == 1


async def test_a_branch_holding_someone_elses_commit_is_never_taken_over(
    sandbox: SandboxServer,
) -> None:
    gh = writer(sandbox)
    base = sandbox.state.repo(WIDGETS).branches["main"]
    await ensure_branch(gh, WIDGETS, BRANCH, base, login=WRITER_BOT)
    sandbox.state.commit_to_branch(WIDGETS, {"x.txt": "mine\n"}, branch=BRANCH, author=MAINTAINER)
    with pytest.raises(ForeignBranch, match="not the writer's branch"):
        await ensure_branch(gh, WIDGETS, BRANCH, base, login=WRITER_BOT)
    await gh.aclose()


async def test_a_commit_is_signed_and_never_lands_on_a_head_that_moved(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    gh = writer(sandbox)
    base = sandbox.state.repo(WIDGETS).branches["main"]
    await ensure_branch(gh, WIDGETS, BRANCH, base, login=WRITER_BOT)
    big = "".join(f"line {i}: {'x' * 60}\n" for i in range(2000))
    made = await commit_on_branch(
        gh,
        WIDGETS,
        BRANCH,
        base,
        "Refuse a zero size",
        "Closes #4",
        additions={**FIX, "big.txt": big},
        deletions=["README.md"],
    )
    repo = sandbox.state.repo(WIDGETS)
    commit = repo.commits[made.oid]
    assert repo.branches[BRANCH] == made.oid
    assert (commit.author_login, commit.signed_by) == (WRITER_BOT, "swarm-writer")
    # Past the length at which redaction takes a base64 run for a secret: sent verbatim.
    assert commit.tree["big.txt"] == big
    assert "README.md" not in commit.tree
    # What was committed is what a copy of the new head holds.
    copy = await fetch_copy(gh, WIDGETS, made.oid, tmp_path / "copy")
    assert (copy.root / "big.txt").read_text() == big and not (copy.root / "README.md").exists()
    with pytest.raises(StaleHead, match="Expected branch to point to"):
        await commit_on_branch(gh, WIDGETS, BRANCH, base, "Again", additions={"y.txt": "y\n"})
    assert repo.branches[BRANCH] == made.oid
    await gh.aclose()


async def test_a_token_the_model_put_in_a_file_is_not_committed(sandbox: SandboxServer) -> None:
    gh = writer(sandbox)
    base = sandbox.state.repo(WIDGETS).branches["main"]
    await ensure_branch(gh, WIDGETS, BRANCH, base, login=WRITER_BOT)
    token = sandbox.state.mint_token(WRITER_INSTALLATION_ID)
    made = await commit_on_branch(
        gh, WIDGETS, BRANCH, base, "Config", additions={"conf.py": f'TOKEN = "{token}"\n'}
    )
    text = sandbox.state.repo(WIDGETS).commits[made.oid].tree["conf.py"]
    assert isinstance(text, str) and token not in text and token[:12] not in text
    await gh.aclose()


async def test_one_draft_pull_request_is_opened_and_found_again(sandbox: SandboxServer) -> None:
    gh = writer(sandbox)
    base = sandbox.state.repo(WIDGETS).branches["main"]
    await ensure_branch(gh, WIDGETS, BRANCH, base, login=WRITER_BOT)
    await commit_on_branch(gh, WIDGETS, BRANCH, base, "Fix", additions=FIX)
    title = "Refuse a zero size, cc @octo-maintainer"
    first = await open_draft_pull(gh, WIDGETS, BRANCH, "main", title, "Closes #4")
    again = await open_draft_pull(gh, WIDGETS, BRANCH, "main", title, "Closes #4")
    number = first.pull["number"]
    assert (first.opened, first.pull["draft"], author_login(first.pull)) == (True, True, WRITER_BOT)
    assert (again.opened, again.pull["number"]) == (False, number)
    assert sent(sandbox, "POST", "/repos/{owner}/{repo}/pulls") == 1
    issue = sandbox.state.repo(WIDGETS).issues[number]
    assert issue.body == "Closes #4"
    # The title left through the outbound sanitiser: the mention pings nobody.
    assert "@octo-maintainer" not in issue.title and "octo-maintainer" in issue.title
    posted = await comment_on_issue(gh, WIDGETS, WIDGETS_ISSUE_BUG, f"Working on it: #{number}")
    assert sandbox.state.repo(WIDGETS).issues[WIDGETS_ISSUE_BUG].comments[-1].id == posted.id
    await gh.aclose()


async def test_the_writers_writes_count_against_the_runs_caps(sandbox: SandboxServer) -> None:
    ledger = WriteLedger(WriteCaps(other_per_pr=2))
    # The task's issue: the writes a run makes for it (branch, commit) are counted together.
    gh = writer(sandbox, ledger, f"{WIDGETS}#{WIDGETS_ISSUE_BUG}")
    base = sandbox.state.repo(WIDGETS).branches["main"]
    await ensure_branch(gh, WIDGETS, BRANCH, base, login=WRITER_BOT)
    await commit_on_branch(gh, WIDGETS, BRANCH, base, "Fix", additions=FIX)
    with pytest.raises(WriteRefused):
        await ensure_branch(gh, WIDGETS, "swarm/other", base, login=WRITER_BOT)
    assert ledger.tally().refused == 1
    assert sent(sandbox, "POST", "/repos/{owner}/{repo}/git/refs") == 1
    await gh.aclose()


async def test_the_commit_document_and_the_sandboxs_answer_follow_githubs_schema(
    sandbox: SandboxServer,
) -> None:
    schema = github_schema()
    assert validate(schema, parse(CREATE_COMMIT)) == []
    gh = writer(sandbox)
    base = sandbox.state.repo(WIDGETS).branches["main"]
    await ensure_branch(gh, WIDGETS, BRANCH, base, login=WRITER_BOT)
    variables = {
        "input": {
            "branch": {"repositoryNameWithOwner": WIDGETS, "branchName": BRANCH},
            "message": {"headline": "Fix"},
            "fileChanges": {"additions": [{"path": "a.txt", "contents": "YQo="}]},
            "expectedHeadOid": base,
        }
    }
    data = await gh.graphql(CREATE_COMMIT, variables)
    assert answer_problems(schema, CREATE_COMMIT, variables, data) == []
    await gh.aclose()


async def test_labelled_open_issues_leave_pull_requests_out_and_readers_are_told_apart(
    sandbox: SandboxServer,
) -> None:
    state = sandbox.state
    state.repo(WIDGETS).collaborators.update({WRITER: "write", READER: "read"})
    state.label_issue(WIDGETS, WIDGETS_ISSUE_BUG, "swarm:implement", by=WRITER)
    state.label_issue(WIDGETS, WIDGETS_PR_DEBUG_PRINT, "swarm:implement", by=WRITER)
    gh = writer(sandbox)
    found = await labelled_open_issues(gh, WIDGETS, "swarm:implement")
    assert [(i.number, i.labels) for i in found] == [
        (WIDGETS_ISSUE_BUG, ("bug", "swarm:implement"))
    ]
    assert [await may_write(gh, WIDGETS, who) for who in (WRITER, READER, "dave-dev")] == [
        True,
        False,
        False,
    ]
    await gh.aclose()
