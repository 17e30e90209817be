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
from pathlib import Path
from typing import TYPE_CHECKING

from agents.private_files import private_folder
from flows.local.env import prepare_prefect_env
from flows.local.prefect_server import password_hint, prefect_home, status, use_local_prefect

if TYPE_CHECKING:
    from agents.settings.model import Settings

DEMO_SHARD_THRESHOLD = 30
DEMO_SHARD_SIZE = 15
CLAUDE_DEFAULT_MODEL = "claude-sonnet-4-5"
# The demo's sandbox keys; `swarm sandbox serve` keeps its own in .swarm/sandbox.
DEMO_KEYS_DIR = "demo-sandbox"


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
    # The demo is self-contained: settings from the shell (another store, another GitHub,
    # identities) must not mix with the sandbox's.
    for key in [k for k in os.environ if k.upper().startswith("SWARM_")]:
        del os.environ[key]
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
        elapsed = time.monotonic() - started
        reviews_on_sandbox = _count_bot_reviews(sandbox.state)
        sandbox_url = sandbox.url  # once the sandbox stops, its socket has no address
    console.print(again.headline())
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
    say(
        f"the sandbox GitHub ({sandbox_url}) stopped with the demo: its links above no longer "
        "open; `uv run swarm sandbox serve` keeps one running to explore"
    )
    return 0 if report.ok and again.ok else 1


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
