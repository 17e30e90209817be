"""Sealing: the credential of a dispatch envelope, encrypted and signed under one swarm key.

:class:`EnvelopeSealer` encrypts the credential with AES-GCM and signs the canonical envelope
JSON plus the ciphertext with HMAC-SHA256, both keys derived with HKDF from the swarm sealing
key. A worker opens the envelope with the same key and refuses one that was altered in any byte,
or that has expired. The dispatcher refuses to seal what must never travel (a PAT in an App
envelope, the maintainer's identity).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
from datetime import UTC, datetime, timedelta

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from pydantic import SecretStr

from agents.dispatch.admission import check_seal_fields
from agents.dispatch.envelope import (
    ENVELOPE_FORMAT,
    DispatchEnvelope,
    EnvelopeRejected,
    OpenedEnvelope,
    SealedEnvelope,
)
from agents.errors import SwarmError
from agents.identity.tokens import (
    BOT_PAT_KINDS,
    PERSONAL_KINDS,
    fingerprint,
    token_kind,
    token_prefix,
)
from agents.redact import register_secret
from agents.settings.model import ConfigError

# How far a worker's clock may lag the dispatcher's before an envelope looks issued in the future.
CLOCK_SKEW = timedelta(minutes=5)
_SALT = b"swarm envelope sealing v1"


class SealRefused(SwarmError):
    """The dispatcher will not seal this credential into this envelope."""


def generate_sealing_key() -> SecretStr:
    """A fresh 32-byte key, urlsafe base64, for runs that configure no SWARM_SEALING_KEY."""
    return SecretStr(base64.urlsafe_b64encode(os.urandom(32)).decode("ascii"))


def _decode_key(key: SecretStr | str | bytes) -> bytes:
    if isinstance(key, bytes):
        raw = key
    else:
        text = key.get_secret_value() if isinstance(key, SecretStr) else key
        text = text.strip()
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except (binascii.Error, ValueError):
            raw = b""
    if len(raw) != 32:
        raise ConfigError(
            "SWARM_SEALING_KEY must be 32 random bytes, urlsafe base64 encoded "
            "(leave it unset to generate one per run)"
        )
    return raw


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text.encode("ascii"))


class EnvelopeSealer:
    """Seals (dispatcher) and opens (worker) envelopes under one swarm sealing key."""

    def __init__(self, key: SecretStr | str | bytes) -> None:
        master = _decode_key(key)
        # A generated key is in no setting: its value is redacted from here on, in any form.
        register_secret(_b64(master))
        self._enc = AESGCM(self._derive(master, b"encrypt credential"))
        self._mac_key = self._derive(master, b"sign envelope")

    def __repr__(self) -> str:
        return "EnvelopeSealer(<key hidden>)"

    def __reduce__(self) -> str | tuple[object, ...]:
        raise TypeError("an EnvelopeSealer holds the sealing key and cannot be pickled")

    @staticmethod
    def _derive(master: bytes, info: bytes) -> bytes:
        return HKDF(algorithm=hashes.SHA256(), length=32, salt=_SALT, info=info).derive(master)

    def _sign(self, canonical: bytes, ciphertext: str | None) -> str:
        message = b"\n".join(
            (ENVELOPE_FORMAT.encode(), canonical, (ciphertext or "-").encode("ascii"))
        )
        return _b64(hmac.new(self._mac_key, message, hashlib.sha256).digest())

    def seal(
        self,
        envelope: DispatchEnvelope,
        credential: SecretStr | None,
        maintainer_login: str,
    ) -> SealedEnvelope:
        _refuse_unsealable(envelope, credential, maintainer_login)
        canonical = envelope.canonical_json()
        ciphertext: str | None = None
        if credential is not None:
            nonce = os.urandom(12)
            # The AAD ties the ciphertext to this envelope: it cannot be moved into another.
            aad = hashlib.sha256(canonical).digest()
            sealed = self._enc.encrypt(nonce, credential.get_secret_value().encode("utf-8"), aad)
            ciphertext = _b64(nonce + sealed)
        return SealedEnvelope(
            envelope=envelope, ciphertext=ciphertext, signature=self._sign(canonical, ciphertext)
        )

    def open(self, sealed: SealedEnvelope, now: datetime | None = None) -> OpenedEnvelope:
        moment = now or datetime.now(UTC)
        # Compared or decoded as ASCII, a signature or ciphertext of any other text would raise.
        check_seal_fields(sealed.signature, sealed.ciphertext)
        envelope = sealed.envelope
        canonical = envelope.canonical_json()
        expected = self._sign(canonical, sealed.ciphertext)
        if not hmac.compare_digest(expected.encode("ascii"), sealed.signature.encode("ascii")):
            raise EnvelopeRejected("BLOCKED: envelope signature invalid")
        if moment >= envelope.expires_at:
            raise EnvelopeRejected(
                f"BLOCKED: envelope expired at {envelope.expires_at.isoformat()}"
            )
        if envelope.issued_at > moment + CLOCK_SKEW:
            raise EnvelopeRejected(
                f"BLOCKED: envelope issued in the future ({envelope.issued_at.isoformat()})"
            )
        if sealed.ciphertext is None:
            return OpenedEnvelope(envelope=envelope, credential=None)
        try:
            blob = _unb64(sealed.ciphertext)
            plain = self._enc.decrypt(blob[:12], blob[12:], hashlib.sha256(canonical).digest())
        except (InvalidTag, ValueError, binascii.Error):
            raise EnvelopeRejected("BLOCKED: envelope credential cannot be decrypted") from None
        return OpenedEnvelope(envelope=envelope, credential=SecretStr(plain.decode("utf-8")))


def _refuse_unsealable(
    envelope: DispatchEnvelope, credential: SecretStr | None, maintainer_login: str
) -> None:
    claim = envelope.identity
    where = f"refusing to seal envelope {envelope.envelope_id}: identity {claim.name!r}"
    if not maintainer_login:
        raise SealRefused(
            f"{where}: the maintainer login is unknown (set SWARM_MAINTAINER_LOGIN), so it "
            "cannot be told apart from the maintainer"
        )
    if claim.expected_login.lower() == maintainer_login.lower():
        raise SealRefused(
            f"{where} resolves to the maintainer login {claim.expected_login}; "
            "swarm never acts as the maintainer"
        )
    repos = {repo.lower() for repo in claim.repositories}
    if repos and envelope.task.repo.lower() not in repos:
        raise SealRefused(
            f"{where}: the task's repository {envelope.task.repo} is not among the identity's "
            f"repositories ({', '.join(claim.repositories)})"
        )
    if credential is None:
        return
    kind = token_kind(credential)
    if claim.kind == "app" and kind in PERSONAL_KINDS:
        raise SealRefused(
            f"{where} is an App but the credential is a personal token ({token_prefix(kind)}); "
            "a PAT never travels in an App envelope"
        )
    if claim.kind == "app" and kind != "installation":
        raise SealRefused(f"{where} is an App but the credential is not an installation token")
    if claim.kind == "bot_pat" and kind not in BOT_PAT_KINDS:
        raise SealRefused(
            f"{where} is a bot account but the credential is not a PAT (ghp_ or github_pat_)"
        )
    if claim.mint is not None and claim.mint.token_fingerprint != fingerprint(credential):
        raise SealRefused(f"{where}: the credential is not the token its mint record describes")
