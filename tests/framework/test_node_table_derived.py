"""NodeTable's derived per-row data: change log, cached count columns and aggregates (exact values,
including after the change log was trimmed) and NodeInfo snapshots with a lazily built UID index."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.cache.cache import Cache
from kubesched.framework import node_table as node_table_mod
from kubesched.framework.node_info import ImageStateSummary, NodeInfo
from kubesched.framework.snapshot import Snapshot
from kubesched.testing import node_manifest, pod_manifest


def _cluster(n: int) -> tuple[Cache, Snapshot]:
    cache = Cache()
    for i in range(n):
        cache.add_node(Node.from_manifest(node_manifest(f"n{i}", labels={"zone": "abc"[i % 3]})))
    snap = Snapshot()
    cache.update_snapshot(snap)
    return cache, snap


def _pod(i: int, node: str, app: str = "web") -> Pod:
    return Pod.from_manifest(pod_manifest(f"p{i}", labels={"app": app}, node_name=node, cpu="100m"))


def _web(ni: NodeInfo) -> int:
    return sum(1 for pi in ni.pods if pi.pod.labels.get("app") == "web")


def _per_zone(ni: NodeInfo) -> dict[Any, int]:
    assert ni.node is not None
    return {ni.node.labels["zone"]: len(ni.pods)} if ni.pods else {}


def test_changed_rows_lists_each_changed_row_once() -> None:
    cache, snap = _cluster(4)
    table = snap.node_table
    v = table.version
    assert list(table.changed_rows(v)) == []
    cache.add_pod(_pod(1, "n2"))
    cache.add_pod(_pod(2, "n2"))
    cache.update_snapshot(snap)
    assert list(table.changed_rows(v)) == [table.rows["n2"]]


def test_count_column_and_aggregate_follow_pod_and_node_changes() -> None:
    cache, snap = _cluster(6)
    table = snap.node_table
    col = table.pod_count_column("web", _web)
    assert col[table.order].tolist() == [0] * 6
    assert table.aggregate("zones", _per_zone) == {}
    p1, p2, p3 = _pod(1, "n0"), _pod(2, "n3", "db"), _pod(3, "n4")
    for p in (p1, p2, p3):
        cache.add_pod(p)
    cache.update_snapshot(snap)
    col = table.pod_count_column("web", _web)
    assert dict(zip([ni.name for ni in snap.list()], col[table.order].tolist(), strict=True)) == {
        "n0": 1,
        "n1": 0,
        "n2": 0,
        "n3": 0,
        "n4": 1,
        "n5": 0,
    }
    assert table.aggregate("zones", _per_zone) == {"a": 2, "b": 1}
    cache.remove_pod(p1)
    cache.remove_node(Node.from_manifest(node_manifest("n4")))
    cache.update_snapshot(snap)
    assert table.aggregate("zones", _per_zone) == {"a": 1}
    assert int(table.pod_count_column("web", _web)[table.order].sum()) == 0


def test_aggregate_keeps_keys_whose_contributions_sum_to_zero() -> None:
    cache, snap = _cluster(3)
    table = snap.node_table
    cache.add_pod(_pod(1, "n0"))
    cache.add_pod(_pod(2, "n1"))
    cache.update_snapshot(snap)

    def signed(ni: NodeInfo) -> dict[Any, int]:
        return {"k": 1 if ni.name == "n0" else -1} if ni.pods else {}

    assert table.aggregate("signed", signed) == {"k": 0}


def test_trimmed_change_log_falls_back_to_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(node_table_mod, "CHANGE_LOG_MIN", 8)
    cache, snap = _cluster(3)
    table = snap.node_table
    assert table.pod_count_column("web", _web)[table.order].tolist() == [0, 0, 0]
    pods = [_pod(i, f"n{i % 3}") for i in range(1000)]
    for p in pods:
        cache.add_pod(p)
        cache.update_snapshot(snap)
    assert table._log_floor > 0
    assert list(table.changed_rows(0)) == list(range(3))
    assert table.pod_count_column("web", _web)[table.order].tolist() == [334, 333, 333]


def test_derived_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(node_table_mod, "DERIVED_CACHE_SIZE", 2)
    _, snap = _cluster(2)
    table = snap.node_table
    for k in range(5):
        table.pod_count_column(("k", k), _web)
    assert list(table._derived) == [("k", 3), ("k", 4)]


def test_snapshot_copy_builds_its_uid_index_only_when_needed() -> None:
    ni = NodeInfo(Node.from_manifest(node_manifest("n0")))
    pods = [_pod(i, "n0") for i in range(4)]
    for p in pods:
        ni.add_pod(p)
    c = ni.snapshot()
    assert c._pod_index is None
    assert c.has_pod(pods[2].uid) and not c.has_pod("nope")
    c.remove_pod(pods[0])
    assert [pi.pod.name for pi in c.pods] == ["p3", "p1", "p2"]
    assert [pi.pod.name for pi in ni.pods] == ["p0", "p1", "p2", "p3"]
    assert ni.has_pod(pods[0].uid)
    with pytest.raises(KeyError):
        c.remove_pod(pods[0])
    assert np.array_equal(np.array([c.requested.milli_cpu]), np.array([300]))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=5),  # node
            st.one_of(st.none(), st.dictionaries(st.sampled_from("abcd"), st.integers(1, 10**9), max_size=3)),
        ),
        max_size=25,
    ),
    st.sets(st.sampled_from("abcd")),
)
def test_image_columns_follow_refreshes_and_reused_rows(
    steps: list[tuple[int, dict[str, int] | None]], early: set[str]
) -> None:
    """Image columns (some built before the changes, some after) hold exactly each live row's
    node images after nodes are refreshed with other images, removed and their rows reused; the
    NodeInfo object array holds each row's NodeInfo."""
    table = node_table_mod.NodeTable(4)
    infos: dict[str, NodeInfo] = {}

    def info(name: str, images: dict[str, int]) -> NodeInfo:
        ni = NodeInfo()
        ni.node = Node.from_manifest(node_manifest(name))
        ni.image_states = {k: ImageStateSummary(v, len(k)) for k, v in images.items()}
        return ni

    for i in range(3):
        infos[f"n{i}"] = info(f"n{i}", {})
        table.refresh(infos[f"n{i}"])
    for name in sorted(early):
        table.image(name)
    for node, images in steps:
        name = f"n{node}"
        if images is None:
            table.remove(name)
            infos.pop(name, None)
        else:
            infos[name] = info(name, images)
            table.refresh(infos[name])
    for name in "abcd":
        ic = table.image(name)
        for node_name, ni in infos.items():
            row = table.rows[node_name]
            st_ = ni.image_states.get(name)
            assert (bool(ic.present[row]), int(ic.size[row]), int(ic.num_nodes[row])) == (
                (True, st_.size, st_.num_nodes) if st_ is not None else (False, 0, 0)
            )
    # the object array mirrors the list of NodeInfos through growth, removals and reused rows
    assert len(table.info_array) == len(table.infos) == table.capacity
    assert all(a is b for a, b in zip(table.info_array.tolist(), table.infos, strict=True))
    assert all(table.info_array[table.rows[name]] is ni for name, ni in infos.items())
