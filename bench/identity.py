"""Identity benchmark on the sandbox GitHub: token mints per 100 workers, and the per-worker CPU
cost of sealing, opening and verifying a dispatch envelope.

Part 1 dispatches 100 workers for one repository and one role (16 at a time, as a flow's task
runner would) and counts the installation tokens minted: shared mode (target: 1 per distinct
scope per token lifetime) against per-worker mode (100). A second role on the same repository
is one more scope, so one more mint.

Part 2 times, per worker: seal, open, and verify. Verify is measured three ways so the network
round trip stays out of the CPU figure: against an in-memory transport (all our checks plus
githubkit/httpx request handling, no socket), on a verification-cache hit (a worker sharing an
already verified token), and against the sandbox over loopback HTTP (for reference).
Target: seal + open + verify < 5 ms per worker, excluding the network round trip.

    uv run python bench/identity.py [--workers 100] [--json]
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.dispatch.envelope import DispatchEnvelope, SealedEnvelope  # noqa: E402
from agents.dispatch.sealing import EnvelopeSealer, generate_sealing_key  # noqa: E402
from agents.identity import IdentityError, TokenScope, app_jwt  # noqa: E402
from agents.identity.app_jwt import AppJwtSigner, read_private_key  # noqa: E402
from agents.identity.lease import TokenLease  # noqa: E402
from agents.identity.minter import InstallationMinter  # noqa: E402
from agents.identity.sources import open_identity  # noqa: E402
from agents.identity.verify import IdentityVerifier, check_offline  # noqa: E402
from agents.roles import RoleRefs  # noqa: E402
from agents.settings.model import Settings, load_settings  # noqa: E402
from agents.transport.client import GitHubTransport  # noqa: E402
from agents.work import Task  # noqa: E402
from bench.cli import bench_parser  # noqa: E402
from sandbox.github.seed import MAINTAINER, credentials_env  # noqa: E402
from sandbox.server import SandboxServer  # noqa: E402

REVIEWER = TokenScope(
    repositories=("acme/widgets",),
    permissions={"pull_requests": "write", "contents": "read", "metadata": "read"},
)
TRIAGER = TokenScope(
    repositories=("acme/widgets",), permissions={"issues": "write", "metadata": "read"}
)


# How long each simulated worker holds its token (real sessions hold it for seconds to minutes),
# give or take a little: holds of one length that began on one tick of the event loop all end on
# one tick, so every holder of a wave would release (and revoke the shared token) before the next
# worker's acquire runs: a mint per wave of 16, not per run.
WORK_SECONDS = 0.05
WORK_SPREAD = 16  # holds of 50, 53, .. 97 ms: the 16 of a wave end at 16 moments


def sandbox_settings(server: SandboxServer, creds: Path) -> Settings:
    values = credentials_env(server.state, creds, server.url)
    return load_settings(
        github_api_url=values["SWARM_GITHUB_API_URL"],
        app_id=int(values["SWARM_APP_ID"]),
        app_private_key_file=Path(values["SWARM_APP_PRIVATE_KEY_FILE"]),
        app_installation_id=int(values["SWARM_APP_INSTALLATION_ID"]),
        maintainer_login=values["SWARM_MAINTAINER_LOGIN"],
    )


async def dispatch_workers(
    minter: InstallationMinter, workers: int, scope: TokenScope, role: str
) -> str | None:
    """Acquire + release for ``workers`` workers, 16 at a time; the first refusal's text."""
    at_once = asyncio.Semaphore(16)

    async def one(i: int) -> str | None:
        async with at_once:
            try:
                lease = await minter.acquire(scope, role=role, holder=f"{role}-{i}")
            except IdentityError as exc:
                return str(exc)
            # A worker holds its lease while it works; a shared token dies with its last
            # holder, so a zero-length hold would measure back-to-back runs, not workers side
            # by side.
            await asyncio.sleep(WORK_SECONDS * (1 + (i % WORK_SPREAD) / WORK_SPREAD))
            await minter.release(lease)
            return None

    refusals = [r for r in await asyncio.gather(*(one(i) for i in range(workers))) if r]
    return f"{len(refusals)} refused: {refusals[0][:170]}" if refusals else None


async def count_mints(
    settings: Settings, server: SandboxServer, workers: int
) -> list[dict[str, Any]]:
    rows = []
    for per_worker in (False, True):
        # Each mode gets a fresh 60 s secondary-limit window on the sandbox clock.
        server.state.clock.advance(120)
        minter = open_identity(settings, "default", per_worker=per_worker)
        assert isinstance(minter, InstallationMinter)
        started = time.perf_counter()
        problem = await dispatch_workers(minter, workers, REVIEWER, "reviewer")
        one_scope = minter.stats.mints
        problem = problem or await dispatch_workers(minter, workers, TRIAGER, "triager")
        elapsed = time.perf_counter() - started
        await minter.aclose()
        live = sum(
            1 for t in server.state.tokens.values() if t.kind == "installation" and not t.revoked
        )
        rows.append(
            {
                "mode": "per-worker" if per_worker else "shared",
                "workers": workers,
                "mints_one_scope": one_scope,
                "mints_two_scopes": minter.stats.mints,
                "revocations": minter.stats.revocations,
                "live_after_close": live,
                "seconds": round(elapsed, 3),
                "problem": problem,
            }
        )
    return rows


def per_call_ms(fn: Callable[[], object], n: int) -> float:
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


