"""The door a sealed envelope passes before a worker does anything with it.

Whoever hands a worker its envelope (a Prefect parameter, a queue, a test) may hand it anything:
a model whose fields were swapped for other types, JSON cut short, text that is not ASCII where
base64 belongs, fields of many megabytes. :func:`admit_envelope` turns each of those into
``EnvelopeRejected`` with a reason a person can read, before the envelope is hashed, recorded,
opened or verified, so a malformed envelope is ``BLOCKED`` instead of a crash. The reason names
the field and the fault, never the value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from agents.dispatch.envelope import EnvelopeRejected, SealedEnvelope

# Far above any real envelope (a task with a summarizer's findings is a few KiB).
MAX_ENVELOPE_BYTES = 256 * 1024
# An AES-GCM sealed token: 12 nonce + token (GitHub's longest are ~520 chars) + 16 tag, base64.
MAX_CIPHERTEXT_CHARS = 4096
SIGNATURE = re.compile(r"[A-Za-z0-9_-]{43}=")
CIPHERTEXT = re.compile(r"[A-Za-z0-9_-]+={0,2}")

Arrival = SealedEnvelope | Mapping[str, Any] | str | bytes


def malformed(reason: str) -> EnvelopeRejected:
    return EnvelopeRejected(f"BLOCKED: envelope malformed: {reason}")


def check_seal_fields(signature: object, ciphertext: object) -> None:
    """The signature and ciphertext are urlsafe base64 of a sane size, or the envelope is
    malformed (compared or decoded as anything else, they raise instead of refusing)."""
    if not isinstance(signature, str) or not SIGNATURE.fullmatch(signature):
        raise malformed("signature is not a urlsafe base64 HMAC-SHA256")
    if ciphertext is None:
        return
    if not isinstance(ciphertext, str):
        raise malformed("ciphertext is not text")
    if len(ciphertext) > MAX_CIPHERTEXT_CHARS:
        raise malformed(f"ciphertext is longer than {MAX_CIPHERTEXT_CHARS} characters")
    if not CIPHERTEXT.fullmatch(ciphertext):
        raise malformed("ciphertext is not urlsafe base64")


def admit_envelope(arrived: object) -> SealedEnvelope:
    """A well-formed :class:`SealedEnvelope` from what arrived, or ``EnvelopeRejected``."""
    try:
        sealed = _parse(arrived)
        check_seal_fields(sealed.signature, sealed.ciphertext)
        size = len(sealed.envelope.canonical_json())
    except EnvelopeRejected:
        raise
    except ValidationError as exc:
        raise malformed(_first_problem(exc)) from None
    except UnicodeError:
        raise malformed("text that is not valid Unicode") from None
    except (TypeError, ValueError, RecursionError) as exc:
        raise malformed(f"unreadable ({type(exc).__name__})") from None
    if size > MAX_ENVELOPE_BYTES:
        raise malformed(f"larger than {MAX_ENVELOPE_BYTES} bytes")
    return sealed


def _parse(arrived: object) -> SealedEnvelope:
    if isinstance(arrived, str | bytes | bytearray):
        if len(arrived) > MAX_ENVELOPE_BYTES + 2 * MAX_CIPHERTEXT_CHARS:
            raise malformed(f"larger than {MAX_ENVELOPE_BYTES} bytes")
        return SealedEnvelope.model_validate_json(arrived)
    if isinstance(arrived, SealedEnvelope):
        # Built or copied without validation (model_copy, model_construct): validate it again.
        arrived = arrived.model_dump(mode="python", warnings=False, round_trip=True)
    if not isinstance(arrived, Mapping):
        raise malformed(f"not an envelope but a {type(arrived).__name__}")
    return SealedEnvelope.model_validate(dict(arrived))


def _first_problem(exc: ValidationError) -> str:
    errors = exc.errors(include_input=False, include_url=False)
    first = errors[0] if errors else {"loc": (), "msg": "invalid"}
    where = ".".join(str(part) for part in first["loc"]) or "envelope"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    # One line, bounded: a validator's message may quote the (public, but hostile) input.
    message = " ".join(str(first["msg"]).split())[:120]
    # "signature: ..." would read as a secret to the redaction table: name the field last.
    return f"{message} (at {where}){more}"
