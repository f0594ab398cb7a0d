"""Sizes, bandwidths and durations as people type them, parsed and printed one way everywhere."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.units import (
    format_go_duration,
    format_seconds,
    parse_bytes,
    parse_go_duration,
    parse_go_duration_nanos,
    parse_seconds,
)


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


@pytest.mark.parametrize(
    ("text", "nanos"),
    [
        ("1h2m3.5s", 3_723_500_000_000),
        ("300ms", 300_000_000),
        ("1.5µs", 1_500),  # U+00B5 micro sign, as Go prints it
        ("1.5μs", 1_500),  # U+03BC Greek mu
        ("1.5us", 1_500),
        ("7ns", 7),
        ("1m53.8s", 113_800_000_000),
        ("2h0m5s", 7_205_000_000_000),
        ("-2m", -120_000_000_000),
        ("+5s", 5_000_000_000),
        ("-1.5h", -5_400_000_000_000),
        ("0", 0),
        ("-0", 0),
        ("0s", 0),
        (".5s", 500_000_000),
        ("1.s", 1_000_000_000),
        ("1h2m3s4ms5us6ns", 3_723_004_005_006),
        ("0.0000000019s", 1),  # each group's fraction truncated to whole nanoseconds
        ("2562047h47m16.854775807s", 2**63 - 1),
        ("-2562047h47m16.854775808s", -(2**63)),
    ],
)
def test_go_duration_exact(text: str, nanos: int) -> None:
    assert parse_go_duration_nanos(text) == nanos
    assert parse_go_duration(text) == nanos / 1e9


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("15", 'time: missing unit in duration "15"'),
        ("1h30", 'time: missing unit in duration "1h30"'),
        ("1d", 'time: unknown unit "d" in duration "1d"'),
        ("1.2 s", 'time: unknown unit " s" in duration "1.2 s"'),
        ("s", 'time: invalid duration "s"'),
        (".s", 'time: invalid duration ".s"'),
        ("-", 'time: invalid duration "-"'),
        ("2562047h47m16.854775808s", 'time: invalid duration "2562047h47m16.854775808s"'),
    ],
)
def test_go_duration_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError) as e:
        parse_go_duration_nanos(text)
    assert str(e.value) == message


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (1e-9, "1ns"),
        (1.5e-6, "1.5µs"),
        (0.3, "300ms"),
        (1.594, "1.594s"),
        (90, "1m30s"),
        (113.8, "1m53.8s"),
        (3600, "1h0m0s"),
        (3723.5, "1h2m3.5s"),
        (-2, "-2s"),
    ],
)
def test_format_go_duration(seconds: float, text: str) -> None:
    assert format_go_duration(seconds) == text


@given(
    st.integers(0, 2_000_000),
    st.integers(0, 59),
    st.integers(0, 59),
    st.integers(0, 999),
    st.integers(0, 999),
    st.integers(0, 999),
    st.booleans(),
)
def test_go_duration_groups(h: int, m: int, s: int, ms: int, us: int, ns: int, neg: bool) -> None:
    """Any sum of groups in Go's units parses to its exact nanoseconds."""
    text = ("-" if neg else "") + f"{h}h{m}m{s}s{ms}ms{us}us{ns}ns"
    nanos = ((h * 60 + m) * 60 + s) * 10**9 + ms * 10**6 + us * 10**3 + ns
    assert parse_go_duration_nanos(text) == (-nanos if neg else nanos)


@given(st.integers(-(2**50), 2**50))
def test_go_duration_round_trip(nanos: int) -> None:
    """What ``format_go_duration`` prints (as Go's ``Duration.String``) parses back to the same
    nanoseconds, and printing that again gives the same text."""
    text = format_go_duration(nanos / 1e9)
    assert parse_go_duration_nanos(text) == nanos
    assert format_go_duration(parse_go_duration(text)) == text


def test_days_then_go_duration() -> None:
    assert [parse_seconds(t) for t in ("2d", "1.5d", "1d12h30m", "1d0.5s")] == [
        172800.0,
        129600.0,
        131400.0,
        86400.5,
    ]
    with pytest.raises(ValueError, match="is not a duration"):
        parse_seconds("-1s")
