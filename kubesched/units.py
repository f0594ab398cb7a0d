"""Units people type and read: byte sizes and bandwidths as Kubernetes quantities (with the ``B``
people add), and time spans as durations with days. One place for both directions, used by the
command line's parameter types (:mod:`kubesched.cli.units`) and by the reports that print spans
(trace windows).

- :func:`parse_bytes`: a Kubernetes quantity (``5Gi``, ``500M``, ``1.5e9``, ``1048576``), or the
  same with a trailing ``B`` (``5GB`` = ``5G`` = 5,000,000,000; ``5GiB`` = ``5Gi``; ``KB`` = ``kB``),
  optionally followed by ``/s`` for bandwidths. Fractions of a byte round up, as
  ``Quantity.Value()`` (``k8s.io/apimachinery/pkg/api/resource``) does.
- :func:`parse_go_duration` / :func:`parse_go_duration_nanos`: a Go ``time.Duration`` string
  exactly as Go's ``time.ParseDuration`` reads it (``1h2m3.5s``, ``300ms``, ``1.5µs`` / ``1.5us``,
  ``7ns``, ``-2m``, ``+5s``, ``0``), and :func:`format_go_duration`, its inverse, as
  ``time.Duration.String`` prints it (Go ``src/time/format.go``: ``ParseDuration``,
  ``Duration.String``). The kubelet's ``Pulled`` Events, ``metav1.Duration`` config fields and
  the command line all read durations through these.
- :func:`parse_seconds`: a Go duration extended with days (``2d``, ``1d12h``), or a bare number
  of seconds.
"""

from __future__ import annotations

import re
from fractions import Fraction

from kubesched.api.quantity import QuantityError, value

__all__ = [
    "format_bytes",
    "format_go_duration",
    "format_seconds",
    "parse_bytes",
    "parse_go_duration",
    "parse_go_duration_nanos",
    "parse_seconds",
]

#: leading days of :func:`parse_seconds` (``2d``, ``1.5d``), before the Go duration that may follow
_DAYS = re.compile(r"(\d+(?:\.\d*)?|\.\d+)d")
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


def _digits(s: str) -> int:
    """Length of the run of ASCII digits that starts ``s``."""
    i = 0
    while i < len(s) and s[i].isascii() and s[i].isdigit():
        i += 1
    return i


def parse_go_duration_nanos(text: str) -> int:
    """Integer nanoseconds of a Go duration string, exactly as Go's ``time.ParseDuration``
    (``src/time/format.go``) reads it: an optional sign, then one or more ``<decimal><unit>``
    groups with units ``ns us µs μs ms s m h`` (``1h30m``, ``1.5s``, ``-2m``, ``.5s``, ``1.s``);
    ``0`` needs no unit. Each group's fraction is truncated to whole nanoseconds, as Go does.

    Raises:
        ValueError: with Go's messages, ``time: invalid duration "x"``,
            ``time: missing unit in duration "15"``, ``time: unknown unit "d" in duration "1d"``
            (also for a value beyond ``int64`` nanoseconds, about 292 years).
    """
    orig = s = text
    neg = False
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise ValueError(f"time: invalid duration {_quote(orig)}")
    total = 0
    while s:
        if not (s[0] == "." or s[0].isascii() and s[0].isdigit()):
            raise ValueError(f"time: invalid duration {_quote(orig)}")
        i = _digits(s)
        int_part, s = s[:i], s[i:]
        frac_part = ""
        if s.startswith("."):
            j = _digits(s[1:])
            frac_part, s = s[1 : 1 + j], s[1 + j :]
        if not int_part and not frac_part:
            raise ValueError(f"time: invalid duration {_quote(orig)}")
        k = 0
        while k < len(s) and s[k] != "." and not (s[k].isascii() and s[k].isdigit()):
            k += 1
        if k == 0:
            raise ValueError(f"time: missing unit in duration {_quote(orig)}")
        unit, s = s[:k], s[k:]
        per = _NANOS_PER_UNIT.get(unit)
        if per is None:
            raise ValueError(f"time: unknown unit {_quote(unit)} in duration {_quote(orig)}")
        total += int(int_part or "0") * per
        if frac_part:
            total += int(Fraction(int(frac_part), 10 ** len(frac_part)) * per)
        if total > _MAX_NANOS + (1 if neg else 0):
            raise ValueError(f"time: invalid duration {_quote(orig)}")
    return -total if neg else total


def parse_go_duration(text: str) -> float:
    """Seconds (float) of a Go duration string: :func:`parse_go_duration_nanos` / 1e9
    (``1m30s`` -> 90.0, ``1.5µs`` -> 1.5e-06). Raises ValueError as that function does."""
    return parse_go_duration_nanos(text) / 1e9


def _fmt_frac(value: int, prec: int) -> str:
    """``value / 10**prec`` with trailing zeros (and a bare point) removed."""
    whole, frac = divmod(value, 10**prec)
    digits = f"{frac:0{prec}d}".rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)


def format_go_duration(seconds: float) -> str:
    """``seconds`` as Go's ``time.Duration.String`` prints it, after rounding to whole
    nanoseconds: ``90.0`` -> ``1m30s``, ``3600.0`` -> ``1h0m0s``, ``0.5`` -> ``500ms``,
    ``1.5e-06`` -> ``1.5µs``, ``0`` -> ``0s``, ``-2`` -> ``-2s``."""
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


def parse_bytes(text: str) -> int:
    """Bytes of ``text`` (see the module docstring). Raises ValueError."""
    t = text.strip()
    if t.endswith("/s"):
        t = t[:-2]
    if t.endswith("iB"):
        t = t[:-1]  # 5GiB -> 5Gi
    elif t.endswith("B"):
        t = t[:-1]  # 5GB -> 5G, 100B -> 100
    if t.endswith("K"):
        t = t[:-1] + "k"  # KB is the common spelling of kB
    try:
        n = value(t)
    except QuantityError:
        raise ValueError(f"{text!r} is not a size: use a quantity such as 5Gi, 500MB or 1048576") from None
    if n < 0:
        raise ValueError(f"{text!r}: must not be negative")
    return n


def parse_seconds(text: str) -> float:
    """Seconds of a duration ``text``: ``12h``, ``30d``, ``1d12h``, ``1h30m``, ``90`` (seconds):
    optional leading days, then a Go duration (:func:`parse_go_duration`, not negative). Raises
    ValueError."""
    t = text.strip()
    try:
        return float(t)
    except ValueError:
        pass
    days = _DAYS.match(t)
    rest = t[days.end() :] if days else t
    try:
        total = (float(days.group(1)) * 86400.0 if days else 0.0) + (parse_go_duration(rest) if rest else 0.0)
    except ValueError:
        total = -1.0
    if not t or total < 0:
        raise ValueError(f"{text!r} is not a duration: use e.g. 90s, 30m, 12h, 30d or 1d12h")
    return total


def format_bytes(n: int) -> str:
    """``n`` bytes with a binary unit for reading (``5.0 GiB``, ``512 B``)."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def format_seconds(seconds: float) -> str:
    """A span for reading: ``12h``, ``30d``, ``1d 6h 30m``, ``45.5s``."""
    if seconds < 60:
        return f"{seconds:g}s"
    parts = []
    rest = int(round(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if rest >= size:
            parts.append(f"{rest // size}{unit}")
            rest %= size
    return " ".join(parts)
