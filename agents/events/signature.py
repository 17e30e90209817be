"""Is this delivery from GitHub? ``X-Hub-Signature-256`` over the raw body, nothing else.

githubkit compares in constant time, but it also accepts a ``sha1=`` signature: only
``sha256=`` is taken here, so a downgrade to the weaker digest is refused before comparing.
"""

from __future__ import annotations

# GitHub caps payloads at 25 MB; the events we act on are a few kilobytes to a few hundred.
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
PREFIX = "sha256="


def signature_ok(secret: str, body: bytes, header: str | None) -> bool:
    """True only for a well-formed ``sha256=<hex>`` HMAC of ``body`` under ``secret``."""
    if not secret or not header or not header.startswith(PREFIX):
        return False
    digest = header[len(PREFIX) :]
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        return False
    from githubkit.webhooks import verify

    return bool(verify(secret, body, header))


def sign(secret: str, body: bytes) -> str:
    """The header value GitHub would send for ``body`` (for the sandbox and tests)."""
    import hashlib
    import hmac

    return PREFIX + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
