"""``swarm eval --kind implement``: the real writer path over a set of issues, judged by tests
the writer never saw.

Each case of the set is a repository of its own on the sandbox GitHub with one issue, labelled
``swarm:implement`` by the maintainer; swarm runs of the implementer role take them as a
scheduled run would (discovery, the label's author checked, minting as the writer's App, the
tools, the model, the tests in the sandbox, one signed draft pull request). Then each pull
request goes through the review-and-fix loop as the product runs it (the reviewer's review, the
writer's fix round, the re-review, in successive runs, until nothing blocks or the repository's
``writer.rounds`` are spent), and its final head, with the case's hidden tests added, runs the
repository's test command in the sandbox. Nothing reaches a real GitHub; the evaluation has a
store of its own and reuses the data directory's local Prefect server, like the review
evaluation (flows/cli/evaluation.py).
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.private_files import private_folder
from flows.local.env import prepare_prefect_env
from flows.local.prefect_server import use_local_prefect

if TYPE_CHECKING:
    from agents.eval.implement import ImplementResults
    from agents.outcome import WorkerOutcome


def run_implement_eval(
    *,
    set_dir: Path,
    model: str,
    data_dir: Path,
    json_out: Path | None,
    baseline: Path | None,
    max_workers: int | None,
) -> int:
    """Implement every issue of the set, run its hidden tests on the pull request, print the
    table; the exit status says whether the baseline (when given) still holds."""
    from agents.confine.probe import require_sandbox
    from agents.eval.cases import load_cases
    from agents.eval.implement import CaseResult, results, run_hidden, table, write
    from agents.kinds.book import RoleBook
    from agents.kinds.fix import NAME as FIX
    from agents.kinds.implement import LABEL, MAX_PER_RUN, NAME
    from agents.kinds.review import KIND as REVIEW_KIND
    from agents.roles.files import load_roles
    from agents.settings.model import ConfigError, load_settings
    from flows.cli.console import console, say
    from flows.cli.demo import drop_shell_settings, load_env_file
    from sandbox.eval import seed_issue
    from sandbox.github.limits import RateLimits
    from sandbox.github.seed import WRITER_BOT
    from sandbox.github.state import SandboxState
    from sandbox.server import SandboxServer

    cases = load_cases(set_dir)
    floor = baseline_rate(baseline) if baseline is not None else None
    # Before anything is started or spent: the writer's tests and the hidden tests run only in
    # the sandbox, so without one the evaluation would measure nothing (never an unsandboxed run).
    require_sandbox()
    private_folder(data_dir, "the data directory (--data-dir)")
    data_dir = data_dir.resolve()
    work = data_dir / "eval" / f"implement-{time.strftime('%Y%m%d-%H%M%S')}"
    work.mkdir(parents=True, exist_ok=True)
    prepare_prefect_env()
    drop_shell_settings()
    # The evaluation's GitHub is its own: the largest hourly budget GitHub grants an
    # installation, as in the review evaluation, so the throttle measures nothing here.
    state = SandboxState(limits=RateLimits(core=15_000))
    served = {
        case.id: seed_issue(
            state,
            case.id,
            case.repository_files(),
            title=case.title,
            body=case.body,
            author=case.author,
            label=LABEL,
        )
        for case in cases
    }
    with SandboxServer(state) as sandbox:
        load_env_file(state.write_credentials(work / "keys", sandbox.url))
        os.environ["SWARM_DATA_DIR"] = str(data_dir)
        os.environ["SWARM_STORE_URL"] = f"sqlite:///{work / 'store.db'}"
        os.environ["SWARM_REPOS"] = ",".join(repo for repo, _ in served.values())
        settings = load_settings()
        # The role that implements issues, as the roles directory says (the shipped one: the
        # implementer); a directory without one is said before anything runs.
        # The reviewer and the fixer run the loop after it (the shipped reviewer and fixer).
        book = RoleBook(load_roles(settings.roles_dir))
        review = REVIEW_KIND.name
        role, reviewer, fixer = (book.role_for(kind) for kind in (NAME, review, FIX))
        for kind, found in ((NAME, role), (review, reviewer), (FIX, fixer)):
            if found is None:
                raise ConfigError(f"no role of kind {kind!r} in {settings.roles_dir}")
        assert role is not None and reviewer is not None and fixer is not None
        console.print(
            f"[bold]eval --kind implement[/bold], set {set_dir.name}: {len(cases)} issues on the "
            f"sandbox GitHub at {sandbox.url}; model: [bold]{model}[/bold]"
        )
        use_local_prefect(data_dir, force=True)
        started = time.monotonic()
        spend: dict[str, dict[str, Any]] = defaultdict(lambda: defaultdict(float))
        # A run opens at most MAX_PER_RUN pull requests (the product's cap on a backlog), so
        # the set goes through in runs of that many repositories.
        repos = [repo for repo, _ in served.values()]
        for repo, outcome in in_runs(role, repos, MAX_PER_RUN, model, max_workers):
            used = spend[repo]
            used["cost"] += outcome.cost_usd
            used["turns"] += outcome.turns
            used["test_runs"] += len(outcome.written.test_runs) if outcome.written else 0
            used["status"] = outcome.status
            used["reason"] = outcome.reason
        first = {repo: _writers_pull(state, repo, WRITER_BOT) for repo in repos}
        loops = review_and_fix(
            state,
            [repo for repo in repos if first[repo][0] is not None],
            reviewer=reviewer,
            fixer=fixer,
            model=model,
            max_workers=max_workers,
        )
        wall = time.monotonic() - started
        scored = []
        for case in cases:
            repo, number = served[case.id]
            used = spend.get(repo, {})
            pull, head, tree = _writers_pull(state, repo, WRITER_BOT)
            # The hidden tests judge the final head; the first one too when the rounds moved it,
            # so the JSON shows what the rounds changed.
            _, first_head, first_tree = first[repo]
            moved = pull is not None and first_head != head
            scored.append(
                CaseResult(
                    case=case,
                    repo=repo,
                    issue=number,
                    pull=pull,
                    hidden=run_hidden(tree, case) if pull is not None else None,
                    status=str(used.get("status", "no worker")),
                    reason=used.get("reason"),
                    cost_usd=float(used.get("cost", 0.0)),
                    turns=int(used.get("turns", 0)),
                    test_runs=int(used.get("test_runs", 0)),
                    rounds=loops.get(repo),
                    hidden_first=run_hidden(first_tree, case) if moved else None,
                )
            )
    data = results(scored, set_name=set_dir.name, model=model, wall_s=wall)
    print(table(data))
    if json_out is not None:
        write(data, json_out)
        say(f"results: {json_out}")
    if floor is not None:
        return against_baseline(data, floor)
    return 0


def _writers_pull(state: Any, repo: str, bot: str) -> tuple[int | None, str, dict[str, Any]]:
    """The pull request the writer bot opened on ``repo``, its head and the files there, as the
    sandbox GitHub holds them: (None, "", {}) when it opened none."""
    with state.lock:
        found = state.repo(repo)
        last = _opened_by(found, bot)
        if last is None:
            return None, "", {}
        head = last.pull.head_sha
        return last.number, head, dict(found.commits[head].tree)


def _opened_by(found: Any, bot: str) -> Any:
    """The last pull request ``bot`` opened on the sandbox repository ``found`` (None: none);
    the caller holds the state's lock."""
    opened = [i for i in found.pulls() if i.pull is not None and i.user_login == bot]
    return opened[-1] if opened else None


