"""The GitHub App JWT: RS256, issued 60 s in the past (clock drift), valid for 9 minutes.

GitHub rejects App JWTs that live longer than 10 minutes; 9 leaves room for drift. Key problems
are reported as ConfigError naming the setting that points at the key, never the key itself.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from pydantic import SecretStr

from agents.private_files import read_private_text
from agents.settings.model import DEFAULT_IDENTITY, ConfigError, IdentitySettings
from agents.settings.names import identity_setting

JWT_BACKDATE = timedelta(seconds=60)
JWT_LIFETIME = timedelta(minutes=9)
# Re-sign when less than this is left, so a request never carries a JWT about to lapse.
JWT_REFRESH_MARGIN = timedelta(minutes=1)

Clock = Callable[[], datetime]

# Loading an RSA key checks it (cryptography proves p and q prime and the CRT values consistent):
# about 12% of the CPU of a test process running review flows, since every run builds its
# minters anew, as ``swarm serve`` and the webhook receiver do run after run. A key that passed
# is kept for the process, found by the SHA-256 of its PEM (never by the text itself): a
# rotated key is another digest and is checked; a key that failed is never kept.
_CHECKED: dict[bytes, RSAPrivateKey] = {}
_CHECKED_LOCK = threading.Lock()
_CHECKED_MAX = 32


def utc_now() -> datetime:
    return datetime.now(UTC)


def key_setting_name(identity_name: str, *, inline: bool = False) -> str:
    """The environment variable a person sets for this identity's key: the file's, or with
    ``inline`` the one that holds the key itself."""
    field = "PRIVATE_KEY" if inline else "PRIVATE_KEY_FILE"
    if identity_name.lower() == DEFAULT_IDENTITY:
        return f"SWARM_APP_{field}"
    return identity_setting(identity_name, field)


def read_private_key(identity: IdentitySettings, identity_name: str) -> SecretStr:
    """The PEM text from the inline setting or the key file, with errors naming the setting."""
    setting = key_setting_name(identity_name)
    if identity.private_key is not None:
        # Checked here, where it is known which variable the person set.
        inline = key_setting_name(identity_name, inline=True)
        load_rsa_key(identity.private_key, setting=inline, identity_name=identity_name)
        return identity.private_key
    if identity.private_key_file is None:
        raise ConfigError(f"{setting}: not set for identity {identity_name!r}")
    path = identity.private_key_file
    try:
        return SecretStr(read_private_text(path, f"{setting}: the private key"))
    except FileNotFoundError:
        raise ConfigError(f"{setting}: file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise ConfigError(f"{setting}: cannot read {path} ({reason})") from None


def load_rsa_key(pem: SecretStr, *, setting: str, identity_name: str) -> RSAPrivateKey:
    """Parse and check the App key. Messages say what is wrong, never what the key contains."""
    # "NAME (what)" rather than "NAME: what": redaction reads "PRIVATE_KEY: x" as a secret.
    where = f"{setting} (the App private key of identity {identity_name!r})"
    text = pem.get_secret_value().strip()
    if not text:
        raise ConfigError(f"{where} is empty")
    if "-----BEGIN" not in text:
        raise ConfigError(f"{where} is not a PEM private key (expected '-----BEGIN ... KEY-----')")
    data = text.encode("utf-8")
    digest = hashlib.sha256(data).digest()
    with _CHECKED_LOCK:
        checked = _CHECKED.get(digest)
    if checked is not None:
        return checked
    key: object
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError:
        raise ConfigError(
            f"{where} is password-protected; GitHub App keys are unencrypted PEM"
        ) from None
    except ValueError:
        raise ConfigError(f"{where} is not a valid PEM private key") from None
    except Exception:
        # cryptography raises UnsupportedAlgorithm and friends; none may carry key bytes out.
        raise ConfigError(f"{where} could not be loaded") from None
    if not isinstance(key, RSAPrivateKey):
        raise ConfigError(f"{where} is not an RSA key (GitHub Apps sign with RS256)")
    with _CHECKED_LOCK:
        if len(_CHECKED) >= _CHECKED_MAX:
            _CHECKED.pop(next(iter(_CHECKED)))  # the oldest: a process holds a few Apps' keys
        _CHECKED[digest] = key
    return key


def make_app_jwt(app_id: int, key: RSAPrivateKey, *, now: datetime | None = None) -> SecretStr:
    """One App JWT: iat = now - 60 s, exp = now + 9 min, iss = the App id."""
    moment = now or utc_now()
    payload = {
        "iat": int((moment - JWT_BACKDATE).timestamp()),
        "exp": int((moment + JWT_LIFETIME).timestamp()),
        "iss": str(app_id),
    }
    return SecretStr(jwt.encode(payload, key, algorithm="RS256"))


class AppJwtSigner:
    """Signs App JWTs for one identity and reuses each until shortly before it lapses."""

    def __init__(
        self,
        app_id: int,
        private_key: SecretStr,
        *,
        identity_name: str = DEFAULT_IDENTITY,
        clock: Clock = utc_now,
    ) -> None:
        self.app_id = app_id
        self._key = load_rsa_key(
            private_key, setting=key_setting_name(identity_name), identity_name=identity_name
        )
        self._clock = clock
        self._lock = threading.Lock()
        self._current: tuple[SecretStr, datetime] | None = None

    def __repr__(self) -> str:
        return f"AppJwtSigner(app_id={self.app_id})"

    def jwt(self) -> SecretStr:
        now = self._clock()
        with self._lock:
            if self._current is not None and now < self._current[1] - JWT_REFRESH_MARGIN:
                return self._current[0]
            token = make_app_jwt(self.app_id, self._key, now=now)
            self._current = (token, now + JWT_LIFETIME)
            return token
