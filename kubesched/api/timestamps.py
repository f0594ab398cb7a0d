"""RFC 3339 timestamps as Kubernetes writes them in object metadata and status
(``metav1.Time``: UTC, second precision; ``metav1.MicroTime``: 6 fraction digits), as epoch seconds
(``k8s.io/apimachinery/pkg/apis/meta/v1/time.go`` ``Time.MarshalJSON``/``UnmarshalJSON``,
``micro_time.go``).
"""

from __future__ import annotations

import calendar
import re
import time

__all__ = ["parse_rfc3339", "parse_time", "rfc3339", "rfc3339_micro"]

_sec_cache: tuple[int, str] = (-(2**62), "")


def rfc3339(t: float) -> str:
    """``metav1.Time`` text for epoch seconds ``t``: UTC, second precision, e.g. ``2024-05-01T12:00:00Z``."""
    global _sec_cache
    sec = int(t // 1)
    cached = _sec_cache
    if cached[0] == sec:
        return cached[1]
    text = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(sec))
    _sec_cache = (sec, text)
    return text


def rfc3339_micro(t: float) -> str:
    """``metav1.MicroTime`` text: UTC with 6 fraction digits, e.g. ``2024-05-01T12:00:00.250000Z``."""
    sec = int(t // 1)
    micros = int(round((t - sec) * 1_000_000))
    if micros >= 1_000_000:
        sec += 1
        micros -= 1_000_000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)) + f".{micros:06d}Z"


_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))$"
)


def parse_rfc3339(text: str) -> float:
    """Epoch seconds for an RFC 3339 timestamp (``Z`` or ``+hh:mm`` offset, optional fraction).

    Raises ValueError on malformed text.
    """
    m = _RFC3339.match(text.strip())
    if m is None:
        raise ValueError(f"invalid RFC 3339 timestamp {text!r}")
    year, mon, day, hh, mm, ss = (int(m.group(i)) for i in range(1, 7))
    seconds = float(calendar.timegm((year, mon, day, hh, mm, ss, 0, 0, 0)))
    if m.group(7):
        seconds += float(m.group(7))
    if m.group(9):
        offset = int(m.group(10)) * 3600 + int(m.group(11)) * 60
        seconds -= offset if m.group(9) == "+" else -offset
    return seconds


def parse_time(text: object) -> float | None:
    """:func:`parse_rfc3339` for an optional field of a manifest: ``None`` or ``""`` -> ``None``.

    Raises ValueError on malformed text and for anything else that is not a string."""
    if not text:
        return None
    if not isinstance(text, str):
        raise ValueError(f"must be an RFC 3339 timestamp string, got {type(text).__name__}")
    return parse_rfc3339(text)
