"""Refusals raised by the identity layer. Every message names what is wrong, never a secret."""

from __future__ import annotations

from typing import Literal

from agents.errors import SwarmError

BlockCode = Literal["no_credential", "identity_mismatch"]


class IdentityError(SwarmError):
    """Base for identity-layer refusals."""


class PermissionRefused(IdentityError):
    """A mint request asks for a permission outside the allow-list or above the worker ceiling."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


class MintRefused(IdentityError):
    """GitHub did not mint, or minted a token broader than asked (that token is revoked)."""


class IdentityBlocked(IdentityError):
    """The worker cannot prove it is the identity its envelope names: it must not act.

    ``str()`` is the line a person sees and the outcome records, e.g.
    ``BLOCKED: identity mismatch: login is octo-maintainer, expected swarm-reviewer[bot]``.
    """

    def __init__(self, code: BlockCode, detail: str | None = None) -> None:
        self.code: BlockCode = code
        self.detail = detail
        if code == "no_credential":
            message = "BLOCKED: no dispatcher credential"
        else:
            message = f"BLOCKED: identity mismatch: {detail}"
        self.message = message
        super().__init__(message)

    @classmethod
    def mismatch(cls, detail: str) -> IdentityBlocked:
        return cls("identity_mismatch", detail)

    @classmethod
    def no_credential(cls) -> IdentityBlocked:
        return cls("no_credential")
