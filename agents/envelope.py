"""The dispatch envelope: what one worker is asked to do, as whom, within which budgets.

Everything in :class:`DispatchEnvelope` is public and travels in clear text (Prefect shows it as a
task parameter). The credential does not: :class:`EnvelopeSealer` encrypts it with AES-GCM and
signs the canonical envelope JSON plus the ciphertext with HMAC-SHA256, both keys derived with
HKDF from the swarm sealing key. A worker opens the envelope with the same key and refuses one
that was altered in any byte, or that has expired.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final, Literal

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)

from agents.config import ConfigError
from agents.identity.claim import IdentityClaim
from agents.identity.tokens import (
    BOT_PAT_KINDS,
    PERSONAL_KINDS,
    fingerprint,
    token_kind,
    token_prefix,
)

ENVELOPE_FORMAT: Final = "swarm-envelope/1"
# How far a worker's clock may lag the dispatcher's before an envelope looks issued in the future.
CLOCK_SKEW = timedelta(minutes=5)
_SALT = b"swarm envelope sealing v1"


class TaskRef(BaseModel):
    """The unit of work, e.g. review ``acme/widgets#12`` at head ``abc123``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    repo: str
    number: int | None = Field(default=None, gt=0)
    head_sha: str | None = None
    base_sha: str | None = None
    # Re-review: only what changed since this previously reviewed head.
    since_sha: str | None = None
    # Sharded review: this worker reviews only ``files``; shard i of n posts nothing itself.
    files: tuple[str, ...] = ()
    shard_index: int | None = Field(default=None, ge=0)
    shard_count: int | None = Field(default=None, ge=1)
    # Trusted dispatcher text for the task, e.g. the shard findings a summarizer merges.
    brief: str = ""

    @field_validator("repo")
    @classmethod
    def _owner_name(cls, value: str) -> str:
        owner, _, name = value.partition("/")
        if not owner or not name or "/" in name:
            raise ValueError(f"{value!r} is not OWNER/NAME")
        return value

    def label(self) -> str:
        target = self.repo if self.number is None else f"{self.repo}#{self.number}"
        return f"{target}@{self.head_sha[:7]}" if self.head_sha else target


class RoleRefs(BaseModel):
    """Role ids resolved call > session > agent at every LLM call."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str
    session: str | None = None
    call: str | None = None


class Budgets(BaseModel):
    """Limits the worker stops at (outcome ``budget_exhausted``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    llm_tokens: int = Field(default=200_000, ge=0)
    turns: int = Field(default=20, ge=0)
    github_calls: int = Field(default=200, ge=0)
    wall_seconds: float = Field(default=600.0, ge=0)
    cost_usd: float = Field(default=2.0, ge=0)


class DispatchEnvelope(BaseModel):
    """The public half of a dispatch: no credential, ever."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    envelope_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    run_id: str
    worker_id: str
    task: TaskRef
    roles: RoleRefs
    identity: IdentityClaim
    budgets: Budgets = Field(default_factory=Budgets)
    issued_at: AwareDatetime
    expires_at: AwareDatetime

    @model_validator(mode="after")
    def _expires_after_issue(self) -> DispatchEnvelope:
        if self.expires_at <= self.issued_at:
            raise ValueError("expires_at must be after issued_at")
        return self

    @classmethod
    def issue(
        cls,
        *,
        run_id: str,
        worker_id: str,
        task: TaskRef,
        roles: RoleRefs,
        identity: IdentityClaim,
        budgets: Budgets | None = None,
        ttl: timedelta = timedelta(minutes=30),
        now: datetime | None = None,
    ) -> DispatchEnvelope:
        """An envelope issued ``now`` that lapses after ``ttl`` or with its token, if sooner."""
        issued = now or datetime.now(UTC)
        expires = issued + ttl
        if identity.mint is not None:
            expires = min(expires, identity.mint.expires_at)
        return cls(
            run_id=run_id,
            worker_id=worker_id,
            task=task,
            roles=roles,
            identity=identity,
            budgets=budgets or Budgets(),
            issued_at=issued,
            expires_at=expires,
        )

    def canonical_json(self) -> bytes:
        """The bytes the signature covers: sorted keys, no spaces, JSON-mode values."""
        return json.dumps(
            self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode("utf-8")


class SealedEnvelope(BaseModel):
    """What crosses the process boundary (Prefect parameter): public fields, ciphertext, MAC."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: Literal["swarm-envelope/1"] = ENVELOPE_FORMAT
    envelope: DispatchEnvelope
    # urlsafe base64 of nonce + AES-GCM ciphertext; None when the dispatcher had no credential.
    ciphertext: str | None
    signature: str


@dataclass(frozen=True)
class OpenedEnvelope:
    """An envelope a worker has opened. Lives only in the worker's memory."""

    envelope: DispatchEnvelope
    credential: SecretStr | None = field(repr=False)

    def __repr__(self) -> str:
        held = "sealed credential" if self.credential is not None else "no credential"
        return f"OpenedEnvelope({self.envelope.envelope_id}, {held})"

    def __reduce__(self) -> str | tuple[object, ...]:
        raise TypeError("an OpenedEnvelope holds a credential and cannot be pickled")


class EnvelopeRejected(Exception):
    """The worker will not act on this envelope; the message is the recorded reason."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class SealRefused(Exception):
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
            "SWARM_SEALING_KEY: must be 32 random bytes, urlsafe base64 encoded "
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


def envelope_hash(sealed: SealedEnvelope) -> str:
    """A stable id for the store: covers the public fields, the ciphertext and the signature."""
    digest = hashlib.sha256()
    digest.update(sealed.envelope.canonical_json())
    digest.update(b"\n" + (sealed.ciphertext or "-").encode("ascii"))
    digest.update(b"\n" + sealed.signature.encode("ascii"))
    return "sha256:" + digest.hexdigest()
