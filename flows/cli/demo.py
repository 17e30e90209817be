"""``swarm demo``: one swarm over the offline sandbox, the embedded default.

The demo starts the sandbox GitHub in a thread, writes the sandbox Apps' keys and settings into
its own folder of the data directory (never the folder of a running ``swarm sandbox serve``),
runs one swarm through the local Prefect server of the data directory (started on first use,
then reused, so the UI shows every demo run), and prints what happened. The sandbox is rebuilt
identically on every start (same repositories, same commit SHAs), so a second demo run finds
every PR already reviewed at its head SHA in the store and posts nothing.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agents.private_files import private_folder
from flows.local.env import prepare_prefect_env
from flows.local.prefect_server import password_hint, prefect_home, status, use_local_prefect

if TYPE_CHECKING:
    from agents.settings.model import Settings
    from sandbox.github.state import SandboxState

DEMO_SHARD_THRESHOLD = 30
DEMO_SHARD_SIZE = 15
CLAUDE_DEFAULT_MODEL = "claude-sonnet-4-5"
# The demo's sandbox keys; `swarm sandbox serve` keeps its own in .swarm/sandbox.
DEMO_KEYS_DIR = "demo-sandbox"


# The throttle's limits are the one kind of setting of the shell that a self-contained sandbox
# run keeps: tuning, not a place, a credential or an identity, and it changes how fast the run
# goes, never what it finds. An operator who wants the evaluation without GitHub's second
# between writes (the sandbox does not enforce it) sets SWARM_GITHUB_LIMITS__MIN_WRITE_INTERVAL.
KEPT_SHELL_SETTINGS = ("SWARM_GITHUB_LIMITS__",)


def drop_shell_settings() -> None:
    """Remove the shell's ``SWARM_*`` settings (another store, another GitHub, identities) so
    they do not mix with the sandbox's, all but the throttle's limits."""
    for key in [k for k in os.environ if k.upper().startswith("SWARM_")]:
        if not key.upper().startswith(KEPT_SHELL_SETTINGS):
            del os.environ[key]


def load_env_file(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` lines (the sandbox's ``sandbox.env``) into os.environ; returns them."""
    values: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() and not key.lstrip().startswith("#"):
            values[key.strip()] = value.strip()
    os.environ.update(values)
    return values


def choose_model(requested: str | None) -> str:
    """Scripted unless asked otherwise, or Claude when an Anthropic key is present."""
    if requested:
        return requested
    if os.environ.get("ANTHROPIC_API_KEY"):
        return CLAUDE_DEFAULT_MODEL
    return "scripted"


