"""The error a handler raises to answer like GitHub does."""

from __future__ import annotations

from typing import Any

DOCS = "https://docs.github.com/rest"


class ApiError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        *,
        errors: list[Any] | None = None,
        documentation_url: str = DOCS,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(f"{status} {message}")
        self.status = status
        self.message = message
        self.errors = errors
        self.documentation_url = documentation_url
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"message": self.message}
        if self.errors is not None:
            body["errors"] = self.errors
        body["documentation_url"] = self.documentation_url
        body["status"] = str(self.status)
        return body


def not_found() -> ApiError:
    return ApiError(404, "Not Found")


def bad_credentials() -> ApiError:
    return ApiError(401, "Bad credentials")


def unprocessable(message: str, errors: list[Any] | None = None) -> ApiError:
    return ApiError(422, message, errors=errors)
