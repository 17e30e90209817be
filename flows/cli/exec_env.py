"""What a program launched by ``swarm exec`` gets: an environment built from an allow-list.

The host's environment minus a list of known credentials always forgets one (``SSH_AUTH_SOCK``
pushes as the maintainer, ``NETRC`` and ``HOME/.netrc`` answer git's password prompt, a
``.gitconfig`` credential helper, ``GIT_CONFIG_PARAMETERS``, ``GITHUB_PAT``,
``ACTIONS_RUNTIME_TOKEN``...). So nothing is inherited unless it is named here or by the person
with ``--env NAME``:

- from the host: ``PATH``, ``TERM``, ``TZ`` and the locale (``LANG``, ``LANGUAGE``, ``LC_ALL``
  and the twelve ``LC_`` categories by name, never any other ``LC_`` variable), each locale
  value only when it looks like a locale name and holds no secret;
- made for the child: a fresh temporary ``HOME`` with its own XDG directories, removed when the
  child exits; the bot token as ``GH_TOKEN`` and ``GITHUB_TOKEN`` (and ``GH_ENTERPRISE_TOKEN``
  on GitHub Enterprise), ``GH_HOST``, ``GITHUB_API_URL``; git configured in that ``HOME`` to
  send the token over HTTPS to that host only (a credential helper that reads ``$GH_TOKEN``, so
  the token is never written to disk), SSH remotes rewritten to HTTPS, ``GIT_CONFIG_NOSYSTEM=1``
  and ``GIT_TERMINAL_PROMPT=0``.

``--env NAME`` never passes a GitHub, git, SSH, netrc or swarm variable, nor a value that holds
a GitHub token, a configured secret or the path of a secret file.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

from pydantic import BaseModel

from agents.redact import redact
from agents.redact.rules import mark
from agents.settings.model import ConfigError

PASSED = ("PATH", "TERM", "TZ")
# The locale: POSIX's categories and glibc's, by name. ``LC_*`` as a prefix passed anything a
# host names so (``LC_SECRET_TOKEN``); SSH forwards ``LC_*`` from the client, too.
LOCALE = (
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_ADDRESS",
    "LC_COLLATE",
    "LC_CTYPE",
    "LC_IDENTIFICATION",
    "LC_MEASUREMENT",
    "LC_MESSAGES",
    "LC_MONETARY",
    "LC_NAME",
    "LC_NUMERIC",
    "LC_PAPER",
    "LC_TELEPHONE",
    "LC_TIME",
)
# ``en_US.UTF-8``, ``C``, ``de_DE@euro``, ``sr_RS.UTF-8@latin``; LANGUAGE lists them with ":".
_LOCALE_VALUE = re.compile(r"[A-Za-z][A-Za-z0-9_.@+\-]{0,63}(?::[A-Za-z][A-Za-z0-9_.@+\-]{0,63})*")
# Variables that carry or point at someone's credentials, or that we set for the child.
REFUSED_PREFIXES = ("SWARM_", "GH_", "GITHUB_", "GIT_", "SSH_", "ACTIONS_", "XDG_", "ANTHROPIC_")
REFUSED = frozenset({"HOME", "NETRC", "CURL_HOME", "GNUPGHOME", "GPG_AGENT_INFO", "KRB5CCNAME"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
GIT_USER = "x-access-token"
_CREDENTIAL_NAMES = frozenset({"SSH_AUTH_SOCK", "NETRC", "GIT_ASKPASS", "SSH_ASKPASS"})
_SECRET_MIN = 8


def refused_reason(name: str, value: str, secrets: Sequence[str]) -> str | None:
    """Why ``--env name`` may not pass ``value`` to the child, or None when it may."""
    upper = name.upper()
    if upper in REFUSED or upper.startswith(REFUSED_PREFIXES):
        return "never passed to the child: it carries or points at credentials, or swarm sets it"
    # The redaction table finds a token in every form it takes (any case, encoded, split).
    redacted = redact(value)
    if mark("github-token") in redacted:
        return "its value holds a GitHub token; the child gets only the bot's"
    if redacted != value or any(secret and secret in value for secret in secrets):
        return "its value holds a credential (a token, a key or its file, the SSH agent)"
    return None


def locale_variables(host: Mapping[str, str]) -> dict[str, str]:
    """The host's locale, by name, with values that name a locale and hold no secret."""
    return {
        name: host[name]
        for name in LOCALE
        if name in host and _LOCALE_VALUE.fullmatch(host[name]) and redact(host[name]) == host[name]
    }


