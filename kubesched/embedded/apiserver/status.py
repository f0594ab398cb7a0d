"""``Status`` objects, the API server's error (and some success) bodies.

Shapes and reasons follow ``k8s.io/apimachinery/pkg/api/errors`` (``NewNotFound``,
``NewAlreadyExists``, ``NewConflict``, ``NewInvalid``, ``NewGone``/``NewResourceExpired``,
``NewBadRequest``, ``NewMethodNotSupported``, ``NewTooManyRequests``, ``NewInternalError``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["ApiError", "REASONS", "failure", "success"]

Obj = dict[str, Any]

#: Default ``reason`` per HTTP code (``metav1.StatusReason``).
REASONS: dict[int, str] = {
    400: "BadRequest",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


def failure(code: int, message: str, reason: str | None = None, details: Obj | None = None) -> Obj:
    """A ``Status`` with ``status: Failure``; ``reason`` defaults from :data:`REASONS`
    (``""`` for unknown codes, as ``StatusReasonUnknown``)."""
    body: Obj = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason if reason is not None else REASONS.get(code, ""),
        "code": code,
    }
    if details:
        body["details"] = details
    return body


def success(code: int = 200, details: Obj | None = None) -> Obj:
    """A ``Status`` with ``status: Success`` (what ``pods/binding`` answers, with code 201)."""
    body: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}
    if details:
        body["details"] = details
    return body


class ApiError(Exception):
    """An error answered as a ``Status`` body with HTTP ``code`` (raised inside request handlers).

    ``headers`` are extra response headers (``Retry-After`` for 429).
    """

    def __init__(
        self,
        code: int,
        message: str,
        reason: str | None = None,
        details: Obj | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.status = failure(code, message, reason, details)
        self.headers = headers or {}
