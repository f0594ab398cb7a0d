"""RFC 3339 timestamps (``metav1.Time`` / ``metav1.MicroTime``): one implementation for the API
views, the embedded cluster and the scheduler."""

from __future__ import annotations

import pytest

from kubesched.api.timestamps import parse_rfc3339, parse_time, rfc3339, rfc3339_micro


def test_rfc3339_formatting_and_parsing() -> None:
    assert rfc3339(0) == "1970-01-01T00:00:00Z"
    assert rfc3339(1704067200.9) == "2024-01-01T00:00:00Z"
    assert rfc3339_micro(1704067200.25) == "2024-01-01T00:00:00.250000Z"
    assert parse_rfc3339("2024-01-01T00:00:00Z") == 1704067200.0
    assert parse_rfc3339("2024-01-01T02:00:00.5+02:00") == 1704067200.5
    with pytest.raises(ValueError, match="invalid RFC 3339 timestamp 'yesterday'"):
        parse_rfc3339("yesterday")


def test_parse_time_of_optional_fields() -> None:
    assert parse_time(None) is None
    assert parse_time("") is None
    assert parse_time("2024-01-01T00:00:00Z") == 1704067200.0
    with pytest.raises(ValueError, match="invalid RFC 3339 timestamp 'soon'"):
        parse_time("soon")
    with pytest.raises(ValueError, match="must be an RFC 3339 timestamp string, got int"):
        parse_time(5)
