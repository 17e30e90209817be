"""Real release diffs reviewed by `swarm run --model scripted`, one PR at a time, then all again.

The PRs are :data:`sandbox.github.releases.RELEASES` (sdists of adjacent releases from PyPI,
cached), served by this checkout's sandbox GitHub in this process, with GitHub's file-listing
conventions and review validation. The product under test is the `swarm` command of a code
tree (``--code``, default this checkout), run as a subprocess from that tree's own ``.venv``,
so main as it was before a change can be measured against the same PRs and the same fake.

Per PR: its run's exit code and wall time, the reviews and notes the bot posted, 422 answers,
findings that contradict the PR as a whole ("no test changes" on a PR that changes tests), and
from the store: cost, tokens (raw, and billed where the tree records it), the largest request.
Then one run over every repository: it must post nothing and exit 0.

Command: `uv run python bench/real_prs.py [--code /path/to/tree] [--only idna,click]`
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sandbox.github.releases import RELEASES, Release, add_release_pull  # noqa: E402
from sandbox.github.seed import REVIEWER_BOT, credentials_env  # noqa: E402
from sandbox.github.state import SandboxState  # noqa: E402
from sandbox.model.diffscan import is_test  # noqa: E402
from sandbox.server import SandboxServer  # noqa: E402

SEALING_KEY = "qJzH8m5cF1oYbXw2V0kT9rE3uN6pL4sAaGdQeWiZyMc="
NO_TESTS = "no test changes"
RUN_TIMEOUT_S = 1800


@dataclass
class PullResult:
    pr: str
    files: int
    exit_code: int
    wall_s: float
    reviews: int
    notes: int
    unprocessable: int
    contradictions: int
    workers: int
    failed_workers: int
    cost_usd: float
    tokens: int
    billed_tokens: int | None
    largest_request: int
    body_chars: int
    statuses: list[str] = field(default_factory=list)


def _env(state: SandboxState, server: SandboxServer, work: Path, code: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWARM_", "PREFECT_"))}
    env |= credentials_env(state, work / "keys", server.url)
    env |= {
        "SWARM_DATA_DIR": str(work / "data"),
        "SWARM_ROLES_DIR": str(code / "roles"),
        "SWARM_SEALING_KEY": SEALING_KEY,
        "SWARM_MODEL": "scripted",
        "SWARM_REPOS": ",".join(r.repo for r in RELEASES),
        "ANTHROPIC_API_KEY": "sk-ant-bench-not-a-key",
        "DO_NOT_TRACK": "1",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    }
    return env


def _swarm(code: Path, env: dict[str, str], *args: str) -> tuple[int, float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        [str(code / ".venv" / "bin" / "swarm"), *args],
        cwd=code,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    return done.returncode, time.perf_counter() - started, done.stdout + done.stderr


def _store_figures(db: Path, repo: str) -> dict[str, Any]:
    figures: dict[str, Any] = {
        "workers": 0,
        "failed": 0,
        "cost": 0.0,
        "tokens": 0,
        "billed": None,
        "largest": 0,
        "statuses": [],
    }
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT task, status, budgets_used, blocked_reason FROM workers")
        for task_json, status, used_json, reason in rows:
            task, used = json.loads(task_json), json.loads(used_json or "{}")
            if task.get("repo") != repo:
                continue
            figures["workers"] += 1
            figures["failed"] += status not in ("succeeded", "skipped")
            figures["cost"] += float(used.get("cost_usd") or 0.0)
            figures["tokens"] += int(used.get("tokens") or 0)
            if "billed_tokens" in used:
                figures["billed"] = (figures["billed"] or 0) + int(used["billed_tokens"])
            figures["largest"] = max(figures["largest"], int(used.get("largest_request_tokens", 0)))
            figures["statuses"].append(status + (f": {reason}" if reason else ""))
    return figures


def _github_figures(state: SandboxState, release: Release) -> dict[str, Any]:
    issue = state.pull(release.repo, 1)
    assert issue.pull is not None
    pull = issue.pull
    tests_changed = any(is_test(f.filename) for f in pull.files)
    mine = [r for r in pull.reviews if r.user_login == REVIEWER_BOT]
    comments = [c for c in pull.review_comments if c.user_login == REVIEWER_BOT]
    said = [c.body for c in issue.comments if c.user_login == REVIEWER_BOT]
    texts = [r.body for r in mine] + [c.body for c in comments] + said
    path = f"/repos/{release.repo}/pulls/1/reviews"
    refused = [r for r in state.requests if r.path == path and r.status == 422]
    return {
        "files": len(pull.files),
        "reviews": len(mine),
        "notes": sum(1 for r in mine if r.body.startswith("swarm did not review")),
        "unprocessable": len(refused),
        "contradictions": sum(NO_TESTS in t.lower() for t in texts) if tests_changed else 0,
        "body_chars": max((len(r.body) for r in mine), default=0),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, default=ROOT, help="the tree whose swarm runs")
    parser.add_argument("--only", help="comma-separated package names (default: all)")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args(argv)
    code = args.code.resolve()
    chosen = [r for r in RELEASES if not args.only or r.name in args.only.split(",")]
    state = SandboxState()
    for release in chosen:
        add_release_pull(state, release)
    work = Path(tempfile.mkdtemp(prefix="swarm-real-prs-"))
    results: list[PullResult] = []
    with SandboxServer(state) as server:
        env = _env(state, server, work, code)
        env["SWARM_REPOS"] = ",".join(r.repo for r in chosen)
        # The local Prefect server starts once, before anything is timed.
        _swarm(code, env, "run", "--dry-run", "--max-cost", "0", "--pr", f"{chosen[0].repo}#1")
        try:
            for release in chosen:
                code_rc, wall, output = _swarm(code, env, "run", "--pr", f"{release.repo}#1")
                seen = _github_figures(state, release)
                stored = _store_figures(work / "data" / "swarm.db", release.repo)
                results.append(
                    PullResult(
                        pr=f"{release.name} {release.base}->{release.head}",
                        files=seen["files"],
                        exit_code=code_rc,
                        wall_s=round(wall, 1),
                        reviews=seen["reviews"],
                        notes=seen["notes"],
                        unprocessable=seen["unprocessable"],
                        contradictions=seen["contradictions"],
                        workers=stored["workers"],
                        failed_workers=stored["failed"],
                        cost_usd=round(stored["cost"], 4),
                        tokens=stored["tokens"],
                        billed_tokens=stored["billed"],
                        largest_request=stored["largest"],
                        body_chars=seen["body_chars"],
                        statuses=stored["statuses"],
                    )
                )
                print(json.dumps(asdict(results[-1])), flush=True)
                if code_rc not in (0, 1):
                    print(output[-3000:], file=sys.stderr)
            before = sum(len(state.pull(r.repo, 1).pull.reviews) for r in chosen)  # type: ignore[union-attr]
            again_rc, again_wall, _ = _swarm(code, env, "run")
            after = sum(len(state.pull(r.repo, 1).pull.reviews) for r in chosen)  # type: ignore[union-attr]
        finally:
            _swarm(code, env, "server", "stop")
    print(_table(results))
    print(
        f"\nsecond run over all {len(chosen)} repositories: exit {again_rc}, "
        f"{after - before} new review(s), {again_wall:.1f} s"
    )
    if args.out:
        args.out.write_text(
            json.dumps(
                {
                    "code": str(code),
                    "pulls": [asdict(r) for r in results],
                    "second_run": {"exit_code": again_rc, "new_reviews": after - before},
                },
                indent=1,
            )
        )
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _table(results: list[PullResult]) -> str:
    lines = [
        "| PR | files | exit | reviews | 422 | contradicting | workers (failed) | cost | "
        "tokens (billed) | largest request | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        billed = f" ({r.billed_tokens:,})" if r.billed_tokens is not None else ""
        lines.append(
            f"| {r.pr} | {r.files} | {r.exit_code} | {r.reviews} | {r.unprocessable} | "
            f"{r.contradictions} | {r.workers} ({r.failed_workers}) | ${r.cost_usd:.4f} | "
            f"{r.tokens:,}{billed} | {r.largest_request:,} | {r.wall_s} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
