"""Go ``time.Duration`` strings (``"15s"``, ``"1m30s"``, ``"300ms"``) as float seconds.

Upstream config types use ``metav1.Duration``, whose JSON form is the string accepted by Go's
``time.ParseDuration`` and produced by ``time.Duration.String`` (source: Go ``src/time/format.go``).
kubesched stores durations as ``float`` seconds; :data:`GoDuration` is the pydantic field type
(plugin args may use it too, e.g. ``DynamicResourcesArgs.filterTimeout``).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, ValidationInfo

_NANOS_PER_UNIT: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 micro sign
    "μs": 1_000,  # U+03BC Greek mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
_MAX_NANOS = 2**63 - 1


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_go_duration_nanos(text: str) -> int:
    """Parse a Go duration string into integer nanoseconds, exactly like ``time.ParseDuration``.

    Accepts an optional sign, then one or more ``<decimal><unit>`` groups with units
    ``ns us µs μs ms s m h`` (``"1h30m"``, ``"1.5s"``, ``"-2m"``); ``"0"`` needs no unit.

    Raises:
        ValueError: with Go's messages, ``time: invalid duration "x"``,
            ``time: missing unit in duration "15"``, ``time: unknown unit "d" in duration "1d"``.
    """
    orig = text
    s = text
    neg = False
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise ValueError(f"time: invalid duration {_quote(orig)}")
    total = Fraction(0)
    while s:
        if not (s[0] == "." or s[0].isascii() and s[0].isdigit()):
            raise ValueError(f"time: invalid duration {_quote(orig)}")
        i = 0
        while i < len(s) and s[i].isascii() and s[i].isdigit():
            i += 1
        int_part, s = s[:i], s[i:]
        frac_part = ""
        has_frac = False
        if s.startswith("."):
            s = s[1:]
            j = 0
            while j < len(s) and s[j].isascii() and s[j].isdigit():
                j += 1
            frac_part, s = s[:j], s[j:]
            has_frac = bool(frac_part)
        if not int_part and not has_frac:
            raise ValueError(f"time: invalid duration {_quote(orig)}")
        k = 0
        while k < len(s) and s[k] != "." and not (s[k].isascii() and s[k].isdigit()):
            k += 1
        if k == 0:
            raise ValueError(f"time: missing unit in duration {_quote(orig)}")
        unit, s = s[:k], s[k:]
        if unit not in _NANOS_PER_UNIT:
            raise ValueError(f"time: unknown unit {_quote(unit)} in duration {_quote(orig)}")
        per = _NANOS_PER_UNIT[unit]
        value = Fraction(int(int_part or "0")) * per
        if frac_part:
            # Go truncates the fractional contribution of each group to whole nanoseconds.
            value += int(Fraction(int(frac_part), 10 ** len(frac_part)) * per)
        total += value
        if total > _MAX_NANOS + (1 if neg else 0):
            raise ValueError(f"time: invalid duration {_quote(orig)}")
    nanos = int(total)
    return -nanos if neg else nanos


def parse_go_duration(text: str) -> float:
    """Parse a Go duration string into float seconds (``"1m30s"`` -> ``90.0``).

    Raises:
        ValueError: see :func:`parse_go_duration_nanos`.
    """
    return parse_go_duration_nanos(text) / 1e9


def _fmt_frac(value: int, prec: int) -> str:
    """Render ``value / 10**prec`` with trailing zeros (and a bare point) removed."""
    whole, frac = divmod(value, 10**prec)
    digits = f"{frac:0{prec}d}".rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)


def format_go_duration(seconds: float) -> str:
    """Render float seconds like Go's ``time.Duration.String`` (``90.0`` -> ``"1m30s"``,
    ``3600.0`` -> ``"1h0m0s"``, ``0.5`` -> ``"500ms"``, ``0`` -> ``"0s"``).

    The value is first rounded to whole nanoseconds.
    """
    nanos = round(seconds * 1e9)
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    u = abs(nanos)
    if u < 1_000_000_000:
        if u < 1_000:
            return f"{sign}{u}ns"
        if u < 1_000_000:
            return f"{sign}{_fmt_frac(u, 3)}µs"
        return f"{sign}{_fmt_frac(u, 6)}ms"
    out = _fmt_frac(u % 60_000_000_000, 9) + "s"
    minutes = u // 60_000_000_000
    if minutes > 0:
        out = f"{minutes % 60}m{out}"
        hours = minutes // 60
        if hours > 0:
            out = f"{hours}h{out}"
    return sign + out


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
