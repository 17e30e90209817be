"""Trust class 10, malformed envelopes: whatever a worker is handed in place of its sealed
envelope - non-ASCII where base64 belongs, JSON cut short, fields of the wrong type, fields of
megabytes, text that is not Unicode - ends BLOCKED with a reason, never a crash, never a worker
row left ``running``, never a GitHub call.

Each envelope starts as a real one (dispatched by the real dispatcher: minted on the sandbox
GitHub, sealed) and is mangled the way a broken queue, a hostile parameter or a bad serialiser
would; it is then handed to the real worker over the runtime the flows use.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agents.dispatch.admission import Arrival, admit_envelope
from agents.dispatch.envelope import EnvelopeRejected, SealedEnvelope
from agents.outcome import WorkerOutcome
from sandbox.github.seed import WIDGETS, WIDGETS_PR_DEBUG_PRINT
from tests.worker.conftest import Swarm, make_swarm, swarm

__all__ = ["make_swarm", "swarm"]  # the worker tests' fixtures: a live sandbox and a runtime

pytestmark = pytest.mark.anyio

MALFORMED = "BLOCKED: envelope malformed: "
MB = 1024 * 1024


async def dispatched(swarm: Swarm) -> SealedEnvelope:
    return await swarm.dispatch(swarm.pull_task(WIDGETS, WIDGETS_PR_DEBUG_PRINT))


def as_dict(sealed: SealedEnvelope) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(sealed.model_dump_json())
    return data


async def assert_blocked(
    swarm: Swarm, sealed: SealedEnvelope, arrived: Arrival, reason: str
) -> WorkerOutcome:
    """Run the worker on ``arrived``: BLOCKED with ``reason``, nothing sent, no row running."""
    before = len(swarm.sandbox.state.requests)
    outcome = await swarm.run(arrived)  # type: ignore[arg-type]
    assert (outcome.status, outcome.reason) == ("blocked", reason)
    assert len(swarm.sandbox.state.requests) == before  # not one GitHub call
    assert swarm.runtime.store.list_workers(swarm.run_id, status="running") == []
    credential = swarm.runtime.sealer.open(sealed).credential
    assert credential is not None and credential.get_secret_value() not in str(outcome)
    return outcome


def _signature(value: object) -> Callable[[dict[str, Any]], None]:
    return lambda d: d.__setitem__("signature", value)


def _ciphertext(value: object) -> Callable[[dict[str, Any]], None]:
    return lambda d: d.__setitem__("ciphertext", value)


def _in_envelope(*path: str, value: object) -> Callable[[dict[str, Any]], None]:
    def mangle(d: dict[str, Any]) -> None:
        node = d["envelope"]
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return mangle


@pytest.mark.parametrize(
    ("mangle", "reason"),
    [
        (_signature("é" * 43 + "="), "signature is not a urlsafe base64 HMAC-SHA256"),
        (_signature("🔑" * 44), "signature is not a urlsafe base64 HMAC-SHA256"),
        (_signature("AAAA"), "signature is not a urlsafe base64 HMAC-SHA256"),
        (_signature(12345), "Input should be a valid string (at signature)"),
        (_signature(None), "Input should be a valid string (at signature)"),
        (_ciphertext("ñ" * 80), "ciphertext is not urlsafe base64"),
        (_ciphertext("A" * MB), "ciphertext is longer than 4096 characters"),
        (_ciphertext(["ghs_"]), "Input should be a valid string (at ciphertext)"),
        (
            _in_envelope("task", value="review everything"),
            "Input should be a valid dictionary or instance of Task (at envelope.task)",
        ),
        (
            _in_envelope("identity", "permissions", value="all"),
            "Input should be a valid dictionary (at envelope.identity.permissions)",
        ),
        (
            _in_envelope("budgets", "turns", value=-1),
            "Input should be greater than or equal to 0 (at envelope.budgets.turns)",
        ),
        (
            _in_envelope("expires_at", value="never"),
            "Input should be a valid datetime or date, input is too short (at envelope.expires_at)",
        ),
        (_in_envelope("task", "brief", value="x" * MB), "larger than 262144 bytes"),
        (_in_envelope("task", "brief", value="\ud800"), "text that is not valid Unicode"),
        (lambda d: d.pop("envelope"), "Field required (at envelope)"),
        (
            lambda d: d.__setitem__("format", "swarm-envelope/2"),
            "Input should be 'swarm-envelope/1' (at format)",
        ),
    ],
    ids=[
        "signature-non-ascii",
        "signature-emoji",
        "signature-truncated",
        "signature-int",
        "signature-null",
        "ciphertext-non-ascii",
        "ciphertext-huge",
        "ciphertext-list",
        "task-a-string",
        "permissions-a-string",
        "budget-negative",
        "expiry-words",
        "brief-huge",
        "brief-lone-surrogate",
        "no-envelope",
        "other-format",
    ],
)
async def test_a_mangled_envelope_is_blocked_with_its_reason(
    swarm: Swarm, mangle: Callable[[dict[str, Any]], None], reason: str
) -> None:
    sealed = await dispatched(swarm)
    data = as_dict(sealed)
    mangle(data)
    arrivals: list[Arrival] = [data]  # the mapping a queue or a remote parameter delivers
    changed = {k for k, v in as_dict(sealed).items() if data.get(k, ...) != v}
    if changed and changed <= {"signature", "ciphertext"}:
        # The same fault in process: a model copied without validation.
        seal: dict[str, Any] = {k: data[k] for k in ("signature", "ciphertext") if k in data}
        arrivals.append(sealed.model_copy(update=seal))
    for arrived in arrivals:
        outcome = await assert_blocked(swarm, sealed, arrived, MALFORMED + reason)
    if isinstance(data.get("envelope"), dict):
        # The row names the worker the envelope claims: BLOCKED, with the reason.
        worker = swarm.runtime.store.get_worker(sealed.envelope.worker_id)
        assert (worker.status, worker.blocked_reason) == ("blocked", outcome.reason)


async def test_an_envelope_cut_short_is_blocked_and_names_no_worker(swarm: Swarm) -> None:
    sealed = await dispatched(swarm)
    text = sealed.model_dump_json()
    for cut in (0, 1, len(text) // 3, len(text) - 1):
        before = len(swarm.sandbox.state.requests)
        outcome = await swarm.run(text[:cut])  # type: ignore[arg-type]
        assert outcome.status == "blocked" and outcome.worker_id == "-"
        assert outcome.reason is not None
        assert outcome.reason.startswith(MALFORMED + "Invalid JSON: EOF while parsing")
        assert len(swarm.sandbox.state.requests) == before
    assert swarm.runtime.store.list_workers(swarm.run_id) == []


async def test_non_ascii_seal_fields_are_refused_by_the_sealer_too(swarm: Swarm) -> None:
    # The worker's door is not the only caller of open(): the sealer refuses on its own.
    sealed = await dispatched(swarm)
    for update in ({"signature": "é" * 43 + "="}, {"ciphertext": "é" * 64}):
        with pytest.raises(EnvelopeRejected, match=r"^BLOCKED: envelope malformed: "):
            swarm.runtime.sealer.open(sealed.model_copy(update=update))


# -- the property -----------------------------------------------------------------------------

ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.text(max_size=60),
    st.text(alphabet=st.characters(min_codepoint=0x80), min_size=1, max_size=60),
    st.builds(lambda n: "A" * n, st.sampled_from([300 * 1024, 2 * MB])),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


def leaf_paths(node: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if isinstance(node, dict):
        paths = [prefix] if prefix else []
        for key, value in node.items():
            paths.extend(leaf_paths(value, (*prefix, key)))
        return paths
    return [prefix]


@st.composite
def mangled(draw: st.DrawFn, original: dict[str, Any]) -> Arrival:
    data: dict[str, Any] = json.loads(json.dumps(original))
    how = draw(st.sampled_from(["replace", "drop", "truncate-text", "truncate-field"]))
    if how == "truncate-text":
        text = json.dumps(original)
        return text[: draw(st.integers(min_value=0, max_value=len(text) - 1))]
    path = draw(st.sampled_from(leaf_paths(data)))
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    if how == "drop":
        del parent[path[-1]]
    elif how == "truncate-field" and isinstance(parent[path[-1]], str) and parent[path[-1]]:
        value = parent[path[-1]]
        parent[path[-1]] = value[: draw(st.integers(min_value=0, max_value=len(value) - 1))]
    else:
        parent[path[-1]] = draw(ODD_VALUES)
    return data


async def test_every_mangled_envelope_is_blocked_property(swarm: Swarm) -> None:
    sealed = await dispatched(swarm)
    original = as_dict(sealed)
    seen: list[Arrival] = []

    @settings(
        max_examples=60,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(mangled(original))
    def collect(arrived: Arrival) -> None:
        try:
            swarm.runtime.sealer.open(admit_envelope(arrived))
        except EnvelopeRejected:
            seen.append(arrived)
            return
        assume(False)  # the mangling changed nothing that counts: still the same envelope

    collect()
    assert seen
    for arrived in seen:
        outcome = await swarm.run(arrived)  # type: ignore[arg-type]
        assert outcome.status == "blocked", (arrived, outcome)
        assert outcome.reason is not None and outcome.reason.startswith("BLOCKED: envelope ")
        assert "\n" not in outcome.reason and len(outcome.reason) < 300
    assert swarm.runtime.store.list_workers(swarm.run_id, status="running") == []
    assert swarm.writes() == []
