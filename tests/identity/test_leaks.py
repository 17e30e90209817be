"""Plant a token, a PAT and a private key; run every path; find none of them anywhere."""

from __future__ import annotations

import inspect
import logging
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import respx
from pydantic import SecretStr

from agents.dispatch.envelope import (
    DispatchEnvelope,
    EnvelopeRejected,
    OpenedEnvelope,
    SealedEnvelope,
)
from agents.dispatch.sealing import EnvelopeSealer, SealRefused, generate_sealing_key
from agents.identity import IdentityError, TokenScope
from agents.identity.app_jwt import AppJwtSigner
from agents.identity.minter import InstallationMinter
from agents.identity.sources import open_identity
from agents.identity.verify import IdentityVerifier
from agents.roles import RoleRefs
from agents.settings.model import ConfigError
from agents.work import Task
from sandbox.github.records import TOKEN_FORMATS, TokenFormat
from sandbox.github.seed import MAINTAINER, REVIEWER_APP_ID
from sandbox.server import SandboxServer
from tests.identity.conftest import REVIEWER, bot_pat_identity, dispatch, settings_for
from tests.leakscan import fragments, sealed_forms
from tests.ports import closed_port

MARK = "PLANTEDleakCANARY"
PAT = f"ghp_{MARK}maintainerPat0123456789"
LOGGERS = ("", "agents", "httpx", "httpcore", "githubkit", "hishel")
pytestmark = pytest.mark.anyio

SCOPE = TokenScope(
    repositories=("acme/widgets",), permissions={"pull_requests": "write", "contents": "read"}
)


def chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        todo += [item.__cause__, item.__context__]


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


