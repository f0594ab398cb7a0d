"""NodeResourcesFit's and NodeResourcesBalancedAllocation's batch Score forms read per-row score
columns kept by the NodeTable (``NodeTable.row_scores``): after any sequence of node and pod
adds, updates and removals (rows freed and reused, the table grown), the kept columns give every
node exactly the per-node score. NodeResourcesFit's batch Filter verdicts (pods, cpu, memory and
an extended resource) and ImageLocality's batch form (sums over each image's holders, images
coming and going with node updates) are checked beside them under the same churn."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.cache.cache import Cache
from kubesched.framework import node_table as node_table_mod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.snapshot import Snapshot
from kubesched.plugins.imagelocality.image_locality import ImageLocality
from kubesched.plugins.noderesources.balanced_allocation import NodeResourcesBalancedAllocation
from kubesched.plugins.noderesources.fit import NodeResourcesFit, NodeResourcesFitArgs, ScoringStrategy
from kubesched.testing import node_manifest, pod_manifest

_cpu = st.sampled_from(["100m", "250m", "1", "2"])
_mem = st.sampled_from(["128Mi", "1Gi", "3Gi"])
_GPU = "example.com/gpu"
_IMAGES = ["img-a:1", "img-b:2", "img-c:3"]
_node_images = st.lists(
    st.tuples(st.sampled_from(_IMAGES), st.sampled_from([10, 300, 900, 2000])),
    max_size=2,
    unique_by=lambda t: t[0],
)
_step = st.one_of(
    st.tuples(
        st.just("node"),
        st.integers(0, 7),
        st.sampled_from(["2", "4", "8"]),
        _mem,
        st.sampled_from([2, 3, 110]),
        st.sampled_from([0, 1, 2]),
        _node_images,
    ),
    st.tuples(st.just("drop-node"), st.integers(0, 7)),
    st.tuples(st.just("pod"), st.integers(0, 7), _cpu, _mem),
    st.tuples(st.just("drop-pod"), st.integers(0, 40)),
)


def _plugins() -> list[Any]:
    return [
        NodeResourcesFit(),
        NodeResourcesFit(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(type="MostAllocated"))),
        NodeResourcesBalancedAllocation(),
    ]


class _Handle:
    """What ImageLocality reads of a framework handle: the snapshot's node count."""

    def __init__(self, snap: Snapshot) -> None:
        self._snap = snap

    def snapshot(self) -> Snapshot:
        return self._snap


def _check(plugins: list[Any], snap: Snapshot, pods: list[Pod]) -> None:
    table = snap.node_table
    rows = np.array(table.order, dtype=np.int64)
    infos = [table.infos[r] for r in rows.tolist()]
    for pod in pods:
        for pl in plugins:
            state = CycleState()
            assert pl.pre_score(state, pod, infos) is None
            got = pl.score_batch(state, pod, table, rows)
            want = [pl.score(state, pod, ni)[0] for ni in infos]
            assert got is not None and got.tolist() == want, pl.NAME
            if isinstance(pl, NodeResourcesFit):
                state = CycleState()
                pl.pre_filter(state, pod, infos)
                verdicts = pl.filter_batch(state, pod, table, rows)
                assert verdicts is not None
                assert verdicts.tolist() == [pl.filter(state, pod, ni) is None for ni in infos]
        image_locality = ImageLocality(handle=_Handle(snap))  # type: ignore[arg-type]
        got = image_locality.score_batch(CycleState(), pod, table, rows)
        want = [image_locality.score(CycleState(), pod, ni)[0] for ni in infos]
        assert got is not None and got.tolist() == want, "ImageLocality"


@settings(max_examples=120, deadline=None)
@given(
    st.lists(_step, max_size=30),
    st.lists(
        st.tuples(_cpu, _mem, st.sampled_from([0, 1]), st.lists(st.sampled_from(_IMAGES), max_size=2)),
        min_size=1,
        max_size=2,
    ),
)
def test_row_score_columns_equal_per_node_scores(
    steps: list[tuple[Any, ...]], shapes: list[tuple[str, str, int, list[str]]]
) -> None:
    """Three changed rows or fewer are scored again one by one, more rebuild the column."""
    saved = node_table_mod.ROW_SCORES_REBUILD
    node_table_mod.ROW_SCORES_REBUILD = 3
    try:
        _churn(steps, shapes)
    finally:
        node_table_mod.ROW_SCORES_REBUILD = saved


