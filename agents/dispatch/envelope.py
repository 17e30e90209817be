"""The dispatch envelope: what one worker is asked to do, as whom, within which budgets.

Everything in :class:`DispatchEnvelope` is public and travels in clear text (Prefect shows it as a
task parameter). The credential does not: ``agents.dispatch.sealing`` seals it into a
:class:`SealedEnvelope` and opens it again in the worker as an :class:`OpenedEnvelope`.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, SecretStr, model_validator

from agents.identity.claim import IdentityClaim
from agents.roles import RoleRefs
from agents.work import Task

ENVELOPE_FORMAT: Final = "swarm-envelope/1"


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
    task: Task
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
        task: Task,
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


def envelope_hash(sealed: SealedEnvelope) -> str:
    """A stable id for the store: covers the public fields, the ciphertext and the signature."""
    digest = hashlib.sha256()
    digest.update(sealed.envelope.canonical_json())
    digest.update(b"\n" + (sealed.ciphertext or "-").encode("ascii"))
    digest.update(b"\n" + sealed.signature.encode("ascii"))
    return "sha256:" + digest.hexdigest()
