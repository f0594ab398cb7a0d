"""Go ``time.Duration`` strings (``"15s"``, ``"1m30s"``, ``"300ms"``) as float seconds.

Upstream config types use ``metav1.Duration``, whose JSON form is the string accepted by Go's
``time.ParseDuration`` and produced by ``time.Duration.String`` (source: Go ``src/time/format.go``).
kubesched stores durations as ``float`` seconds; :data:`GoDuration` is the pydantic field type
(plugin args may use it too, e.g. ``DynamicResourcesArgs.filterTimeout``). The parser and the
formatter are :mod:`kubesched.units`'s.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, ValidationInfo

from kubesched.units import format_go_duration, parse_go_duration, parse_go_duration_nanos

__all__ = ["GoDuration", "format_go_duration", "parse_go_duration", "parse_go_duration_nanos"]


def _duration_input(value: Any, info: ValidationInfo) -> Any:
    """Before-validator: strings are parsed as Go durations; from Python code, int/float seconds
    are also accepted (a JSON/YAML number is rejected, as Go's decoder does)."""
    if isinstance(value, str):
        return parse_go_duration(value)
    if isinstance(value, bool):
        raise ValueError(f'invalid duration {value!r}: must be a string such as "15s"')
    if isinstance(value, int | float):
        if info.mode == "json":
            raise ValueError(f'invalid duration {value}: must be a string such as "15s"')
        return float(value)
    raise ValueError(f'invalid duration {value!r}: must be a string such as "15s"')


GoDuration = Annotated[
    float,
    BeforeValidator(_duration_input),
    PlainSerializer(format_go_duration, return_type=str, when_used="json"),
]
"""Pydantic field type: a ``metav1.Duration`` held as float seconds (serialised to JSON as a Go
duration string)."""
