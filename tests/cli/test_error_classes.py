"""Every error a person can act on derives from ``SwarmError`` and reaches the terminal through
the CLI's one funnel as ``error: <its message>``, with its exit status: no type name, no hint
that it is a bug, no traceback, no secret."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator

import pytest
import typer
from typer.testing import CliRunner

import agents
import flows
from agents.confine.errors import ConfineError, SandboxUnavailable
from agents.dispatch.sealing import SealRefused
from agents.errors import SwarmError
from agents.eval.labels import EvalSetError
from agents.identity.errors import IdentityBlocked, IdentityError, MintRefused, PermissionRefused
from agents.identity.registration import RegistrationFailed
from agents.llm.models import ModelRegistryError, UnknownModel
from agents.planning.repo_config import RepoConfigError
from agents.private_files import PrivatePathError
from agents.roles.files import RoleLoadError
from agents.settings.model import ConfigError
from agents.store.base import StoreError, UnknownRunError, UnknownWorkerError
from agents.store.copy import StoreCopyError
from agents.store.engine import StoreConfigError
from agents.store.memory_rows import UnknownMemoryError
from agents.transport import GitHubUnreachable
from flows.cli.errors import SwarmGroup
from flows.local.prefect_server import ServerStartError
from tests.cli.conftest import EXIT_FAILED, EXIT_USAGE

PLANTED = "ghs_" + "Q" * 36

# One of each, with the exit status a person should see.
EXAMPLES: list[tuple[SwarmError, int]] = [
    (SwarmError("something to change"), EXIT_USAGE),
    (ConfigError("SWARM_APP_ID: must be a number"), EXIT_USAGE),
    (RoleLoadError(["roles/reviewer.yaml:3: unknown key 'modle'"]), EXIT_USAGE),
    (StoreError("worker status 'done' is not one of: pending, running"), EXIT_USAGE),
    (UnknownWorkerError("no worker with id 'w-1'"), EXIT_USAGE),
    (UnknownRunError("no run with id 'run-1'"), EXIT_USAGE),
    (UnknownMemoryError("no memory 99"), EXIT_USAGE),
    (StoreConfigError("SWARM_STORE_URL backend 'mysql' is not supported"), EXIT_USAGE),
    (StoreCopyError("--to already holds a store (12 row(s) in 3 table(s))"), EXIT_USAGE),
    (PrivatePathError("the data directory .swarm belongs to another user (uid 65534)"), EXIT_USAGE),
    (IdentityError("the App is not installed on acme"), EXIT_USAGE),
    (PermissionRefused(["contents:write is above the worker ceiling"]), EXIT_USAGE),
    (MintRefused(f"GitHub minted more than asked; token {PLANTED} revoked"), EXIT_USAGE),
    (IdentityBlocked.mismatch("login is octo-maintainer"), EXIT_USAGE),
    (SealRefused("the maintainer's token is never sealed"), EXIT_USAGE),
    (
        GitHubUnreachable(
            "cannot reach http://127.0.0.1:9 for GET /app: ConnectError",
            kind="could not connect",
            origin="ConnectError",
        ),
        EXIT_USAGE,
    ),
    (UnknownModel("--model: model 'gpt-4o' is not in the model registry"), EXIT_USAGE),
    (ModelRegistryError("SWARM_MODELS: my-model.context_window: must be > 0"), EXIT_USAGE),
    (RepoConfigError([".github/swarm.yaml:2: unknown key 'skip'"]), EXIT_USAGE),
    (EvalSetError("sandbox/eval/default/x.yaml: findings.0.severity: bad"), EXIT_USAGE),
    (
        RegistrationFailed("GitHub did not create the App from the manifest (404 Not Found)"),
        EXIT_USAGE,
    ),
    (ServerStartError("the local Prefect server did not start; see its log"), EXIT_FAILED),
    (ConfineError("the command must be a list of arguments, not a shell line"), EXIT_USAGE),
    (
        SandboxUnavailable(
            "no sandbox: bwrap is not installed, so the repository's code is not run"
        ),
        EXIT_USAGE,
    ),
]


def _subclasses(cls: type[SwarmError]) -> Iterator[type[SwarmError]]:
    yield cls
    for sub in cls.__subclasses__():
        yield from _subclasses(sub)


def test_every_swarm_error_class_has_an_example_here() -> None:
    for package in (agents, flows):
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if ".migrations" not in module.name and not module.name.endswith("__main__"):
                importlib.import_module(module.name)
    ours = {c for c in _subclasses(SwarmError) if c.__module__.startswith(("agents", "flows"))}
    assert ours == {type(exc) for exc, _ in EXAMPLES}


def _command_raising(exc: BaseException) -> typer.Typer:
    app = typer.Typer(cls=SwarmGroup)

    @app.command()
    def fail() -> None:
        raise exc

    @app.command()
    def other() -> None:  # two commands: Typer keeps the group, and so the funnel
        pass

    return app


@pytest.mark.parametrize(("exc", "code"), EXAMPLES, ids=lambda e: type(e).__name__)
def test_each_error_class_reaches_the_terminal_as_its_message_and_exit_status(
    exc: SwarmError, code: int
) -> None:
    result = CliRunner().invoke(_command_raising(exc), ["fail"])
    assert result.exit_code == code == exc.exit_code, result.output
    assert isinstance(result.exception, SystemExit)  # the funnel's exit, not the error
    shown = str(exc).replace(PLANTED, "[REDACTED:github-token]")
    assert result.output == f"error: {shown}\n"
    assert PLANTED not in result.output and "Traceback" not in result.output
    if not isinstance(exc, RoleLoadError):  # which lists its problems one a line
        assert len(result.output.splitlines()) == 1


def test_an_error_outside_the_root_is_a_bug_with_its_type_and_a_hint() -> None:
    result = CliRunner().invoke(_command_raising(KeyError("x")), ["fail"])
    assert result.exit_code == EXIT_FAILED
    assert result.output.splitlines() == [
        "error: KeyError: 'x'",
        "(this looks like a bug; `swarm --debug ...` shows the traceback)",
    ]
