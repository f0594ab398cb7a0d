"""kubesched.metrics.families: the same exposition as prometheus_client's Counter/Histogram."""

from __future__ import annotations

import prometheus_client
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from kubesched.metrics.families import CounterFamily, HistogramFamily

BUCKETS = (0.001, 0.002, 0.004, 0.008, 0.5, 1.0, 2.5)
LABELS = st.sampled_from([("Filter", "A"), ("Score", "A"), ("Filter", "B")])


@pytest.fixture(autouse=True)
def _no_created() -> None:
    prometheus_client.disable_created_metrics()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(LABELS, st.floats(min_value=0, max_value=5, allow_nan=False)), max_size=30))
def test_histogram_text_equals_prometheus_client(obs: list[tuple[tuple[str, str], float]]) -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    h = HistogramFamily(
        "x_duration_seconds", "help text", ("point", "plugin"), registry=ours, buckets=BUCKETS
    )
    p = Histogram("x_duration_seconds", "help text", ("point", "plugin"), registry=theirs, buckets=BUCKETS)
    for labels, v in obs:
        h.labels(*labels).observe(v)
        p.labels(*labels).observe(v)
    assert generate_latest(ours) == generate_latest(theirs)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(LABELS, st.integers(min_value=0, max_value=10_000)), max_size=30))
def test_counter_text_equals_prometheus_client(incs: list[tuple[tuple[str, str], int]]) -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    c = CounterFamily("x_evaluation_total", "help text", ("point", "plugin"), registry=ours)
    p = Counter("x_evaluation_total", "help text", ("point", "plugin"), registry=theirs)
    for labels, n in incs:
        c.labels(*labels).inc(n)
        p.labels(*labels).inc(n)
    assert generate_latest(ours) == generate_latest(theirs)


def test_unlabelled_families_and_exact_values() -> None:
    reg = CollectorRegistry()
    c = CounterFamily("runs_total", "runs", registry=reg)
    h = HistogramFamily("wait_seconds", "waits", registry=reg, buckets=(1.0, 2.0, float("inf")))
    c.inc()
    c.inc(2.5)
    for v in (0.5, 1.0, 1.5, 9.0):
        h.observe(v)
    assert reg.get_sample_value("runs_total") == 3.5
    assert reg.get_sample_value("wait_seconds_bucket", {"le": "1.0"}) == 2.0
    assert reg.get_sample_value("wait_seconds_bucket", {"le": "2.0"}) == 3.0
    assert reg.get_sample_value("wait_seconds_bucket", {"le": "+Inf"}) == 4.0
    assert reg.get_sample_value("wait_seconds_count") == 4.0
    assert reg.get_sample_value("wait_seconds_sum") == 12.0


def test_errors_name_the_metric() -> None:
    reg = CollectorRegistry()
    c = CounterFamily("a_total", "a", ("x",), registry=reg)
    with pytest.raises(ValueError, match="non-negative"):
        c.labels("1").inc(-1)
    with pytest.raises(ValueError, match="a_total: expected 1 label values, got 2"):
        c.labels("1", "2")
    with pytest.raises(ValueError, match="a_total: counter has labels"):
        c.inc()
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        CounterFamily("a_total", "again", ("x",), registry=reg)
    with pytest.raises(ValueError, match="b_seconds: buckets not in sorted order"):
        HistogramFamily("b_seconds", "b", registry=reg, buckets=(2.0, 1.0))