def run_demo(*, data_dir: Path, model: str | None, max_workers: int | None) -> int:
    """Start the sandbox and a local Prefect, run one swarm, print the summary. Exit status."""
    private_folder(data_dir, "the data directory (--data-dir)")
    data_dir = data_dir.resolve()
    prepare_prefect_env()

    from agents.settings.model import load_settings
    from flows.cli.console import console, print_report, say
    from flows.cli.runner import execute_flow
    from flows.run.request import RunRequest
    from sandbox.github.seed import (
        REPOS,
        WIDGETS,
        WIDGETS_PR_DEBUG_PRINT,
        give_contents_write,
        push_print_fix,
    )
    from sandbox.server import SandboxServer

    chosen = choose_model(model)
    # The demo is self-contained: settings from the shell must not mix with the sandbox's.
    drop_shell_settings()
    with SandboxServer() as sandbox:
        env_file = sandbox.state.write_credentials(data_dir / DEMO_KEYS_DIR, sandbox.url)
        load_env_file(env_file)
        os.environ["SWARM_DATA_DIR"] = str(data_dir)
        os.environ["SWARM_REPOS"] = ",".join(REPOS)
        # The walkthrough resolves its fixed finding's thread: GitHub lets an App do that only
        # with Contents: write, so the demo's App is given it and the demo opts in
        # (docs/security.md); without both the thread gets a "Fixed at" reply and stays open.
        give_contents_write(sandbox.state)
        os.environ["SWARM_RESOLVE_THREADS"] = "true"
        settings = load_settings()
        console.print(
            f"[bold]sandbox GitHub[/bold] at {sandbox.url} with {len(REPOS)} repositories; "
            f"model: [bold]{chosen}[/bold]"
        )
        started = time.monotonic()
        if status(prefect_home(data_dir)) is None:
            console.print("starting the local Prefect server (the first time takes a while)")
        # A demo never talks to a remote API, whatever the user's shell says.
        ui = use_local_prefect(data_dir, force=True).removesuffix("/api")
        report = execute_flow(
            RunRequest(
                repos=REPOS,
                max_workers=max_workers,
                model=chosen,
                shard_threshold_files=DEMO_SHARD_THRESHOLD,
                shard_size=DEMO_SHARD_SIZE,
            )
        )
        print_report(report, link=False)  # the demo says where the UI is last
        # The walkthrough: the author fixes one finding; the re-review closes its thread.
        head = push_print_fix(sandbox.state)
        target = f"{WIDGETS}#{WIDGETS_PR_DEBUG_PRINT}"
        console.print(
            f"\n[bold]walkthrough[/bold]: the author of {target} pushes {head[:12]}, which drops "
            "the debug print the review flagged; the swarm reviews the push"
        )
        again = execute_flow(RunRequest(targets=(target,), max_workers=max_workers, model=chosen))
        console.print(again.headline())
        written = _writer_walkthrough(sandbox.state, sandbox.url, chosen, max_workers)
        elapsed = time.monotonic() - started
        reviews_on_sandbox = _count_bot_reviews(sandbox.state)
        sandbox_url = sandbox.url  # once the sandbox stops, its socket has no address
    if report.new_reviews == 0 and report.idempotent_skips:
        console.print(
            f"[cyan]Nothing new to post: {report.idempotent_skips} PR(s) already reviewed at "
            "their head SHA (idempotent re-run).[/cyan]"
        )
    console.print(
        f"\nfinished in {elapsed:.1f}s; the sandbox held {reviews_on_sandbox} bot review(s) "
        "(it starts fresh on every demo; the store keeps every run)"
    )
    console.print(f"store:  {report.store_location or settings.resolved_store_url()}")
    console.print(
        "        read it back with: [bold]uv run swarm runs[/bold], "
        "[bold]uv run swarm transcript <worker>[/bold] "
        f"(with SWARM_DATA_DIR={data_dir})"
    )
    say(
        f"Prefect UI: {report.ui_link or ui + '/runs'} (this run; every run is at {ui}/runs); "
        "uv run swarm server stop stops the server"
    )
    say(password_hint(prefect_home(data_dir)))
    for line in walkthrough_links(settings, WIDGETS, WIDGETS_PR_DEBUG_PRINT, sandbox_url):
        say(line)
    for line in written.lines:
        say(line)
    say(
        f"the sandbox GitHub ({sandbox_url}) stopped with the demo: its links above no longer "
        "open; `uv run swarm sandbox serve` keeps one running to explore"
    )
    return 0 if report.ok and again.ok and written.ok else 1


@dataclass
class _Written:
    """What the writer's walkthrough did: its lines for the end of the demo, and whether its
    runs went as they should."""

    ok: bool = True
    lines: list[str] = field(default_factory=list)