def _churn(steps: list[tuple[Any, ...]], shapes: list[tuple[str, str, int, list[str]]]) -> None:
    cache = Cache()
    snap = Snapshot()
    plugins = _plugins()
    pending = [
        Pod.from_manifest(
            pod_manifest(
                f"q{i}",
                cpu=c,
                memory=m,
                requests={_GPU: str(g)} if g else None,
                images=images or None,
            )
        )
        for i, (c, m, g, images) in enumerate(shapes)
    ]
    bound: list[Pod] = []
    nodes = {f"n{i}": Node.from_manifest(node_manifest(f"n{i}", cpu="4", memory="8Gi")) for i in range(3)}
    for node in nodes.values():
        cache.add_node(node)
    cache.update_snapshot(snap)
    _check(plugins, snap, pending)  # first use of each key: nothing kept
    _check(plugins, snap, pending)  # second: the columns are built
    for k, step in enumerate(steps):
        if step[0] == "node":
            name = f"n{step[1]}"
            node = Node.from_manifest(
                node_manifest(
                    name,
                    cpu=step[2],
                    memory=step[3],
                    pods=step[4],
                    allocatable={_GPU: str(step[5])},
                    images=[([img], mib * 1024 * 1024) for img, mib in step[6]],
                )
            )
            if name in nodes:
                cache.update_node(nodes[name], node)
            else:
                cache.add_node(node)
            nodes[name] = node
        elif step[0] == "drop-node" and f"n{step[1]}" in nodes and len(nodes) > 1:
            name = f"n{step[1]}"
            for p in [p for p in bound if p.node_name == name]:
                cache.remove_pod(p)
                bound.remove(p)
            cache.remove_node(nodes.pop(name))
        elif step[0] == "pod" and f"n{step[1]}" in nodes:
            p = Pod.from_manifest(pod_manifest(f"b{k}", cpu=step[2], memory=step[3], node_name=f"n{step[1]}"))
            cache.add_pod(p)
            bound.append(p)
        elif step[0] == "drop-pod" and bound:
            cache.remove_pod(bound.pop(step[1] % len(bound)))
        cache.update_snapshot(snap)
        _check(plugins, snap, pending)


def test_row_scores_built_on_second_use_and_updated_by_row() -> None:
    cache = Cache()
    snap = Snapshot()
    for i in range(3):
        cache.add_node(Node.from_manifest(node_manifest(f"n{i}", cpu="2", memory="4Gi")))
    cache.update_snapshot(snap)
    table = snap.node_table
    bulk: list[list[int]] = []
    single: list[str] = []

    def score_rows(rows: Any) -> Any:
        bulk.append(rows.tolist())
        return np.array([len(table.infos[r].pods) for r in rows.tolist()], dtype=np.int64)

    def score_node(ni: Any) -> int:
        single.append(ni.name)
        return len(ni.pods)

    assert table.row_scores("k", score_rows, score_node) is None
    assert bulk == []
    col = table.row_scores("k", score_rows, score_node)
    assert col is not None and col[table.order].tolist() == [0, 0, 0]
    assert bulk == [sorted(table.rows.values())]
    cache.add_pod(Pod.from_manifest(pod_manifest("p", node_name="n1")))
    cache.update_snapshot(snap)
    col = table.row_scores("k", score_rows, score_node)
    assert col is not None and int(col[table.rows["n1"]]) == 1
    assert single == ["n1"] and len(bulk) == 1
    # unchanged table: the kept column as it is
    assert table.row_scores("k", score_rows, score_node) is col
    assert single == ["n1"]

    def declines(rows: Any) -> Any:
        return None

    assert table.row_scores("other", declines, score_node) is None
    assert table.row_scores("other", declines, score_node) is None  # declined: asked again later
    assert table.row_scores("other", declines, score_node) is None
