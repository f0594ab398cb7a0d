"""Tests for kubesched.embedded.store: CRUD, resourceVersions, binding, status patches, events."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.clock import VirtualClock
from kubesched.embedded.store import MemoryCluster, uuid4_string
from kubesched.errors import AlreadyExistsError, ConflictError, NotFoundError

T0 = 1704067200.0  # 2024-01-01T00:00:00Z
UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def pod(name: str, namespace: str | None = "default", **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": [], **spec}}


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(start=T0)


@pytest.fixture
def store(clock: VirtualClock) -> MemoryCluster:
    return MemoryCluster(clock)


def test_create_fills_metadata_and_increments_resource_version(store: MemoryCluster) -> None:
    assert store.resource_version == "0"
    p = store.create(pod("web-1", namespace=None))
    n = store.create({"kind": "Node", "metadata": {"name": "n1", "namespace": "ignored"}})
    pod_uid, node_uid = p["metadata"]["uid"], n["metadata"]["uid"]
    assert UUID4.match(pod_uid) and UUID4.match(node_uid) and pod_uid != node_uid
    assert p == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-1",
            "namespace": "default",
            "uid": pod_uid,
            "creationTimestamp": "2024-01-01T00:00:00Z",
            "resourceVersion": "1",
        },
        "spec": {"containers": []},
        "status": {"phase": "Pending"},
    }
    assert n == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "n1",
            "uid": node_uid,
            "creationTimestamp": "2024-01-01T00:00:00Z",
            "resourceVersion": "2",
        },
    }
    assert store.resource_version == "2"
    assert store.get("Pod", "default", "web-1") is p
    assert store.get("Node", None, "n1") is n


def test_create_does_not_mutate_input_and_create_overwrites_uid(store: MemoryCluster) -> None:
    given = pod("a")
    given["metadata"]["uid"] = "mine"
    created = store.create(given)
    assert given["metadata"] == {"name": "a", "namespace": "default", "uid": "mine"}
    assert UUID4.match(created["metadata"]["uid"])


def test_create_duplicate_and_missing(store: MemoryCluster) -> None:
    store.create(pod("web-1"))
    with pytest.raises(AlreadyExistsError, match='^pods "web-1" already exists$'):
        store.create(pod("web-1"))
    with pytest.raises(NotFoundError, match='^pods "nope" not found$'):
        store.get("Pod", "default", "nope")
    with pytest.raises(NotFoundError, match='^storageclasses.storage.k8s.io "fast" not found$'):
        store.get("StorageClass", None, "fast")
    with pytest.raises(ValueError, match="metadata.name or metadata.generateName is required"):
        store.create({"kind": "Pod", "metadata": {}})


def test_generate_name_is_deterministic(clock: VirtualClock) -> None:
    names = []
    for _ in range(2):
        s = MemoryCluster(clock, seed=7)
        names.append(
            [
                s.create({"kind": "Pod", "metadata": {"generateName": "pod-"}})["metadata"]["name"]
                for _ in range(3)
            ]
        )
    assert names[0] == names[1]
    assert all(n.startswith("pod-") and len(n) == 9 for n in names[0])
    assert len(set(names[0])) == 3


def test_list_sorted_by_etcd_key_namespace_and_labels(store: MemoryCluster) -> None:
    for ns, name in [("b", "x"), ("a", "z"), ("a-b", "y"), ("a", "y")]:
        store.create(pod(name, ns))
    store.create({**pod("web", "a"), "metadata": {"name": "web", "namespace": "a", "labels": {"app": "web"}}})
    res = store.list("Pod")
    # "a-b/" sorts before "a/" because '-' < '/', as in etcd.
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in res.items] == [
        ("a-b", "y"),
        ("a", "web"),
        ("a", "y"),
        ("a", "z"),
        ("b", "x"),
    ]
    assert res.resource_version == "5"
    assert [o["metadata"]["name"] for o in store.list("Pod", "a").items] == ["web", "y", "z"]
    assert [o["metadata"]["name"] for o in store.list("Pod", label_selector="app=web").items] == ["web"]
    assert [o["metadata"]["name"] for o in store.list("Pod", "a", label_selector={"app": "web"}).items] == [
        "web"
    ]
    assert len(store.list("Pod", label_selector="!app").items) == 4
    assert store.list("Node") == ([], "5")


def test_update_optimistic_concurrency_and_status_kept(store: MemoryCluster) -> None:
    n = store.create(node("n1", zone="a"))
    store.patch_status("Node", None, "n1", {"allocatable": {"cpu": "4"}})
    stale = {**n, "metadata": {**n["metadata"], "labels": {"zone": "b"}}}
    with pytest.raises(ConflictError) as err:
        store.update(stale)
    assert str(err.value) == (
        'Operation cannot be fulfilled on nodes "n1": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    fresh = store.get("Node", None, "n1")
    changed = {
        **fresh,
        "metadata": {**fresh["metadata"], "labels": {"zone": "b"}},
        "status": {"allocatable": {"cpu": "1"}},
    }
    updated = store.update(changed)
    assert updated["metadata"]["resourceVersion"] == "3"
    assert updated["metadata"]["labels"] == {"zone": "b"}
    assert updated["status"] == {"allocatable": {"cpu": "4"}}  # status is a subresource
    assert updated["metadata"]["uid"] == n["metadata"]["uid"]
    # No-op update: nothing written.
    assert store.update(updated) is updated
    assert store.resource_version == "3"
    # Unconditional update (no resourceVersion given).
    meta = {k: v for k, v in updated["metadata"].items() if k != "resourceVersion"}
    assert store.update({**updated, "metadata": {**meta, "labels": {}}})["metadata"]["resourceVersion"] == "4"
    with pytest.raises(NotFoundError, match='^nodes "n9" not found$'):
        store.update(node("n9"))


def test_bind_sets_node_name_and_pod_scheduled_condition(store: MemoryCluster, clock: VirtualClock) -> None:
    p = store.create(pod("web-1"))
    store.patch_status(
        "Pod",
        "default",
        "web-1",
        {
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "0/1 nodes are available",
                    "lastProbeTime": None,
                    "lastTransitionTime": "2024-01-01T00:00:00Z",
                }
            ]
        },
    )
    clock.advance_to(T0 + 61)
    store.bind("default", "web-1", p["metadata"]["uid"], "n1")
    bound = store.get("Pod", "default", "web-1")
    assert bound["spec"] == {"containers": [], "nodeName": "n1"}
    assert bound["status"] == {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": "2024-01-01T00:01:01Z",
            }
        ],
    }
    assert bound["metadata"]["resourceVersion"] == "3"
    assert p["spec"] == {"containers": []}  # earlier dicts are never mutated


def test_bind_already_assigned_message(store: MemoryCluster) -> None:
    p = store.create(pod("web-1"))
    store.bind("default", "web-1", p["metadata"]["uid"], "n1")
    with pytest.raises(ConflictError) as err:
        store.bind("default", "web-1", p["metadata"]["uid"], "n2")
    assert str(err.value) == (
        'Operation cannot be fulfilled on pods/binding "web-1": pod web-1 is already assigned to node "n1"'
    )
    assert store.get("Pod", "default", "web-1")["spec"]["nodeName"] == "n1"


def test_bind_uid_mismatch_missing_deleting_and_gated(store: MemoryCluster) -> None:
    p = store.create(pod("web-1"))
    with pytest.raises(ConflictError) as err:
        store.bind("default", "web-1", "other-uid", "n1")
    assert str(err.value) == (
        'Operation cannot be fulfilled on pods "web-1": Precondition failed: '
        f"UID in precondition: other-uid, UID in object meta: {p['metadata']['uid']}"
    )
    with pytest.raises(NotFoundError, match='^pods "ghost" not found$'):
        store.bind("default", "ghost", "", "n1")
    store.create(pod("gated", schedulingGates=[{"name": "wait"}]))
    with pytest.raises(ConflictError) as err:
        store.bind("default", "gated", "", "n1")
    assert str(err.value) == (
        'Operation cannot be fulfilled on pods/binding "gated": pod gated has non-empty .spec.schedulingGates'
    )
    store.create(pod("running", nodeName="n1"))
    store.delete("Pod", "default", "running", grace=True)
    with pytest.raises(ConflictError):
        store.bind("default", "running", "", "n2")
    assert store.get("Pod", "default", "web-1") is p


def test_bind_recreated_pod_with_old_uid_fails(store: MemoryCluster) -> None:
    old = store.create(pod("web-1"))
    store.delete("Pod", "default", "web-1")
    new = store.create(pod("web-1"))
    with pytest.raises(ConflictError) as err:
        store.bind("default", "web-1", old["metadata"]["uid"], "n1")
    assert str(err.value) == (
        'Operation cannot be fulfilled on pods "web-1": Precondition failed: '
        f"UID in precondition: {old['metadata']['uid']}, UID in object meta: {new['metadata']['uid']}"
    )


def test_uids_stay_unique_when_a_store_is_loaded_from_another_stores_dump(clock: VirtualClock) -> None:
    first = MemoryCluster(clock)
    for i in range(50):
        first.create(pod(f"p{i}"))
    dumped = first.snapshot_objects()
    second = MemoryCluster(clock)
    assert second.load(dumped) == 50
    loaded = {o["metadata"]["uid"] for o in second.list("Pod").items}
    assert loaded == {o["metadata"]["uid"] for o in dumped} and len(loaded) == 50
    # the same seed draws the same UIDs: the store skips those it holds
    fresh = [second.create(pod(f"new{i}"))["metadata"]["uid"] for i in range(50)]
    assert all(UUID4.match(u) for u in fresh)
    assert len(set(fresh)) == 50 and not set(fresh) & loaded
    third = MemoryCluster(clock)
    assert third.create(pod("x"))["metadata"]["uid"] == dumped[0]["metadata"]["uid"]  # reproducible
    rand = MemoryCluster(clock, uid_seed=None)
    rand.load(dumped)
    randoms = {rand.create(pod(f"r{i}"))["metadata"]["uid"] for i in range(50)}
    assert len(randoms) == 50 and not randoms & loaded and all(UUID4.match(u) for u in randoms)


def test_patch_status_merges_conditions_by_type(store: MemoryCluster) -> None:
    store.create(pod("web-1"))
    store.patch_status(
        "Pod",
        "default",
        "web-1",
        {
            "nominatedNodeName": "n3",
            "conditions": [
                {"type": "Ready", "status": "False", "reason": "NotStarted"},
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "no"},
            ],
        },
    )
    out = store.patch_status(
        "Pod",
        "default",
        "web-1",
        {
            "nominatedNodeName": None,
            "hostIP": "10.0.0.1",
            "conditions": [
                {"type": "PodScheduled", "status": "True", "reason": None},
                {"type": "Initialized", "status": "True"},
            ],
        },
    )
    assert out["status"] == {
        "phase": "Pending",
        "conditions": [
            {"type": "Ready", "status": "False", "reason": "NotStarted"},
            {"type": "PodScheduled", "status": "True", "message": "no"},
            {"type": "Initialized", "status": "True"},
        ],
        "hostIP": "10.0.0.1",
    }
    assert out["metadata"]["resourceVersion"] == "3"
    # A patch that changes nothing is not written.
    assert store.patch_status("Pod", "default", "web-1", {"hostIP": "10.0.0.1"}) is out
    assert store.resource_version == "3"
    removed = store.patch_status(
        "Pod", "default", "web-1", {"conditions": [{"type": "Ready", "$patch": "delete"}]}
    )
    assert [c["type"] for c in removed["status"]["conditions"]] == ["PodScheduled", "Initialized"]
    with pytest.raises(NotFoundError, match='^pods "nope" not found$'):
        store.patch_status("Pod", "default", "nope", {})


def test_delete_immediate_and_graceful(store: MemoryCluster, clock: VirtualClock) -> None:
    store.create(pod("pending"))
    store.create(pod("bound", nodeName="n1", terminationGracePeriodSeconds=10))
    store.delete("Pod", "default", "pending", grace=True)  # unbound: goes at once
    with pytest.raises(NotFoundError):
        store.get("Pod", "default", "pending")
    clock.advance_to(T0 + 5)
    store.delete("Pod", "default", "bound", grace=True)
    terminating = store.get("Pod", "default", "bound")
    assert terminating["metadata"]["deletionTimestamp"] == "2024-01-01T00:00:15Z"
    assert terminating["metadata"]["deletionGracePeriodSeconds"] == 10
    rv = store.resource_version
    store.delete("Pod", "default", "bound", grace=True)  # second graceful delete: no-op
    assert store.resource_version == rv
    store.delete("Pod", "default", "bound")
    assert store.list("Pod").items == []
    with pytest.raises(NotFoundError, match='^pods "bound" not found$'):
        store.delete("Pod", "default", "bound")


def test_events_are_bounded_and_named(clock: VirtualClock) -> None:
    store = MemoryCluster(clock, event_limit=2)
    for i in range(3):
        store.create_event(
            {
                "apiVersion": "events.k8s.io/v1",
                "kind": "Event",
                "regarding": {"kind": "Pod", "namespace": "prod", "name": f"web-{i}"},
                "reason": "Scheduled",
                "type": "Normal",
            }
        )
    evs = store.events()
    assert [(e["metadata"]["namespace"], e["metadata"]["name"]) for e in evs] == [
        ("prod", "web-1.2"),
        ("prod", "web-2.3"),
    ]
    assert store.events_total == 3
    assert store.resource_version == "3"
    assert [e["reason"] for e in store.list("Event", "prod").items] == ["Scheduled", "Scheduled"]


def test_load_keeps_identity_and_snapshot_orders_kinds(store: MemoryCluster) -> None:
    objs = [
        {
            **pod("b"),
            "metadata": {
                "name": "b",
                "namespace": "default",
                "uid": "u-b",
                "creationTimestamp": "2020-01-01T00:00:00Z",
            },
        },
        node("n2"),
        pod("a"),
        node("n1"),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}},
    ]
    assert store.load(objs) == 5
    b = store.get("Pod", "default", "b")
    assert (b["metadata"]["uid"], b["metadata"]["creationTimestamp"]) == ("u-b", "2020-01-01T00:00:00Z")
    assert [(o["kind"], o["metadata"]["name"]) for o in store.snapshot_objects()] == [
        ("Namespace", "default"),
        ("Node", "n1"),
        ("Node", "n2"),
        ("Pod", "a"),
        ("Pod", "b"),
    ]
    assert store.counts() == {"Pod": 2, "Node": 2, "Namespace": 1}
    with pytest.raises(AlreadyExistsError, match='^nodes "n1" already exists$'):
        store.load([node("n1")])


def test_finalizers_hold_a_deletion_until_the_last_one_is_removed() -> None:
    from kubesched.clock import VirtualClock
    from kubesched.embedded.store import MemoryCluster

    cluster = MemoryCluster(VirtualClock(1_700_000_000))
    cluster.create({"kind": "ConfigMap", "metadata": {"name": "cm", "finalizers": ["example.com/a"]}})
    cluster.delete("ConfigMap", "default", "cm")
    held = cluster.get("ConfigMap", "default", "cm")
    assert held["metadata"]["deletionTimestamp"] == "2023-11-14T22:13:20Z"
    cluster.update({**held, "metadata": {**held["metadata"], "finalizers": []}})
    assert cluster.list("ConfigMap").items == []


def test_namespace_controller_empties_a_namespace_then_deletes_it() -> None:
    from kubesched.clock import VirtualClock
    from kubesched.embedded.controllers.namespace import NamespaceController
    from kubesched.embedded.store import MemoryCluster

    cluster = MemoryCluster(VirtualClock(1_700_000_000))
    NamespaceController(cluster).start()
    cluster.create({"kind": "Namespace", "metadata": {"name": "ns1"}, "spec": {"finalizers": ["kubernetes"]}})
    cluster.create(
        {
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns1"},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]},
        }
    )
    cluster.create({"kind": "Service", "metadata": {"name": "s", "namespace": "ns1"}})
    cluster.delete("Namespace", None, "ns1")
    ns = cluster.get("Namespace", None, "ns1")
    assert ns["status"]["phase"] == "Terminating"
    assert cluster.list("Service", "ns1").items == []
    pod = cluster.get("Pod", "ns1", "p")  # bound: deleted gracefully, the kubelet's turn
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 30
    cluster.delete("Pod", "ns1", "p")
    assert [n["metadata"]["name"] for n in cluster.list("Namespace").items] == []


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.integers(0, 2**128 - 1), st.sampled_from([0, 2**128 - 1, 0xC000 << 48, 0xF000 << 64])))
def test_uuid4_string_is_the_uuid_modules_version_4_text(bits: int) -> None:
    assert uuid4_string(bits) == str(uuid.UUID(int=bits, version=4))