async def per_await_ms(fn: Callable[[], Awaitable[object]], n: int) -> float:
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        await fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def in_memory_github(login: str, repos: tuple[str, ...]) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/graphql"):
            return httpx.Response(200, json={"data": {"viewer": {"login": login}}})
        return httpx.Response(
            200, json={"total_count": len(repos), "repositories": [{"full_name": r} for r in repos]}
        )

    return httpx.MockTransport(answer)


async def time_envelopes(settings: Settings, server: SandboxServer, n: int) -> dict[str, float]:
    server.state.clock.advance(120)  # out of the per-worker run's secondary-limit window
    minter = open_identity(settings, "default")
    assert isinstance(minter, InstallationMinter)
    lease: TokenLease = await minter.acquire(REVIEWER, role="reviewer", holder="bench")
    sealer = EnvelopeSealer(generate_sealing_key())

    def envelope() -> DispatchEnvelope:
        return DispatchEnvelope.issue(
            run_id="bench",
            worker_id="w",
            task=Task(kind="review_pr", repo="acme/widgets", number=1, head_sha="a" * 40),
            roles=RoleRefs(agent="reviewer"),
            identity=lease.claim(),
        )

    env = envelope()
    sealed = sealer.seal(env, lease.token, MAINTAINER)
    wire = sealed.model_dump_json()
    opened = sealer.open(sealed)

    in_memory = in_memory_github(lease.expected_login, ("acme/widgets",))
    local = IdentityVerifier(
        server.url,
        MAINTAINER,
        transport=GitHubTransport(server.url, identity="bench", pool=in_memory),
    )

    async def verify_uncached() -> None:
        local.forget(lease.fingerprint)
        await local.verify(opened)

    cached = IdentityVerifier(server.url, MAINTAINER)
    await cached.verify(opened)
    loopback = IdentityVerifier(server.url, MAINTAINER)

    async def verify_loopback() -> None:
        loopback.forget(lease.fingerprint)
        await loopback.verify(opened)

    pem = read_private_key(settings.identity("default"), "default")

    def signer_first_key() -> None:
        # What a run paid before keys were kept: the key's check (agents/identity/app_jwt.py).
        app_jwt._CHECKED.clear()
        AppJwtSigner(1, pem)

    now = datetime.now(UTC)
    result = {
        "a run's App JWT signer, key checked": per_call_ms(signer_first_key, max(20, n // 10)),
        "... key checked already in this process": per_call_ms(lambda: AppJwtSigner(1, pem), n),
        "build envelope": per_call_ms(envelope, n),
        "seal": per_call_ms(lambda: sealer.seal(env, lease.token, MAINTAINER), n),
        "open (from JSON)": per_call_ms(
            lambda: sealer.open(SealedEnvelope.model_validate_json(wire)), n
        ),
        "verify: offline checks (ours, no HTTP)": per_call_ms(
            lambda: check_offline(lease.claim(), lease.token, MAINTAINER, now), n
        ),
        "verify: 2 calls via in-memory transport": await per_await_ms(verify_uncached, n),
        "verify, cache hit (shared token)": await per_await_ms(lambda: cached.verify(opened), n),
        "verify over loopback HTTP (reference)": await per_await_ms(
            verify_loopback, max(20, n // 10)
        ),
    }
    for v in (local, cached, loopback):
        await v.aclose()
    await minter.aclose()
    return result


def main() -> None:
    parser = bench_parser(__doc__)
    parser.add_argument("--workers", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=500, help="timing samples per figure")
    args = parser.parse_args()

    with SandboxServer() as server, tempfile.TemporaryDirectory() as tmp:
        settings = sandbox_settings(server, Path(tmp))
        mints = asyncio.run(count_mints(settings, server, args.workers))
        timings = asyncio.run(time_envelopes(settings, server, args.repeat))

    cpu = (
        timings["seal"]
        + timings["open (from JSON)"]
        + timings["verify: offline checks (ours, no HTTP)"]
    )
    stack = (
        timings["seal"]
        + timings["open (from JSON)"]
        + timings["verify: 2 calls via in-memory transport"]
    )
    if args.json:
        print(
            json.dumps(
                {
                    "mints": mints,
                    "timings_ms": timings,
                    "seal_open_verify_ms": cpu,
                    "with_http_stack_ms": stack,
                }
            )
        )
        return
    print(f"Token mints, {args.workers} workers per role on acme/widgets (16 concurrent)")
    header = ("mode", "1 scope", "2 scopes", "revoked", "live after run", "seconds")
    print(f"{header[0]:<11} " + " ".join(f"{h:>14}" for h in header[1:]))
    for row in mints:
        cells = ("mints_one_scope", "mints_two_scopes", "revocations", "live_after_close")
        print(
            f"{row['mode']:<11} "
            + " ".join(f"{row[c]:>14}" for c in cells)
            + f" {row['seconds']:>14}"
        )
        if row["problem"]:
            print(f"{'':<11} {row['problem']}")
    print("target: shared = 1 mint per distinct scope per token lifetime\n")
    print(f"Per-worker envelope cost (median of {args.repeat}, ms)")
    for name, ms in timings.items():
        print(f"  {name:<44} {ms:8.3f}")
    verdict = "OK" if cpu < 5 else "OVER"
    print(f"  {'seal + open + verify (no network)':<44} {cpu:8.3f}   target < 5 ms: {verdict}")
    print(f"  {'... with the in-memory HTTP stack':<44} {stack:8.3f}")
    print("  (verification runs once per token: workers sharing a token pay the cache hit)")


if __name__ == "__main__":
    main()