def review_and_fix(
    state: Any,
    repos: list[str],
    *,
    reviewer: str,
    fixer: str,
    model: str,
    max_workers: int | None,
) -> dict[str, Any]:
    """The review-and-fix loop on the writer's pull request of each of ``repos``, as the product
    runs it: successive runs of the reviewer (it reviews each new head) and the fixer (a fix
    round on what blocks, or, once nothing does, the pull request marked ready; or, once the
    base branch's ``writer.rounds`` are spent, what is left listed in its body), until every
    pull request has settled. Repository -> :class:`agents.eval.implement.Rounds`."""
    from agents.eval.implement import UNSETTLED, Rounds
    from agents.kinds.fix import MAX_PER_RUN
    from agents.planning.repo_config import MAX_FIX_ROUNDS
    from sandbox.github.seed import WRITER_BOT

    round_costs: dict[str, list[float]] = defaultdict(list)
    review_costs: dict[str, float] = defaultdict(float)
    # Each pass is one review and one fix round at most, and the pass after the last round
    # settles the pull request: the most rounds any repository may set, and one more, bound it
    # (a review or a round that fails every time leaves its pull request unsettled).
    for _pass in range(MAX_FIX_ROUNDS + 1):
        pending = [r for r in repos if _loop_end(state, r, WRITER_BOT)[0] is None]
        if not pending:
            break
        # A fix run takes at most MAX_PER_RUN pull requests; the reviews go in the same batches.
        for repo, outcome in in_runs(reviewer, pending, MAX_PER_RUN, model, max_workers):
            review_costs[repo] += outcome.cost_usd
        for repo, outcome in in_runs(fixer, pending, MAX_PER_RUN, model, max_workers):
            round_costs[repo].append(outcome.cost_usd)
    loops = {}
    for repo in repos:
        end, rounds = _loop_end(state, repo, WRITER_BOT)
        loops[repo] = Rounds(
            end=end or UNSETTLED,
            rounds=rounds,
            round_costs_usd=tuple(round_costs[repo]),
            review_cost_usd=review_costs[repo],
        )
    return loops


