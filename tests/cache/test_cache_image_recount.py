"""``Cache.refresh_image_counts``: the snapshot a status report of every node (a Node update that
changes only ``lastHeartbeatTime``) would give, re-cloning only the nodes whose image counts
(``ImageStateSummary.NumNodes``) the re-clone changes."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.node import Node
from kubesched.cache import Cache
from kubesched.framework.node_info import ImageStateSummary
from kubesched.framework.snapshot import Snapshot
from kubesched.testing import make_pod, node_manifest

NODES = [f"n{i}" for i in range(5)]
#: image i is listed as its tag and its digest
IMAGES = [([f"img{i}:1", f"img{i}@sha256:{i}"], 100 * (i + 1)) for i in range(4)]


def node(name: str, images: frozenset[int] | set[int], heartbeat: int = 0) -> Node:
    """Node ``name`` holding ``IMAGES[i]`` for each i, its Ready condition posted at ``heartbeat``."""
    m: dict[str, Any] = node_manifest(name, images=[IMAGES[i] for i in sorted(images)])
    m["status"]["conditions"] = [
        {"type": "Ready", "status": "True", "lastHeartbeatTime": f"2025-01-01T00:00:{heartbeat:02d}Z"}
    ]
    return Node.from_manifest(m)


def counts(snap: Snapshot, name: str) -> dict[str, int]:
    ni = snap.get(name)
    assert ni is not None
    return {image: s.num_nodes for image, s in ni.image_states.items()}


def test_only_the_nodes_holding_a_recounted_image_are_recloned() -> None:
    c = Cache()
    for name, images in [("n0", {0}), ("n1", {1}), ("n2", {1, 2}), ("n3", set())]:
        c.add_node(node(name, images))
    snap = Snapshot()
    c.update_snapshot(snap)
    # n3 pulls image 0 (n0 holds it): n3's own update re-clones n3 only
    c.update_node(node("n3", set()), node("n3", {0}))
    assert c.update_snapshot(snap).changed == ["n3"]
    assert counts(snap, "n0") == {"img0:1": 1, "img0@sha256:0": 1}
    assert counts(snap, "n3") == {"img0:1": 2, "img0@sha256:0": 2}
    # the reports: n0 is re-cloned with image 0 on two nodes; n1 and n2 (image 1 and 2 counted as
    # they are) keep their clones
    c.refresh_image_counts()
    result = c.update_snapshot(snap)
    assert result.changed == ["n0"]
    assert snap.get("n0").image_states == {  # type: ignore[union-attr]
        "img0:1": ImageStateSummary(100, 2),
        "img0@sha256:0": ImageStateSummary(100, 2),
    }
    # nothing recounted since: the next reports re-clone nothing
    c.refresh_image_counts()
    assert c.update_snapshot(snap).changed == []
    # a report re-clones at the next snapshot with the counts of that moment: n1 loses image 1
    # after the reports, before the snapshot; n2 is recounted then
    c.refresh_image_counts()
    c.update_node(node("n1", {1}), node("n1", set()))
    assert c.update_snapshot(snap).changed == ["n2", "n1"]
    assert counts(snap, "n2")["img1:1"] == 1
    # a node updated with the same images (a status post of its own) recounts nothing
    c.update_node(node("n2", {1, 2}), node("n2", {1, 2}, heartbeat=1))
    c.update_snapshot(snap)
    c.refresh_image_counts()
    assert c.update_snapshot(snap).changed == []


def test_a_count_changed_and_changed_back_recounts_the_nodes_cloned_in_between() -> None:
    c = Cache()
    for name, images in [("n0", {0}), ("n1", set()), ("n2", set())]:
        c.add_node(node(name, images))
    snap = Snapshot()
    c.update_snapshot(snap)
    c.update_node(node("n1", set()), node("n1", {0}))  # image 0 on 2 nodes
    c.assume_pod(make_pod("p").with_node_name("n0"))  # n0 re-cloned: counts 2
    c.update_snapshot(snap)
    assert counts(snap, "n0")["img0:1"] == 2
    c.update_node(node("n1", {0}), node("n1", set()))  # back to 1 node
    c.update_snapshot(snap)
    assert counts(snap, "n0")["img0:1"] == 2  # n0 unchanged: its clone keeps 2 (upstream)
    c.refresh_image_counts()
    assert c.update_snapshot(snap).changed == ["n0"]
    assert counts(snap, "n0")["img0:1"] == 1


# ---- property: refresh_image_counts gives the snapshots a Node update of every node gives ----

OPS = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(NODES), st.frozensets(st.integers(0, len(IMAGES) - 1))),
    st.tuples(st.just("remove"), st.sampled_from(NODES)),
    st.tuples(st.just("pod"), st.sampled_from(NODES)),
    st.tuples(st.just("report")),
    st.tuples(st.just("snapshot")),
)


def view(snap: Snapshot) -> dict[str, tuple[dict[str, ImageStateSummary], int]]:
    """What the plugins read of each snapshot node: image states and pod count."""
    return {ni.name: (dict(ni.image_states), len(ni.pods)) for ni in snap.list()}


@settings(max_examples=300, deadline=None)
@given(st.lists(OPS, max_size=40))
def test_recount_equals_a_status_post_of_every_node(ops: list[tuple[Any, ...]]) -> None:
    posted, recounted = Cache(), Cache()  # reports as Node updates / as refresh_image_counts
    snap_posted, snap_recounted = Snapshot(), Snapshot()
    nodes: dict[str, frozenset[int]] = {}
    heartbeat = 0
    dirty: set[str] = set()  # nodes changed (by their own update or a pod) since the last snapshot
    reported = False
    for k, op in enumerate(ops):
        if op[0] == "set":
            name, images = op[1], op[2]
            for c in (posted, recounted):
                if name in nodes:
                    c.update_node(node(name, nodes[name], heartbeat), node(name, images, heartbeat))
                else:
                    c.add_node(node(name, images, heartbeat))
            nodes[name] = images
            dirty.add(name)
        elif op[0] == "remove" and op[1] in nodes:
            name = op[1]
            for c in (posted, recounted):
                c.remove_node(node(name, nodes[name], heartbeat))
            del nodes[name]
        elif op[0] == "pod" and op[1] in nodes:
            for c in (posted, recounted):
                c.assume_pod(make_pod(f"p{k}").with_node_name(op[1]))
            dirty.add(op[1])
        elif op[0] == "report":
            heartbeat += 1
            for name, images in nodes.items():
                posted.update_node(node(name, images, heartbeat - 1), node(name, images, heartbeat))
            recounted.refresh_image_counts()
            reported = True
        elif op[0] == "snapshot":
            holders: dict[str, int] = {}
            for i, (names, _) in enumerate(IMAGES):
                for im in names:
                    holders[im] = sum(i in imgs for imgs in nodes.values())
            # the nodes a recount re-clones: those whose clone counts an image otherwise than now
            stale = {
                ni.name
                for ni in snap_recounted.list()
                if ni.name in nodes and any(s.num_nodes != holders[im] for im, s in ni.image_states.items())
            }
            posted.update_snapshot(snap_posted)
            result = recounted.update_snapshot(snap_recounted)
            assert set(result.changed) == (dirty & nodes.keys()) | (stale if reported else set())
            assert view(snap_recounted) == view(snap_posted)
            dirty.clear()
            reported = False
    posted.update_snapshot(snap_posted)
    recounted.update_snapshot(snap_recounted)
    assert view(snap_recounted) == view(snap_posted)
