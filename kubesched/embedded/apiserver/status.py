"""``Status`` objects, the API server's error (and some success) bodies.

Shapes and reasons follow ``k8s.io/apimachinery/pkg/api/errors`` (``NewNotFound``,
``NewAlreadyExists``, ``NewConflict``, ``NewInvalid``, ``NewGone``/``NewResourceExpired``,
``NewBadRequest``, ``NewMethodNotSupported``, ``NewTooManyRequests``, ``NewInternalError``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["ApiError", "REASONS", "failure", "invalid", "success"]

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

    ``headers`` are extra response headers (``Retry-After`` for 429). A ``retryAfterSeconds`` in
    ``details`` is also sent as ``Retry-After``, as kube-apiserver's ``ErrorNegotiated``
    (``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/writers.go``) does.
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
        self.headers = dict(headers or {})
        retry = (details or {}).get("retryAfterSeconds")
        if isinstance(retry, int) and retry > 0:
            self.headers.setdefault("Retry-After", str(retry))


#: ``field.ErrorType`` (``k8s.io/apimachinery/pkg/util/validation/field/errors.go``) by the start of
#: the error's body (``ErrorBody``); a body that starts with none of them is ``FieldValueInvalid``.
_CAUSE_TYPES: tuple[tuple[str, str], ...] = (
    ("Required value", "FieldValueRequired"),
    ("Unsupported value", "FieldValueNotSupported"),
    ("Duplicate value", "FieldValueDuplicate"),
    ("Forbidden", "FieldValueForbidden"),
    ("Too long", "FieldValueTooLong"),
    ("Too many", "FieldValueTooMany"),
    ("Not found", "FieldValueNotFound"),
    ("Internal error", "InternalError"),
)


def invalid(kind: str, group: str, name: str, errors: list[tuple[str, str]]) -> ApiError:
    """The 422 Invalid error of object ``name`` of ``kind`` in API ``group`` (``""``: core) with
    field ``errors`` (``(field path, error body)``, e.g. ``("spec.containers[0].ports[0].
    containerPort", "Invalid value: 99999999: must be between 1 and 65535, inclusive")``), as
    ``k8s.io/apimachinery/pkg/api/errors/errors.go: NewInvalid`` builds it: message ``Pod "web" is
    invalid: <field>: <body>`` (several errors as ``[a, b]``, ``field.ErrorList.ToAggregate``;
    the kind qualified as ``Deployment.apps`` outside the core group), and ``details`` with
    ``name``, ``group``, ``kind`` and one ``cause`` (``type``, ``message``, ``field``) per error,
    which kubectl prints as ``The Pod "web" is invalid: ...``."""
    qualified = f"{kind}.{group}" if group else kind
    texts = [f"{path}: {body}" if path else body for path, body in errors]
    message = f'{qualified} "{name}" is invalid'
    if texts:
        message += ": " + (texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]")
    causes = [
        {
            "reason": next((t for prefix, t in _CAUSE_TYPES if body.startswith(prefix)), "FieldValueInvalid"),
            "message": body,
            "field": path,
        }
        for path, body in errors
    ]
    details: Obj = {"name": name, "group": group, "kind": kind, "causes": causes}
    return ApiError(422, message, "Invalid", {k: v for k, v in details.items() if v})