def in_runs(
    role: str, repos: list[str], per_run: int, model: str, max_workers: int | None
) -> list[tuple[str, WorkerOutcome]]:
    """Runs of ``role`` over ``repos``, ``per_run`` repositories a run (the kind's own cap on a
    run, so none is left for a later one): each worker's outcome with its repository."""
    from flows.cli.runner import execute_flow
    from flows.run.request import RunRequest

    done = []
    for at in range(0, len(repos), per_run):
        report = execute_flow(
            RunRequest(
                role=role,
                repos=tuple(repos[at : at + per_run]),
                max_workers=max_workers,
                model=model,
            )
        )
        done += [(o.target.split("#", 1)[0], o) for o in report.outcomes]
    return done


def _loop_end(state: Any, repo: str, bot: str) -> tuple[str | None, int]:
    """How the loop on the writer's pull request of ``repo`` ended, as GitHub shows it (None:
    not yet), and the fix rounds its body lists: the fixer marks it ready when nothing blocks,
    and lists what is left after the last round."""
    from agents.eval.implement import CLEAN, STILL_OPEN
    from agents.writer.body import ROUNDS_MARK, STOPPED_MARK

    with state.lock:
        pull = _opened_by(state.repo(repo), bot)
        if pull is None:
            return None, 0
        body = pull.body or ""
        draft = pull.pull.draft
    listed = body.partition(ROUNDS_MARK)[2].partition(STOPPED_MARK)[0]
    rounds = sum(1 for line in listed.splitlines() if line.startswith("- round "))
    if STOPPED_MARK in body:
        return STILL_OPEN, rounds
    return (CLEAN if not draft else None), rounds


def baseline_rate(baseline: Path) -> float:
    """The success rate recorded in ``baseline`` (an earlier ``--json`` file, or a file holding
    ``success_rate``), read before the evaluation spends anything."""
    from agents.eval.labels import EvalSetError

    try:
        expected = json.loads(baseline.read_text(encoding="utf-8"))
        return float(expected.get("summary", expected)["success_rate"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise EvalSetError(f"--baseline {baseline}: no success rate to hold ({reason})") from None


def against_baseline(data: ImplementResults, floor: float) -> int:
    """0 when the success rate is at least ``floor``, else 1 with the line that says so."""
    from flows.cli.console import say

    rate = data["summary"]["success_rate"]
    if rate + 1e-9 < floor:
        say(
            f"[red]eval regression on {data['set']}[/red]: success rate {rate:.4f} < baseline "
            f"{floor:.4f}"
        )
        return 1
    say(f"eval baseline holds: success rate {rate:.4f} (baseline {floor:.4f})")
    return 0