def host_secrets(settings: BaseModel, host: Mapping[str, str]) -> list[str]:
    """Values ``--env`` may not pass on under another name: swarm's configured secrets, the
    paths of its secret files, and the values of the host's own credential variables."""
    from agents.redact import is_secret_key
    from agents.settings.secret_values import configured_secret_files, configured_secret_values

    found = configured_secret_values(settings)
    for path in configured_secret_files(settings):
        found += [str(path), str(path.resolve())]
    found += [
        value
        for name, value in host.items()
        if len(value) >= _SECRET_MIN
        and (is_secret_key(name) or name.upper() in _CREDENTIAL_NAMES or name.endswith("_PAT"))
    ]
    return found


def chosen_variables(
    names: Sequence[str], host: Mapping[str, str], secrets: Sequence[str]
) -> dict[str, str]:
    """The host variables the person named with ``--env``, checked; ConfigError otherwise."""
    chosen: dict[str, str] = {}
    for name in names:
        if not _NAME.fullmatch(name):
            raise ConfigError(
                f"--env {name!r}: give a variable name; its value is taken from your environment"
            )
        if name not in host:
            raise ConfigError(f"--env {name} is not set in your environment")
        reason = refused_reason(name, host[name], secrets)
        if reason:
            # Not "NAME: reason": redaction would read the reason as NAME's secret value.
            raise ConfigError(f"--env {name} refused: {reason}")
        chosen[name] = host[name]
    return chosen


def git_origin(api_url: str) -> str:
    """Where git talks to for this API: ``https://github.com`` for api.github.com, else the
    API's own scheme and host (GitHub Enterprise serves git and ``/api/v3`` on one host)."""
    parsed = urlparse(api_url)
    host = "github.com" if parsed.netloc == "api.github.com" else parsed.netloc
    return f"{parsed.scheme}://{host}"


def _gitconfig(origin: str) -> str:
    host = urlparse(origin).netloc
    # The helper reads the token from the child's environment: nothing secret is on disk.
    helper = (
        '!f() { test "$1" = get || exit 0; '
        f'echo username={GIT_USER}; echo "password=$GH_TOKEN"; }}; f'
    )
    return (
        "[credential]\n"
        "\thelper =\n"
        f'[credential "{origin}"]\n'
        f"\thelper = {_quoted(helper)}\n"
        f'[url "{origin}/"]\n'
        f"\tinsteadOf = git@{host}:\n"
        f"\tinsteadOf = ssh://git@{host}/\n"
    )


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def prepare_home(root: Path, api_url: str) -> Path:
    """A fresh HOME under ``root`` with empty XDG directories and git set up for the bot."""
    home = root / "home"
    for sub in (".config/gh", ".cache", ".local/share", ".local/state"):
        (home / sub).mkdir(parents=True, mode=0o700)
    (home / ".gitconfig").write_text(_gitconfig(git_origin(api_url)), encoding="utf-8")
    return home


def build_environment(
    host: Mapping[str, str],
    token: str,
    *,
    home: Path,
    api_url: str,
    chosen: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The child's whole environment (see the module docstring)."""
    env = {key: value for key, value in host.items() if key in PASSED}
    env.update(locale_variables(host))
    env.update(chosen or {})
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_STATE_HOME": str(home / ".local/state"),
            "GH_TOKEN": token,
            "GITHUB_TOKEN": token,
            "GH_CONFIG_DIR": str(home / ".config/gh"),
            "GH_PROMPT_DISABLED": "1",
            "GH_NO_UPDATE_NOTIFIER": "1",
            "GITHUB_API_URL": api_url,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
        }
    )
    gh_host = urlparse(git_origin(api_url)).netloc
    env["GH_HOST"] = gh_host
    if gh_host != "github.com":
        env["GH_ENTERPRISE_TOKEN"] = token
    return env


@contextmanager
def child_environment(
    host: Mapping[str, str], token: str, *, api_url: str, chosen: Mapping[str, str]
) -> Iterator[dict[str, str]]:
    """The child's environment, with its temporary HOME removed when the block ends."""
    with tempfile.TemporaryDirectory(prefix="swarm-exec-") as tmp:
        home = prepare_home(Path(tmp), api_url)
        yield build_environment(host, token, home=home, api_url=api_url, chosen=chosen)
