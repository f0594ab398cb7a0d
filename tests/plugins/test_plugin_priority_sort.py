"""PrioritySort (``pkg/scheduler/framework/plugins/queuesort/priority_sort.go``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kubesched.framework.interfaces import QueueSortPlugin
from kubesched.framework.node_info import PodInfo
from kubesched.framework.queued_pod_info import QueuedPodInfo
from kubesched.framework.sort_key import QueueSortKey
from kubesched.plugins.queuesort.priority_sort import PrioritySort
from kubesched.testing import make_pod


def qpi(name: str, priority: int | None, ts: float) -> QueuedPodInfo:
    return QueuedPodInfo(PodInfo(make_pod(name, priority=priority)), timestamp=ts)


def test_identity() -> None:
    pl = PrioritySort()
    assert pl.name() == "PrioritySort"
    assert PrioritySort.Args is None
    assert isinstance(pl, QueueSortPlugin)


def test_higher_priority_first() -> None:
    pl = PrioritySort()
    hi, lo = qpi("hi", 100, 5.0), qpi("lo", 10, 1.0)
    assert pl.less(hi, lo) is True
    assert pl.less(lo, hi) is False


def test_equal_priority_earlier_timestamp_first() -> None:
    pl = PrioritySort()
    a, b = qpi("a", 7, 1.0), qpi("b", 7, 2.0)
    assert pl.less(a, b) is True
    assert pl.less(b, a) is False


def test_equal_priority_equal_timestamp_is_not_less() -> None:
    pl = PrioritySort()
    a, b = qpi("a", 7, 1.0), qpi("b", 7, 1.0)
    assert pl.less(a, b) is False
    assert pl.less(b, a) is False


def test_unset_priority_is_zero() -> None:
    pl = PrioritySort()
    unset, neg, pos = qpi("u", None, 3.0), qpi("n", -1, 1.0), qpi("p", 1, 9.0)
    assert pl.less(unset, neg) is True
    assert pl.less(pos, unset) is True
    assert pl.less(unset, qpi("z", 0, 4.0)) is True


@given(
    st.lists(st.tuples(st.integers(-1000, 1000), st.floats(0, 1e6, allow_nan=False)), min_size=2, max_size=30)
)
def test_order_is_priority_desc_then_timestamp_asc(items: list[tuple[int, float]]) -> None:
    pl = PrioritySort()
    pods = [qpi(f"p{i}", pr, ts) for i, (pr, ts) in enumerate(items)]
    for a in pods:
        assert not pl.less(a, a)
        for b in pods:
            assert not (pl.less(a, b) and pl.less(b, a))
            assert pl.less(a, b) == ((a.pod.priority, -a.timestamp) > (b.pod.priority, -b.timestamp))


@given(
    st.lists(
        st.tuples(st.one_of(st.none(), st.integers(-10, 10)), st.floats(0, 100, allow_nan=False)),
        min_size=2,
        max_size=8,
    )
)
def test_sort_key_orders_exactly_like_less(entries: list[tuple[int | None, float]]) -> None:
    """``QueueSortKey``: ``sort_key(a) < sort_key(b)`` exactly when ``less(a, b)``."""
    pl = PrioritySort()
    assert isinstance(pl, QueueSortKey)
    items = [qpi(f"p{i}", prio, ts) for i, (prio, ts) in enumerate(entries)]
    for a in items:
        for b in items:
            assert (pl.sort_key(a) < pl.sort_key(b)) is pl.less(a, b)
    assert pl.sort_key(qpi("x", 5, 2.5)) == (-5, 2.5)
