"""Pod.with_node_name: a shallow copy of every slot, bound to another node."""

from __future__ import annotations

from kubesched.api.pod import Pod


def test_with_node_name_copies_every_slot_and_leaves_the_original() -> None:
    p = Pod.from_manifest(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "web", "namespace": "prod", "uid": "u1", "labels": {"app": "web"}},
            "spec": {
                "priority": 7,
                "tolerations": [{"key": "k", "operator": "Exists"}],
                "containers": [
                    {"name": "c", "image": "nginx:1.27", "resources": {"requests": {"cpu": "250m"}}}
                ],
            },
        }
    )
    q = p.with_node_name("node-3")
    assert type(q) is Pod and q is not p
    assert (q.node_name, p.node_name) == ("node-3", "")
    for slot in Pod.__slots__:
        if slot != "node_name":
            assert getattr(q, slot) is getattr(p, slot), slot
    assert (q.key, q.priority, q.requests["cpu"], q.images) == ("prod/web", 7, 250, p.images)


def _stored() -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web",
            "namespace": "prod",
            "uid": "u1",
            "resourceVersion": "5",
            "labels": {"app": "web"},
        },
        "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}], "schedulerName": "default-scheduler"},
        "status": {"phase": "Pending", "nominatedNodeName": "node-1"},
    }


def _bound(obj: dict, **meta: object) -> dict:
    """What pods/binding stores: spec shared but for nodeName, metadata copied, status rebuilt."""
    return {
        **obj,
        "metadata": {**obj["metadata"], "resourceVersion": "9", **meta},
        "spec": {**obj["spec"], "nodeName": "node-3"},
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "True"}, "not a condition"],
        },
    }


def test_rebound_reads_only_what_a_binding_changes() -> None:
    obj = _stored()
    p = Pod.from_manifest(obj)
    new = _bound(obj)
    q = p.rebound(new)
    assert q is not None and q.raw is new
    assert (q.node_name, q.resource_version, q.nominated_node_name, q.phase) == ("node-3", "9", "", "Pending")
    assert q.conditions == ({"type": "PodScheduled", "status": "True"},)
    assert q.containers is p.containers and q.labels is p.labels


def test_rebound_declines_a_changed_pod() -> None:
    obj = _stored()
    p = Pod.from_manifest(obj)
    assert p.rebound(_bound(obj, labels={"app": "db"})) is None  # an equal-looking copy would pass
    assert p.rebound(_bound(obj, labels={"app": "web"})) is not None
    changed_spec = _bound(obj)
    changed_spec["spec"] = {**changed_spec["spec"], "priority": 3}
    assert p.rebound(changed_spec) is None
    unbound = _bound(obj)
    unbound["spec"] = {**obj["spec"]}
    assert p.rebound(unbound) is None
    assert p.rebound({**_bound(obj), "spec": ["not", "a", "mapping"]}) is None
