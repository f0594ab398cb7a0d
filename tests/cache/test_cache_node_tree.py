"""Node tree order (``pkg/scheduler/backend/cache/node_tree.go``): zone round-robin, zones first-seen, nodes
per zone in insertion order."""

from __future__ import annotations

import pytest

from kubesched.api.node import BETA_ZONE_LABEL, REGION_LABEL, ZONE_LABEL, Node
from kubesched.cache import Cache, CacheError, NodeTree
from kubesched.framework.snapshot import Snapshot
from kubesched.testing import make_node


def zn(name: str, zone: str | None, region: str | None = None) -> Node:
    labels = {}
    if zone is not None:
        labels[ZONE_LABEL] = zone
    if region is not None:
        labels[REGION_LABEL] = region
    return make_node(name, labels=labels)


def three_zones() -> list[Node]:
    # zone A: a1 a2 a3, zone B: b1, zone C: c1 c2 (inserted interleaved)
    return [zn("a1", "A"), zn("b1", "B"), zn("a2", "A"), zn("c1", "C"), zn("a3", "A"), zn("c2", "C")]


def test_round_robin_three_uneven_zones() -> None:
    t = NodeTree()
    for n in three_zones():
        t.add_node(n)
    assert t.num_nodes == 6
    assert t.zones() == [":\x00:A", ":\x00:B", ":\x00:C"]
    assert t.list() == ["a1", "b1", "c1", "a2", "c2", "a3"]


def test_removals_drop_empty_zone_and_readd_goes_last() -> None:
    t = NodeTree()
    nodes = {n.name: n for n in three_zones()}
    for n in nodes.values():
        t.add_node(n)
    t.remove_node(nodes["b1"])
    assert t.zones() == [":\x00:A", ":\x00:C"]
    assert t.list() == ["a1", "c1", "a2", "c2", "a3"]
    t.remove_node(nodes["a1"])
    assert t.list() == ["a2", "c1", "a3", "c2"]
    t.add_node(zn("b2", "B"))
    t.add_node(nodes["a1"])  # re-added at the end of zone A
    assert t.list() == ["a2", "c1", "b2", "a3", "c2", "a1"]
    assert t.num_nodes == 6


def test_duplicate_add_ignored_and_missing_remove_errors() -> None:
    t = NodeTree()
    t.add_node(zn("x", "A"))
    t.add_node(zn("x", "A"))
    assert t.num_nodes == 1
    with pytest.raises(CacheError) as e:
        t.remove_node(zn("y", "Z", "R"))
    assert str(e.value) == 'node "y" in group "R:\\x00:Z" was not found'


def test_update_moves_only_on_zone_change() -> None:
    t = NodeTree()
    a1, a2, b1 = zn("a1", "A"), zn("a2", "A"), zn("b1", "B")
    for n in (a1, a2, b1):
        t.add_node(n)
    t.update_node(a1, make_node("a1", labels={ZONE_LABEL: "A", "x": "y"}))
    assert t.list() == ["a1", "b1", "a2"]
    t.update_node(a1, zn("a1", "B"))
    assert t.list() == ["a2", "b1", "a1"]


def test_zone_key_beta_labels_win_and_empty_zone() -> None:
    t = NodeTree()
    t.add_node(make_node("n1"))
    t.add_node(make_node("n2", labels={BETA_ZONE_LABEL: "old", ZONE_LABEL: "new"}))
    t.add_node(make_node("n3", labels={ZONE_LABEL: "old"}))
    assert t.zones() == ["", ":\x00:old"]
    assert t.list() == ["n1", "n2", "n3"]


def test_snapshot_list_follows_tree_order_after_removals() -> None:
    c = Cache()
    nodes = {n.name: n for n in three_zones()}
    for n in nodes.values():
        c.add_node(n)
    snap = Snapshot()
    c.update_snapshot(snap)
    assert [ni.name for ni in snap.list()] == ["a1", "b1", "c1", "a2", "c2", "a3"]
    c.remove_node(nodes["c1"])
    c.remove_node(nodes["a2"])
    upd = c.update_snapshot(snap)
    assert sorted(upd.removed) == ["a2", "c1"]
    assert upd.lists_rebuilt
    assert [ni.name for ni in snap.list()] == ["a1", "b1", "c2", "a3"]
    assert c.node_names() == ["a1", "b1", "c2", "a3"]
    assert sorted(snap.node_info_map) == ["a1", "a3", "b1", "c2"]