def _writer_walkthrough(
    state: SandboxState, url: str, model: str, max_workers: int | None
) -> _Written:
    """The writer's walkthrough: a user files a bug, the maintainer labels it
    ``swarm:implement``, the writer bot turns it into one signed draft pull request with the
    repository's tests run in the sandbox, and the reviewer bot reviews that draft."""
    from agents.kinds.implement import LABEL
    from agents.roles.files import shipped_book
    from flows.cli.console import console
    from flows.cli.runner import execute_flow
    from flows.run.request import RunRequest
    from sandbox.github.seed import (
        MAINTAINER,
        REVIEWER_BOT,
        WIDGETS,
        WRITER_BOT,
        plant_writer_issue,
    )

    number = plant_writer_issue(state)
    state.label_issue(WIDGETS, number, LABEL, by=MAINTAINER)
    issue = f"{WIDGETS}#{number}"
    console.print(
        f"\n[bold]writer walkthrough[/bold]: a user files {issue} (a real bug), "
        f"{MAINTAINER} labels it {LABEL}; the writer bot implements it"
    )
    writer = shipped_book().role_for("implement")
    assert writer is not None, "the shipped roles hold the implement kind's"
    built = execute_flow(
        RunRequest(repos=(WIDGETS,), role=writer, max_workers=max_workers, model=model)
    )
    console.print("the reviewer bot reviews the open pull requests, the writer's draft among them")
    reviewed = execute_flow(RunRequest(repos=(WIDGETS,), max_workers=max_workers, model=model))
    written = _Written(ok=built.ok and reviewed.ok)
    drafts = [
        i for i in state.repo(WIDGETS).pulls() if i.pull is not None and i.user_login == WRITER_BOT
    ]
    if not drafts:
        earlier = built.idempotent_skips or any(o.status == "skipped" for o in built.outcomes)
        written.lines.append(
            f"writer: no draft pull request for {issue} in this demo's sandbox: "
            + (
                "an earlier demo opened it (the store remembers it)"
                if earlier
                else built.headline()
            )
        )
        written.ok = written.ok and bool(earlier)
        return written
    draft = drafts[0]
    assert draft.pull is not None
    head = state.repo(WIDGETS).commits[draft.pull.head_sha]
    signed = f"signed by {head.signed_by}" if head.signed_by else "unsigned"
    passing = "passing" if "**passing**" in (draft.body or "") else "not passing"
    reviews = [r.user_login for r in draft.pull.reviews if r.user_login == REVIEWER_BOT]
    written.lines += [
        f"writer: draft pull request #{draft.number} by {WRITER_BOT} for {issue}, {signed}, "
        f"tests {passing} in the sandbox: {url.rstrip('/')}/{WIDGETS}/pull/{draft.number}",
        f"reviewer: {len(reviews)} review(s) of #{draft.number} by {REVIEWER_BOT}"
        " (never an approval: a person decides)",
    ]
    return written


def walkthrough_links(settings: Settings, repo: str, number: int, sandbox_url: str) -> list[str]:
    """The PR's summary comment and the thread its push resolved, as the store recorded them,
    when this demo's sandbox holds them: a link an earlier demo recorded points into a sandbox
    that stopped with it (another port), and is not printed."""
    from agents.posting.keys import summary_key, thread_key_prefix
    from agents.store.store import Store

    with Store.open(settings.store_url, settings.data_dir) as store:
        summary = store.get_review_key(summary_key(repo, number))
        resolved = [
            record.review_url
            for key in store.posted_review_keys(thread_key_prefix(repo, number))
            if key.endswith("/resolved") and (record := store.get_review_key(key)) is not None
        ]
    ours = f"{sandbox_url.rstrip('/')}/"
    resolved = [url for url in resolved if url and url.startswith(ours)]
    summary_url = summary.review_url if summary is not None else None
    earlier = "(none in this demo's sandbox: an earlier demo posted it)"
    lines = [f"summary of {repo}#{number} (one comment, edited by every review): "]
    lines[0] += summary_url if summary_url and summary_url.startswith(ours) else earlier
    lines.append(
        f"resolved thread: {resolved[-1]} (its line changed and the re-review no longer reports it)"
        if resolved
        else f"resolved thread: {earlier}"
    )
    return lines


def _count_bot_reviews(state: object) -> int:
    """Reviews by a ``[bot]`` user across the sandbox's pull requests; not the bodyless review
    GitHub files each of the bot's thread replies under (the note on a fixed finding's thread)."""
    total = 0
    for repo in getattr(state, "repos", {}).values():
        for issue in repo.issues.values():
            if issue.pull is not None:
                bots = [r for r in issue.pull.reviews if r.user_login.endswith("[bot]")]
                total += sum(1 for r in bots if not r.files_a_reply)
    return total
