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
