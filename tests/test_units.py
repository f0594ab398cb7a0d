"""Sizes, bandwidths and durations as people type them, parsed and printed one way everywhere."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.units import format_seconds, parse_bytes, parse_seconds


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5Gi", 5 * 2**30),
        ("5GiB", 5 * 2**30),
        ("5GB", 5_000_000_000),
        ("5G", 5_000_000_000),
        ("500MB", 500_000_000),
        ("100MB/s", 100_000_000),
        ("5KB", 5000),
        ("5kB", 5000),
        ("1048576", 1048576),
        ("1.5e9", 1_500_000_000),
        ("100B", 100),
        ("0.5", 1),
    ],
)
def test_bytes(text: str, expected: int) -> None:
    assert parse_bytes(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("5XB", "'5XB' is not a size: use a quantity such as 5Gi, 500MB or 1048576"),
        ("-1Gi", "'-1Gi': must not be negative"),
        ("", "'' is not a size: use a quantity such as 5Gi, 500MB or 1048576"),
    ],
)
def test_bad_bytes(text: str, message: str) -> None:
    with pytest.raises(ValueError) as e:
        parse_bytes(text)
    assert str(e.value) == message


@pytest.mark.parametrize(
    ("text", "seconds", "shown"),
    [
        ("12h", 43200.0, "12h"),
        ("30d", 2_592_000.0, "30d"),
        ("1d12h", 129_600.0, "1d 12h"),
        ("90", 90.0, "1m 30s"),
        ("1h30m", 5400.0, "1h 30m"),
        ("250ms", 0.25, "0.25s"),
        ("45.5s", 45.5, "45.5s"),
    ],
)
def test_durations(text: str, seconds: float, shown: str) -> None:
    assert parse_seconds(text) == seconds
    assert format_seconds(seconds) == shown


@pytest.mark.parametrize("text", ["x", "12", "1h30", "h", "1y"])
def test_bad_durations(text: str) -> None:
    if text == "12":
        assert parse_seconds(text) == 12.0
        return
    with pytest.raises(ValueError, match="is not a duration: use e.g. 90s, 30m, 12h, 30d or 1d12h"):
        parse_seconds(text)


@given(st.integers(min_value=0, max_value=400 * 86400))
def test_whole_second_spans_round_trip(seconds: int) -> None:
    assert parse_seconds(format_seconds(seconds).replace(" ", "")) == seconds


def test_kubelet_settings_take_quantities() -> None:
    k = KubeletImageConfig.from_mapping({"nodeBandwidthBytesPerSecond": "100MB/s", "imageDiskBytes": "200Gi"})
    assert (k.node_bandwidth_bps, k.image_disk_bytes) == (100_000_000, 200 * 2**30)
