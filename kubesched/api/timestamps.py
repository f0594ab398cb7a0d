"""RFC 3339 timestamps as used in Kubernetes object metadata/status (seconds since the epoch)."""

from __future__ import annotations

from datetime import UTC, datetime


def parse_time(text: str | None) -> float | None:
    """Parse ``2024-01-02T03:04:05Z`` (fractional seconds and offsets accepted) into epoch seconds."""
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def format_time(seconds: float) -> str:
    """Format epoch seconds as ``metav1.Time`` does (``2024-01-02T03:04:05Z``, second precision)."""
    return datetime.fromtimestamp(int(seconds), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