@pytest.mark.parametrize("token_format", TOKEN_FORMATS)
async def test_no_secret_appears_in_logs_errors_or_envelopes(
    sandbox: SandboxServer,
    reviewer: InstallationMinter,
    tmp_path: Path,
    debug_logs: pytest.LogCaptureFixture,
    token_format: TokenFormat,
) -> None:
    state = sandbox.state
    state.knobs.token_format = token_format
    pem_text = state.private_key_pem(REVIEWER_APP_ID)
    key_lines = [line for line in pem_text.splitlines() if line and "-----" not in line]
    texts: list[str] = []
    errors: list[BaseException] = []
    log = logging.getLogger("agents.test_leaks")

    async def expect(kind: type[BaseException], call: Callable[[], object]) -> None:
        try:
            answer = call()
            if inspect.isawaitable(answer):
                await answer
        except kind as exc:
            errors.append(exc)
            log.exception("refused: %s", exc)
        else:
            raise AssertionError(f"expected {kind.__name__}")

    # Every request still reaches the sandbox; the spy keeps what went over the wire.
    with respx.mock(assert_all_called=False) as router:
        wire = router.route().pass_through()
        lease = await reviewer.acquire(SCOPE, role="reviewer", holder="w1")
        token = lease.token.get_secret_value()
        log.debug("lease %r %s minter %r stats %r", lease, lease, reviewer, reviewer.stats)

        sealer = EnvelopeSealer(generate_sealing_key())
        env = DispatchEnvelope.issue(
            run_id="run",
            worker_id="w1",
            task=Task(kind="review_pr", repo="acme/widgets", number=1),
            roles=RoleRefs(agent="reviewer"),
            identity=lease.claim(),
        )
        sealed = sealer.seal(env, lease.token, MAINTAINER)
        opened = sealer.open(sealed)
        log.info("sealed %r opened %r %s", sealed, opened, opened)

        verifier = IdentityVerifier(sandbox.url, MAINTAINER)
        verified = await verifier.verify(opened)
        log.info("verified %r", verified)

        # Error paths, each logged with its traceback.
        posing = bot_pat_identity(sandbox, tmp_path, state.maintainer_pat)

        async def verify_posing() -> object:
            return await verifier.verify(
                dispatch(await posing.acquire(SCOPE, role="r", holder="w"))
            )

        await expect(IdentityError, verify_posing)
        await expect(
            IdentityError,
            lambda: verifier.verify(OpenedEnvelope(envelope=env, credential=SecretStr(PAT))),
        )
        state.knobs.mint_extra_permissions = {"administration": "write"}
        for refused in (
            TokenScope(repositories=("acme/gadgets",), permissions={"issues": "write"}),
            TokenScope(repositories=("acme/widgets",), permissions={"pull_request": "write"}),
        ):
            await expect(IdentityError, lambda: reviewer.acquire(refused, role="r", holder="w2"))
        await expect(SealRefused, lambda: sealer.seal(env, SecretStr(PAT), MAINTAINER))
        tampered = SealedEnvelope.model_validate(
            {**sealed.model_dump(), "signature": sealed.signature[::-1]}
        )
        await expect(EnvelopeRejected, lambda: sealer.open(tampered))
        await expect(
            ConfigError, lambda: AppJwtSigner(1001, SecretStr(pem_text[: len(pem_text) // 2]))
        )
        await expect(ConfigError, lambda: EnvelopeSealer(SecretStr(PAT)))
        unreachable = IdentityVerifier(f"http://127.0.0.1:{closed_port()}", MAINTAINER)
        await expect(IdentityError, lambda: unreachable.verify(opened))
        await reviewer.aclose()
    sent = [call.request.headers.get("authorization", "") for call in wire.calls]
    credentials = {header.partition(" ")[2] for header in sent} - {""}
    assert token in credentials and any(c.startswith("ey") for c in credentials)  # JWTs too

    texts += [debug_logs.text]
    formatter = logging.Formatter("%(message)s")
    texts += [formatter.format(record) for record in debug_logs.records]
    texts += [str(record.args) for record in debug_logs.records]
    for exc in errors:
        for item in chain(exc):
            texts += [str(item), repr(item), repr(item.args)]
    texts += sealed_forms(sealed)
    texts += [
        repr(lease),
        str(lease),
        repr(lease.claim()),
        lease.claim().model_dump_json(),
        repr(opened),
        repr(verified),
        verified.model_dump_json(),
        repr(reviewer),
        repr(sealer),
    ]
    assert debug_logs.records, "nothing was logged: the scan would prove nothing"
    assert len(errors) == 9
    secrets = [*fragments(token), PAT, MARK, *credentials, *key_lines]
    for text in texts:
        for secret in secrets:
            assert secret not in text, f"secret fragment found in: {text[:120]!r}"
    with pytest.raises(TypeError):
        pickle.dumps(lease)


def test_prefect_serialises_a_sealed_envelope_without_the_token() -> None:
    serializers = pytest.importorskip("prefect.serializers")
    token = f"ghs_{MARK}.dotted.token"
    from agents.identity import IdentityClaim

    env = DispatchEnvelope.issue(
        run_id="run",
        worker_id="w1",
        task=Task(kind="review_pr", repo="acme/widgets", number=1),
        roles=RoleRefs(agent="reviewer"),
        identity=IdentityClaim(name="default", kind="app", expected_login="swarm-reviewer[bot]"),
    )
    sealer = EnvelopeSealer(generate_sealing_key())
    sealed = sealer.seal(env, SecretStr(token), "octo-maintainer")
    for serializer in (serializers.JSONSerializer(), serializers.PickleSerializer()):
        blob = serializer.dumps(sealed)
        assert MARK.encode() not in blob
        again = serializer.loads(blob)
        assert sealer.open(again).credential == SecretStr(token)


@pytest.mark.parametrize("token_format", TOKEN_FORMATS)
async def test_real_http_stack_logs_no_secret_at_debug(
    sandbox: SandboxServer,
    tmp_path: Path,
    debug_logs: pytest.LogCaptureFixture,
    token_format: TokenFormat,
) -> None:
    # respx answers above httpcore; the sandbox exercises the whole stack, sockets included.
    sandbox.state.knobs.token_format = token_format
    settings = settings_for(sandbox, tmp_path)
    source = open_identity(settings, "default")
    lease = await source.acquire(REVIEWER, role="reviewer", holder="w1")
    verifier = IdentityVerifier(sandbox.url, "octo-maintainer")
    await verifier.verify(dispatch(lease))
    await source.aclose()
    await verifier.aclose()
    token = lease.token.get_secret_value()
    pem = sandbox.state.private_key_pem(1001)
    key_lines = [line for line in pem.splitlines() if line and "-----" not in line]
    assert any(r.name.startswith("httpcore") for r in debug_logs.records)
    text = debug_logs.text + "".join(str(r.args) for r in debug_logs.records)
    for secret in [*fragments(token), token[:24], *key_lines]:
        assert secret not in text
