"""``swarm eval``: the real review path over a labelled set, scored against its labels.

The set's pull requests are served by the sandbox GitHub (one repository per PR), and one swarm
run reviews them as ``swarm run`` would: planning, sharding, minting, identity checks, the tools,
the model, posting. Nothing reaches a real GitHub: the sandbox is where the reviews land, and
they are read back from it as the bot's posted findings (each inline comment carries its finding
marker, written by code). Every evaluation gets a store of its own, so nothing counts as already
reviewed; the local Prefect server of the data directory is reused.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.private_files import private_folder
from flows.local.env import prepare_prefect_env
from flows.local.prefect_server import use_local_prefect

if TYPE_CHECKING:
    from agents.eval.results import Results

EVAL_SHARD_THRESHOLD = 20
EVAL_SHARD_SIZE = 12


def run_eval(
    *,
    set_dir: Path,
    model: str,
    data_dir: Path,
    json_out: Path | None,
    baseline: Path | None,
    judge_model: str | None,
    max_workers: int | None,
) -> int:
    """Review the set, score it, print the table; the exit status says whether the baseline
    (when given) still holds."""
    from agents.eval.labels import load_set
    from agents.eval.results import results, table, write
    from agents.eval.scoring import PullScore, match
    from agents.settings.model import load_settings
    from flows.cli.console import console, say
    from flows.cli.demo import drop_shell_settings, load_env_file
    from flows.cli.runner import execute_flow
    from flows.run.request import RunRequest
    from sandbox.eval import seed_set
    from sandbox.github.limits import RateLimits
    from sandbox.github.seed import REVIEWER_BOT
    from sandbox.github.state import SandboxState
    from sandbox.server import SandboxServer

    pulls = load_set(set_dir)
    private_folder(data_dir, "the data directory (--data-dir)")
    data_dir = data_dir.resolve()
    work = data_dir / "eval" / time.strftime("%Y%m%d-%H%M%S")
    work.mkdir(parents=True, exist_ok=True)
    prepare_prefect_env()
    drop_shell_settings()
    # The set's GitHub is the evaluation's alone, so its hourly budget is the largest GitHub
    # grants an installation (15,000): at the usual 5,000 the throttle spreads what is left over
    # the hour, about 1.4 requests a second, and the shipped set's discovery and 500 worker
    # requests took seven minutes of waiting that measure nothing about the reviews. The
    # secondary limits (points per minute, content creation, a second between writes) stay,
    # as the shell's SWARM_GITHUB_LIMITS__* set them (drop_shell_settings keeps those).
    state = SandboxState(limits=RateLimits(core=15_000))
    served = seed_set(state, set_dir)
    with SandboxServer(state) as sandbox:
        load_env_file(state.write_credentials(work / "keys", sandbox.url))
        os.environ["SWARM_DATA_DIR"] = str(data_dir)
        os.environ["SWARM_STORE_URL"] = f"sqlite:///{work / 'store.db'}"
        os.environ["SWARM_REPOS"] = ",".join(repo for repo, _ in served.values())
        load_settings()
        console.print(
            f"[bold]eval[/bold] {set_dir.name}: {len(pulls)} PRs on the sandbox GitHub at "
            f"{sandbox.url}; model: [bold]{model}[/bold]"
        )
        use_local_prefect(data_dir, force=True)
        started = time.monotonic()
        report = execute_flow(
            RunRequest(
                repos=tuple(repo for repo, _ in served.values()),
                max_workers=max_workers,
                model=model,
                shard_threshold_files=EVAL_SHARD_THRESHOLD,
                shard_size=EVAL_SHARD_SIZE,
            )
        )
        wall = time.monotonic() - started
        spend: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for outcome in report.outcomes:
            target = outcome.target.split("@", 1)[0]
            spend[target]["cost"] += outcome.cost_usd
            spend[target]["tokens"] += outcome.input_tokens + outcome.output_tokens
            spend[target]["tokens"] += outcome.cache_read_tokens + outcome.cache_write_tokens
            if outcome.status in ("failed", "blocked", "budget_exhausted", "paused"):
                spend[target]["unfinished"] = 1
        scores = []
        for pull in pulls:
            repo, number = served[pull.id]
            used = spend.get(f"{repo}#{number}", {})
            scores.append(
                PullScore(
                    pull,
                    posted_findings(sandbox.url, state.maintainer_pat, repo, number, REVIEWER_BOT),
                    cost_usd=used.get("cost", 0.0),
                    tokens=int(used.get("tokens", 0)),
                    # The run reviews the PRs side by side: wall time is shared out evenly.
                    wall_s=wall / len(pulls),
                    error="a worker did not finish" if used.get("unfinished") else None,
                )
            )
    verdicts: list[dict[str, Any]] = []
    for score in scores:
        placed = match(score.pull, score.findings)
        score.matches = placed
    if judge_model:
        verdicts = asyncio.run(_judged(scores, judge_model))
    data = results(scores, set_name=set_dir.name, model=model, verdicts=verdicts)
    print(table(data))
    if json_out is not None:
        write(data, json_out)
        say(f"results: {json_out}")
    if baseline is not None:
        return against_baseline(data, baseline)
    return 0


async def _judged(scores: list[Any], judge_model: str) -> list[dict[str, Any]]:
    """Judge the pairs place did not match; a pair the judge calls the same problem matches."""
    from agents.eval.judge import candidates, judge
    from agents.eval.scoring import Match
    from agents.settings.model import load_settings
    from flows.run.models import open_model

    choice = open_model(load_settings(), judge_model)
    client = choice.client
    records: list[dict[str, Any]] = []
    try:
        for score in scores:
            placed = {(m.finding, m.label) for m in score.matches}
            pairs = candidates(score.pull, score.findings, placed)
            verdicts = await judge(client, choice.model_id, score.pull, score.findings, pairs)
            used_f = {m.finding for m in score.matches}
            used_l = {m.label for m in score.matches}
            for verdict in verdicts:
                records.append(verdict.as_record())
                if (
                    verdict.same_issue
                    and verdict.finding not in used_f
                    and verdict.label not in used_l
                ):
                    score.matches.append(Match(verdict.finding, verdict.label, "judge"))
                    used_f.add(verdict.finding)
                    used_l.add(verdict.label)
    finally:
        await client.aclose()
    return records


def posted_findings(api_url: str, token: str, repo: str, number: int, bot_login: str) -> list[Any]:
    """The findings the bot posted on ``repo#number``, read back through the sandbox's API as
    GitHub answers it: each inline comment the bot wrote with its finding marker."""
    import httpx

    from agents.posting.render import posted_finding

    found = []
    page = 1
    while True:
        answer = httpx.get(
            f"{api_url}/repos/{repo}/pulls/{number}/comments",
            params={"per_page": 100, "page": page},
            headers={"Authorization": f"token {token}", "Accept": "application/vnd.github+json"},
            timeout=30,
        )
        answer.raise_for_status()
        comments = answer.json()
        for comment in comments:
            posted = posted_finding(comment, bot_login)
            if posted is not None:
                found.append(posted.finding)
        if len(comments) < 100:
            return found
        page += 1


def against_baseline(data: Results, baseline: Path) -> int:
    """0 when precision and recall are at least the recorded baseline's, else 1 with the line
    that says which fell."""
    import json

    from flows.cli.console import say

    expected = json.loads(baseline.read_text(encoding="utf-8"))
    overall = data["summary"]["overall"]
    held = {"precision": overall["precision"], "recall": overall["recall"]}
    fell = [
        f"{key} {value:.4f} < baseline {expected[key]:.4f}"
        for key, value in held.items()
        if value is None or value + 1e-9 < expected[key]
    ]
    if fell:
        say(f"[red]eval regression on {data['set']}[/red]: " + "; ".join(fell))
        return 1
    say(
        f"eval baseline holds: precision {overall['precision']:.4f}, recall {overall['recall']:.4f}"
    )
    return 0


def import_golden(golden: Path, folder: Path, *, api_url: str, token_env: str | None) -> int:
    """``swarm eval import``: one set file per golden PR; a PR that cannot be read is named
    and the others are still written."""
    import httpx

    from agents.eval.imports import imported, read_golden, write_pull
    from agents.settings.model import ConfigError
    from flows.cli.console import say

    pulls = read_golden(golden)
    headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
    if token_env:
        token = os.environ.get(token_env)
        if not token:
            raise ConfigError(f"--token-env {token_env}: that variable is not set")
        headers["Authorization"] = f"Bearer {token}"
    failed = 0
    with httpx.Client(base_url=api_url.rstrip("/"), headers=headers, timeout=30) as client:

        def fetch(path: str, raw: bool) -> Any:
            answer = client.get(
                path, headers={"Accept": "application/vnd.github.raw+json"} if raw else None
            )
            if raw and answer.status_code == 404:
                return None
            answer.raise_for_status()
            if raw:
                try:
                    return answer.content.decode("utf-8")
                except UnicodeDecodeError:
                    return None  # a binary file: listed without its text
            return answer.json()

        for golden_pull in pulls:
            try:
                written = write_pull(imported(golden_pull, fetch), folder)
            except (httpx.HTTPError, KeyError, ValueError) as exc:
                failed += 1
                reason = exc.response.status_code if isinstance(exc, httpx.HTTPStatusError) else exc
                say(f"[red]{golden_pull.url}[/red]: not imported: {reason}")
                continue
            say(f"{golden_pull.url} -> {written}")
    return 1 if failed else 0
