"""The unschedulable pod pool's cross-topology candidates (kept sorted between changes)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.node_info import PodInfo
from kubesched.framework.queued_pod_info import QueuedPodInfo
from kubesched.queue.unschedulable_pods import UnschedulablePods
from kubesched.testing import make_pod

_PLUGINS = st.sets(st.sampled_from(["PodTopologySpread", "NodeResourcesFit", "TaintToleration"]), max_size=2)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["add", "replan", "delete", "ask"]), st.integers(0, 6), _PLUGINS),
        max_size=60,
    )
)
def test_cross_topology_candidates_follow_every_change(ops: list[tuple[str, int, set[str]]]) -> None:
    """After pods are added, replaced, re-indexed with other rejecting plugins and deleted, in any
    order and with the candidates asked for in between, the candidates are the pool's pods rejected
    by PodTopologySpread, in insertion order, as the entries now stored."""
    pool = UnschedulablePods()
    inserted: list[str] = []  # keys in pool insertion order
    for op, i, plugins in ops:
        key = f"default/p{i}"
        if op == "add":
            p = QueuedPodInfo(PodInfo(make_pod(f"p{i}")), unschedulable_plugins=set(plugins))
            if pool.add_or_update(p):
                inserted.append(key)
        elif op == "replan":
            q = pool.get(key)
            if q is not None:
                q.unschedulable_plugins = set(plugins)
                pool.reindex(q)
        elif op == "delete":
            if pool.delete(key) is not None:
                inserted.remove(key)
        got = pool.cross_topology_candidates()
        want = [
            pool.get(k)
            for k in inserted
            if "PodTopologySpread" in pool.get(k).unschedulable_plugins  # type: ignore[union-attr]
        ]
        assert [id(p) for p in got] == [id(p) for p in want]
        got.clear()  # a caller's list is its own
        assert len(pool.cross_topology_candidates()) == len(want)
