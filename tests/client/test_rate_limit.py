"""Token bucket (client-go flowcontrol) on a virtual clock."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.client.rate_limit import TokenBucket
from kubesched.clock import VirtualClock


def test_starts_full_then_waits_one_interval_per_token() -> None:
    clock = VirtualClock()
    tb = TokenBucket(qps=10, burst=3, clock=clock)
    assert [tb.reserve() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert tb.reserve() == pytest.approx(0.1)
    assert tb.reserve() == pytest.approx(0.2)
    assert tb.tokens() == pytest.approx(-2.0)


def test_accept_sleeps_on_the_clock() -> None:
    clock = VirtualClock(100.0)
    tb = TokenBucket(qps=2, burst=1, clock=clock)
    assert tb.accept() == 0.0
    assert clock.now() == 100.0
    assert tb.accept() == pytest.approx(0.5)
    assert clock.now() == pytest.approx(100.5)
    assert tb.accept() == pytest.approx(0.5)
    assert clock.now() == pytest.approx(101.0)


def test_refill_is_capped_at_burst() -> None:
    clock = VirtualClock()
    tb = TokenBucket(qps=5, burst=4, clock=clock)
    for _ in range(4):
        tb.reserve()
    clock.advance_to(100.0)
    assert tb.tokens() == 4.0
    assert [tb.try_accept() for _ in range(5)] == [True, True, True, True, False]
    clock.advance_to(100.2)
    assert tb.try_accept() is True
    assert tb.try_accept() is False


def test_negative_qps_is_unlimited_and_zero_rejected() -> None:
    clock = VirtualClock()
    tb = TokenBucket(qps=-1, burst=0, clock=clock)
    assert tb.unlimited and all(tb.reserve() == 0.0 for _ in range(1000))
    with pytest.raises(ValueError, match="qps must be positive"):
        TokenBucket(qps=0, burst=10, clock=clock)
    with pytest.raises(ValueError, match="burst must be at least 1"):
        TokenBucket(qps=5, burst=0, clock=clock)


@settings(max_examples=60, deadline=None)
@given(
    qps=st.sampled_from([1.0, 2.5, 10.0, 50.0]),
    burst=st.integers(1, 20),
    gaps=st.lists(st.floats(0, 2.0), min_size=1, max_size=80),
)
def test_no_window_exceeds_burst_plus_rate(qps: float, burst: int, gaps: list[float]) -> None:
    """Requests arriving at arbitrary times are released so that any window [a, b] holds at
    most burst + qps * (b - a) of them."""
    clock = VirtualClock()
    tb = TokenBucket(qps=qps, burst=burst, clock=clock)
    releases: list[float] = []
    for gap in gaps:
        clock.advance_to(clock.now() + gap)
        tb.accept()
        releases.append(clock.now())
    for i in range(len(releases)):
        for j in range(i, len(releases)):
            assert j - i + 1 <= burst + qps * (releases[j] - releases[i]) + 1e-6
