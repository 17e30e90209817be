"""What a person sees when a command fails: one or two lines, the right exit status, no secret.

Every command runs inside :class:`SwarmGroup`, the one funnel that turns an exception into a
message:

- a :class:`~agents.errors.SwarmError` (a setting, a flag, a role file, an unknown id, an App that
  is not installed where asked, a GitHub API that does not answer, a local server that did not
  start) is ``error: <its message>`` and its class's exit status (2 for what the person can
  change, 1 for a failure of the machine);
- a store database that cannot be opened names ``SWARM_STORE_URL``, exit status 2;
- a folder or file the system does not let swarm write (read-only, another user's) names it and
  ``SWARM_DATA_DIR``, exit status 2;
- anything else is ``error: <type>: <first line>`` plus a hint, and exit status 1;
- ``swarm --debug ...`` re-raises instead, for the full traceback.

A failed run (a worker blocked or failed) is not an exception: the run command returns 1 itself.
Messages pass the redaction table, so a token or password inside an exception text never
reaches the terminal. SQLAlchemy's classes are looked up in ``sys.modules``: an exception of a
class whose module was never imported cannot be raised, so nothing heavy is imported here.
"""

from __future__ import annotations

import errno
import sys
from typing import Any

import typer
from typer._click.exceptions import NoArgsIsHelpError, UsageError
from typer.core import TyperGroup

from agents.errors import EXIT_FAILED, EXIT_USAGE, SwarmError
from flows.cli.options import RootSwitch

# The store's database could not be reached or opened: the URL or the server is wrong.
STORE_UNREACHABLE = (
    ("sqlalchemy.exc", "OperationalError"),
    ("sqlalchemy.exc", "InterfaceError"),
)

# A folder or file swarm may not write: the person's to change (SWARM_DATA_DIR, its owner, its
# mount), not a bug.
_NOT_WRITABLE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})

# ``swarm --debug``: an error's whole traceback instead of its one line.
DEBUG = RootSwitch("--debug")


def _classes(names: tuple[tuple[str, str], ...]) -> tuple[type[BaseException], ...]:
    found = []
    for module, name in names:
        loaded = sys.modules.get(module)
        cls = getattr(loaded, name, None) if loaded is not None else None
        if isinstance(cls, type) and issubclass(cls, BaseException):
            found.append(cls)
    return tuple(found)


def _clean(text: str) -> str:
    from agents.redact import redact

    return redact(text).strip()


def describe(exc: BaseException) -> tuple[int, str]:
    """The exit status and the message a person sees for ``exc``."""
    if isinstance(exc, SwarmError):
        return exc.exit_code, f"error: {_clean(str(exc))}"
    if isinstance(exc, _classes(STORE_UNREACHABLE)):
        cause = getattr(exc, "orig", None) or exc
        first = (_clean(str(cause)).splitlines() or [type(cause).__name__])[0]
        return EXIT_USAGE, f"error: cannot open the store (check SWARM_STORE_URL): {first}"
    if isinstance(exc, OSError) and exc.filename is not None and exc.errno in _NOT_WRITABLE:
        where = _clean(str(exc.filename))
        return EXIT_USAGE, (
            f"error: swarm cannot write {where}: {(exc.strerror or 'not permitted').lower()}; "
            "point SWARM_DATA_DIR at a folder of your own that you can write"
        )
    first = (_clean(str(exc)).splitlines() or [""])[0]
    return EXIT_FAILED, (
        f"error: {type(exc).__name__}: {first}\n"
        f"(this looks like a bug; `swarm {DEBUG.flag} ...` shows the traceback)"
    )


def usage_message(exc: UsageError) -> str:
    """A wrong flag or argument in two lines, instead of Typer's framed usage block."""
    text = exc.format_message().strip()
    where = exc.ctx.command_path if exc.ctx is not None else "swarm"
    return f"error: {text[:1].lower()}{text[1:]}\nsee `{where} --help`"


def _is_typer_control(exc: BaseException) -> bool:
    """Typer's exit and abort (and help for a bare group): Typer handles them itself."""
    return isinstance(exc, NoArgsIsHelpError) or type(exc).__module__.startswith("typer.")


def _fail(message: str, code: int) -> typer.Exit:
    typer.echo(message, err=True)
    return typer.Exit(code)


class SwarmGroup(TyperGroup):
    """The root command group: runs the command and turns its errors into messages."""

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().make_context(*args, **kwargs)
        except UsageError as exc:  # `swarm --bogus`
            if isinstance(exc, NoArgsIsHelpError):
                raise
            raise _fail(usage_message(exc), EXIT_USAGE) from None

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except UsageError as exc:
            if isinstance(exc, NoArgsIsHelpError):
                raise
            raise _fail(usage_message(exc), EXIT_USAGE) from None
        except Exception as exc:
            if DEBUG.on or _is_typer_control(exc):
                raise
            code, message = describe(exc)
            raise _fail(message, code) from None
