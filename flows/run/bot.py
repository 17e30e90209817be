"""The bot's GitHub calls for PR commands: whether the commenter may command, reactions, replies.

Made as the role's own bot, with a token minted for the one repository and only what these calls
need (``metadata: read`` for the collaborator permission, ``pull_requests: write`` for reactions
and replies on a PR), through the throttled gateway; never as the maintainer.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from agents.identity.claim import TokenScope

if TYPE_CHECKING:
    from pydantic import SecretStr

    from agents.dispatch.dispatcher import Dispatcher
    from agents.github.gateway import GitHubGateway
    from agents.roles import Role
    from agents.settings.model import Settings
    from agents.wiring import Runtime

log = logging.getLogger("flows.events")

COMMAND_PERMISSIONS = {"metadata": "read", "pull_requests": "write"}

# (login, token provider, worker id) -> a gateway; the runtime's, or a plain one.
GatewayFactory = Callable[[str, Callable[[], "str | SecretStr"], str], "GitHubGateway"]


@asynccontextmanager
async def bot_gateway(
    dispatcher: Dispatcher,
    make_gateway: GatewayFactory,
    identity: str,
    repo: str,
    permissions: dict[str, str] | None = None,
) -> AsyncIterator[GitHubGateway]:
    """A gateway as ``identity``'s bot, scoped to ``repo`` and ``permissions`` (default: the
    command permissions)."""
    wanted = dict(permissions or COMMAND_PERMISSIONS)
    scope = TokenScope(repositories=(repo,), permissions=wanted)
    holder = f"commands-{os.getpid()}"
    lease = await dispatcher.lease(identity, scope, role="commands", holder=holder)
    gateway = make_gateway(lease.expected_login, lambda: lease.token, "commands")
    try:
        yield gateway
    finally:
        await gateway.aclose()
        await dispatcher.release_lease(identity, lease)


class BotCommands:
    """:class:`flows.webhook.sink.CommandGitHub` over the webhook process's own dispatcher."""

    def __init__(self, settings: Settings, roles: dict[str, Role], identity: str) -> None:
        from agents.dispatch.dispatcher import Dispatcher
        from agents.dispatch.sealing import EnvelopeSealer, generate_sealing_key
        from agents.github.identity_calls import ThrottledIdentityCalls
        from agents.ratelimit.github.registry import IdentityThrottles

        self.settings = settings
        self.identity = identity
        self.throttles = IdentityThrottles()
        # Nothing is sealed here: the dispatcher is used for its token leases only. Revoking a
        # token spends the bot's budget, so it goes through the bot's throttle too.
        calls = ThrottledIdentityCalls(self.throttles)
        self.dispatcher = Dispatcher(
            settings, roles, EnvelopeSealer(generate_sealing_key()), source_options={"calls": calls}
        )

    def gateway(
        self, login: str, token: Callable[[], str | SecretStr], worker_id: str
    ) -> GitHubGateway:
        from agents.github.gateway import GitHubGateway

        return GitHubGateway(
            self.settings.github_api_url,
            login,
            token,
            self.throttles(login),
            worker_id=worker_id,
            timeout=self.settings.http_timeout_seconds,
        )

    async def permission(self, repo: str, login: str) -> str:
        async with bot_gateway(self.dispatcher, self.gateway, self.identity, repo) as gateway:
            return await gateway.collaborator_permission(repo, login)

    async def react(self, repo: str, comment_id: int, content: str) -> None:
        async with bot_gateway(self.dispatcher, self.gateway, self.identity, repo) as gateway:
            await gateway.add_comment_reaction(repo, comment_id, content)

    async def reply(self, repo: str, number: int, body: str) -> None:
        async with bot_gateway(self.dispatcher, self.gateway, self.identity, repo) as gateway:
            await gateway.create_issue_comment(repo, number, body)

    async def aclose(self) -> None:
        await self.dispatcher.aclose()


async def acknowledge(runtime: Runtime, role: str, repo: str, comment_id: int, ok: bool) -> None:
    """The command's second reaction, when its run ends: rocket, or confused if it failed.
    A reaction that cannot be made is logged: the review stands either way."""
    from agents.redact import redact
    from flows.run.adapters import role_identity

    def make(login: str, token: Callable[[], str | SecretStr], worker_id: str) -> GitHubGateway:
        return runtime.gateway(login, token, worker_id=worker_id)

    try:
        identity = role_identity(runtime, role)
        async with bot_gateway(runtime.dispatcher, make, identity, repo) as gateway:
            await gateway.add_comment_reaction(repo, comment_id, "rocket" if ok else "confused")
    except Exception as exc:
        log.warning("reacting to comment %d on %s failed: %s", comment_id, repo, redact(str(exc)))
