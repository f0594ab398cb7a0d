"""Units people type and read: byte sizes and bandwidths as Kubernetes quantities (with the ``B``
people add), and time spans as durations with days. One place for both directions, used by the
command line's parameter types (:mod:`kubesched.cli.units`) and by the reports that print spans
(trace windows).

- :func:`parse_bytes`: a Kubernetes quantity (``5Gi``, ``500M``, ``1.5e9``, ``1048576``), or the
  same with a trailing ``B`` (``5GB`` = ``5G`` = 5,000,000,000; ``5GiB`` = ``5Gi``; ``KB`` = ``kB``),
  optionally followed by ``/s`` for bandwidths. Fractions of a byte round up, as
  ``Quantity.Value()`` (``k8s.io/apimachinery/pkg/api/resource``) does.
- :func:`parse_seconds`: a Go duration (``time.ParseDuration``: ``90s``, ``1h30m``, ``250ms``)
  extended with days (``2d``, ``1d12h``), or a bare number of seconds.
"""

from __future__ import annotations

import re

from kubesched.api.quantity import QuantityError, value

__all__ = ["format_bytes", "format_seconds", "parse_bytes", "parse_seconds"]

_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(d|h|ms|m|s|us|µs|ns)")
_SECONDS = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


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
    """Seconds of a duration ``text``: ``12h``, ``30d``, ``1h30m``, ``90`` (seconds). Raises ValueError."""
    t = text.strip()
    try:
        return float(t)
    except ValueError:
        pass
    pos = 0
    total = 0.0
    for m in _DURATION.finditer(t):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _SECONDS[m.group(2)]
        pos = m.end()
    if pos != len(t) or not t:
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
