"""Field paths for config errors, and conversion of pydantic errors to :class:`ConfigError`.

Paths look like ``profiles[0].pluginConfig[1].args.scoringStrategy.type``: camelCase keys as
written in the file, list indices as ``[i]`` (the form of upstream's ``field.Path``).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from kubesched.errors import ConfigError

_UNKNOWN_FIELD_TYPES = frozenset({"extra_forbidden", "unexpected_keyword_argument"})
_MISSING_TYPES = frozenset({"missing", "missing_argument", "missing_keyword_only_argument"})


def join_path(prefix: str, loc: Sequence[str | int]) -> str:
    """Append pydantic ``loc`` parts to ``prefix``: ``join_path("a", ("b", 0, "c")) == "a.b[0].c"``."""
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif path:
            path += f".{part}"
        else:
            path = str(part)
    return path


def _message(err: ErrorDetails) -> str:
    if err["type"] in _UNKNOWN_FIELD_TYPES:
        last = err["loc"][-1] if err["loc"] else ""
        return f'unknown field "{last}"'
    if err["type"] in _MISSING_TYPES:
        return "Required value"
    msg = err["msg"]
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            return msg[len(prefix) :]
    return msg


def config_error_from_validation(exc: ValidationError, prefix: str = "") -> ConfigError:
    """Convert the first error of a pydantic ``ValidationError`` into a :class:`ConfigError` whose
    path is ``prefix`` + the error location.

    Unknown keys become ``unknown field "<key>"`` (upstream strict decoding), missing required
    keys ``Required value``; other messages are pydantic's (``Input should be a valid integer``,
    ``Input should be 'A' or 'B'``) or the validator's own text.
    """
    errors = exc.errors(include_url=False)
    if not errors:
        return ConfigError(prefix, str(exc))
    first = errors[0]
    return ConfigError(join_path(prefix, first["loc"]), _message(first))
