"""Benchmark: the first hour's waits, this checkout side by side with a baseline commit.

- ``swarm --help``: how long the CLI takes to answer (hyperfine, warm file cache).
- ``swarm run --repo acme/widgets --dry-run`` over the sandbox's 3 PRs with the scripted model:
  the first run and the runs after it. Without ``PREFECT_API_URL`` the baseline starts a
  temporary Prefect server inside every run; this checkout starts the local server once and
  reuses it.

Both checkouts run with this environment's packages (one uv.lock); the baseline's code comes from
a temporary ``git worktree`` of ``--baseline``. Each command runs in a fresh process, as a person
would type it, against one sandbox GitHub started here.

Run: ``uv run python bench/first_hour.py [--baseline REF] [--runs 3] [--help-runs 20]`` (needs
``hyperfine``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SWARM = "import sys; sys.argv[0] = 'swarm'; from flows.cli.app import main; main()"


def checkout(ref: str, into: Path) -> Path:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(into), ref],
        check=True,
        capture_output=True,
    )
    # Both sides with compiled bytecode, as `make install` leaves this checkout.
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "agents", "flows", "sandbox"],
        cwd=into,
        check=True,
        capture_output=True,
    )
    return into


def swarm_command(code: Path, args: str) -> str:
    return f'PYTHONPATH={code} {sys.executable} -c "{SWARM}" {args}'


def hyperfine(
    commands: dict[str, str], *, runs: int, warmup: int, env: dict[str, str]
) -> dict[str, Any]:
    out = Path(tempfile.mkstemp(suffix=".json")[1])
    args = ["hyperfine", "--runs", str(runs), "--warmup", str(warmup), "--export-json", str(out)]
    args += ["--style", "basic", "--shell", "bash"]
    for name, command in commands.items():
        args += ["--command-name", name, command]
    subprocess.run(args, check=True, env=env)
    data = json.loads(out.read_text())
    out.unlink()
    return {r["command"]: r for r in data["results"]}


def fmt(result: dict[str, Any]) -> str:
    return f"{result['median']:.2f} s (min {result['min']:.2f}, max {result['max']:.2f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="git ref to compare with")
    parser.add_argument("--runs", type=int, default=3, help="dry runs measured per checkout")
    parser.add_argument(
        "--help-runs", type=int, default=20, help="`swarm --help` runs measured per checkout"
    )
    args = parser.parse_args(argv)
    if shutil.which("hyperfine") is None:
        print("needs hyperfine (apt-get install hyperfine)", file=sys.stderr)
        return 2

    from flows.local.prefect_server import prefect_home, stop
    from sandbox.github.seed import credentials_env
    from sandbox.server import SandboxServer

    work = Path(tempfile.mkdtemp(prefix="swarm-first-hour-"))
    base = checkout(args.baseline, work / "baseline")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWARM_", "PREFECT_API"))}
    env.update({"DO_NOT_TRACK": "1", "PREFECT_SERVER_ANALYTICS_ENABLED": "false"})
    try:
        helps = hyperfine(
            {
                "baseline": swarm_command(base, "--help"),
                "this checkout": swarm_command(ROOT, "--help"),
            },
            runs=args.help_runs,
            warmup=min(3, args.help_runs),
            env=env,
        )
        with SandboxServer() as sandbox:
            env.update(credentials_env(sandbox.state, work / "keys", sandbox.url))
            env["SWARM_MODEL"] = "scripted"
            run = "run --repo acme/widgets --dry-run > /dev/null 2>&1"
            runs: dict[str, dict[str, Any]] = {}
            for name, code in (("baseline", base), ("this checkout", ROOT)):
                data = work / name.replace(" ", "-")
                env["SWARM_DATA_DIR"] = str(data)
                # A new machine: no migrated Prefect database kept from an earlier data directory
                # (flows/local/server_template.py), so the first run is a new user's first run.
                env["XDG_CACHE_HOME"] = str(work / f"{data.name}-cache")
                command = swarm_command(code, run)
                # The first run: for this checkout it starts the local Prefect server.
                runs[f"{name}, first run"] = hyperfine(
                    {f"{name}, first run": command}, runs=1, warmup=0, env=env
                )[f"{name}, first run"]
                runs[f"{name}, later runs"] = hyperfine(
                    {f"{name}, later runs": command}, runs=args.runs, warmup=0, env=env
                )[f"{name}, later runs"]
                stop(prefect_home(data))
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)],
            check=False,
            capture_output=True,
        )
    load = os.getloadavg()
    print(f"\nfirst-hour benchmark (load average {load[0]:.1f}, {os.cpu_count()} cores)")
    print(f"  swarm --help, baseline {args.baseline}: {fmt(helps['baseline'])}")
    print(f"  swarm --help, this checkout:        {fmt(helps['this checkout'])}")
    for name, result in runs.items():
        print(f"  swarm run --dry-run (3 PRs), {name}: {fmt(result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
