"""``swarm webhook serve``: the receiver built from settings and run under uvicorn.

Where event work runs: with ``SWARM_WEBHOOK_DEPLOYMENT`` (or ``--deployment``), one flow run of
that ``swarm-run`` deployment per event, created with ``run_deployment(timeout=0,
idempotency_key=...)`` on the configured Prefect API; without it, in this process, on the
configured or local Prefect server, ``SWARM_WEBHOOK_CONCURRENCY`` at a time.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from agents.private_files import read_private_text
from flows.local.env import prepare_prefect_env
from flows.local.prefect_server import use_local_prefect

if TYPE_CHECKING:
    from agents.settings.model import Settings
    from agents.store import Store
    from flows.run.bot import BotCommands
    from flows.webhook.app import WebhookReceiver
    from flows.webhook.recovery import DeliveryRecovery

# PRs whose feedback is read at once; more wait their turn in memory.
LEARNING_CONCURRENCY = 2


def read_webhook_secret(settings: Settings) -> str:
    from agents.settings.model import ConfigError

    path = settings.webhook_secret_file
    if path is None:
        raise ConfigError("missing settings: SWARM_WEBHOOK_SECRET_FILE (the App's webhook secret)")
    try:
        secret = read_private_text(path, "SWARM_WEBHOOK_SECRET_FILE: the webhook secret").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"SWARM_WEBHOOK_SECRET_FILE: {path} cannot be read ({type(exc).__name__})"
        ) from None
    if len(secret) < 16:
        raise ConfigError(
            f"SWARM_WEBHOOK_SECRET_FILE: {path} holds no secret of at least 16 characters"
        )
    return secret


def build_receiver(
    settings: Settings,
    *,
    deployment: str | None,
    concurrency: int | None,
    overlay: str | None = None,
) -> tuple[WebhookReceiver, Any]:
    """The receiver and its shutdown coroutine function; every run it starts carries the
    session ``overlay`` when one is given."""
    from agents.kinds.book import RoleBook
    from agents.posting.keys import review_key_prefix
    from agents.roles.files import load_roles
    from agents.store import Store
    from flows.run.bot import BotCommands
    from flows.run.gate import decide
    from flows.run.request import RunRequest
    from flows.webhook.app import WebhookReceiver
    from flows.webhook.enqueue import (
        DeploymentEnqueuer,
        InProcessEnqueuer,
        Overlaid,
        run_flow_here,
    )
    from flows.webhook.learning import FeedbackLearner
    from flows.webhook.queue import DeliveryQueue
    from flows.webhook.sink import EventSink

    secret = read_webhook_secret(settings)
    roles = load_roles(settings.roles_dir)
    chosen = deployment or settings.webhook_deployment
    inner: DeploymentEnqueuer | InProcessEnqueuer[RunRequest]
    store = Store.open(settings.store_url, settings.data_dir)
    if chosen:
        inner = DeploymentEnqueuer(chosen)
    else:
        # Each run moves its delivery's row along: running, then done or failed.
        inner = InProcessEnqueuer(
            concurrency or settings.webhook_concurrency, run_flow_here, deliveries=store
        )
    enqueuer = Overlaid(inner, overlay)
    book = RoleBook(roles)
    reviewer = roles.get(book.role_for("review") or "")
    commands = BotCommands(settings, roles, reviewer.identity if reviewer else "default")
    installations = [
        i.installation_id for i in settings.all_identities().values() if i.installation_id
    ]
    # Feedback is learned here, in the background, a few PRs at a time (GitHub reads only).
    learner = InProcessEnqueuer(
        LEARNING_CONCURRENCY, runner=FeedbackLearner(settings, roles, commands, store, store)
    )

    def reviewed(repo: str, number: int) -> bool:
        return bool(store.posted_review_keys(review_key_prefix(repo, number)))

    receiver = WebhookReceiver(
        secret=secret,
        deliveries=store,
        sink=EventSink(enqueuer, commands, learner, book, decider=partial(decide, store)),
        max_body_bytes=settings.webhook_max_body_bytes,
        repos=settings.repos,
        installations=installations,
        reviewed=reviewed,
        queue=DeliveryQueue(store),
        recovery=_recovery(settings, commands, store),
        roles=book,
    )

    async def shutdown() -> None:
        await enqueuer.aclose()
        await learner.aclose()
        await receiver.stop()  # the claims' renewal ends before the store closes
        await commands.aclose()
        store.close()

    return receiver, shutdown


def _recovery(settings: Settings, commands: BotCommands, store: Store) -> DeliveryRecovery | None:
    """What asks GitHub again for the deliveries it failed to make, with the JWT of the App the
    commands' bot belongs to (the App taking the webhook); None when turned off or the identity
    is no App (a bot PAT has no webhook log)."""
    import logging

    from agents.identity.minter import InstallationMinter
    from flows.webhook.recovery import DeliveryRecovery

    if settings.webhook_recovery_interval_s <= 0:
        return None
    source = commands.dispatcher.source(commands.identity)
    if not isinstance(source, InstallationMinter):
        logging.getLogger("flows.webhook").info(
            "missed deliveries are not recovered: identity %r is no GitHub App", commands.identity
        )
        return None
    return DeliveryRecovery(source, store, interval_s=settings.webhook_recovery_interval_s)


def serve_webhooks(
    *,
    host: str,
    port: int,
    deployment: str | None,
    concurrency: int | None,
    overlay: str | None = None,
) -> None:
    import uvicorn

    from agents.settings.model import load_settings
    from flows.cli.preflight import check_store, needs, serving_checks
    from flows.webhook.app import create_webhook_app
    from flows.webhook.connections import ACCEPT_BATCH, ReadLimits, guarded_protocol, make_room

    settings = load_settings(needs=needs(any_identity=True), checks=serving_checks(overlay))
    read_webhook_secret(settings)  # before seconds go into starting Prefect
    limits = ReadLimits.from_settings(settings)
    make_room(limits)
    check_store(settings)
    prepare_prefect_env()
    if not (deployment or settings.webhook_deployment):
        use_local_prefect(settings.data_dir)
    receiver, shutdown = build_receiver(
        settings, deployment=deployment, concurrency=concurrency, overlay=overlay
    )
    app = create_webhook_app(receiver, on_shutdown=shutdown)
    _log_deliveries_to_console()
    # Each connection's head, body and idle time limited, and their number (connections.py);
    # the receiver serves no WebSocket, so an upgrade never hands a socket to an unguarded one.
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="info",
        server_header=False,
        http=guarded_protocol(limits),
        backlog=ACCEPT_BATCH,
        ws="none",
    )


def _log_deliveries_to_console() -> None:
    """What the receiver did with each delivery, beside uvicorn's access lines (redacted)."""
    import logging

    from agents.redact import install_log_redaction

    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s:     %(message)s"))
    names = ("flows.webhook", "flows.events")
    for name in names:
        logger = logging.getLogger(name)
        logger.setLevel(logging.INFO)
        logger.addHandler(handler)
    install_log_redaction(names)
