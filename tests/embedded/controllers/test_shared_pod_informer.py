"""The pod informer the embedded controllers share: one store watch and one index per store,
every pod event indexed once and handed to each controller with its controller reference; the
ReplicaSet controller's orphan look-ups and the garbage collector's no-op events."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.client.client import WatchEvent
from kubesched.clock import VirtualClock
from kubesched.embedded.controllers.daemonset import DaemonSetController
from kubesched.embedded.controllers.deployment import DeploymentController
from kubesched.embedded.controllers.garbagecollector import GarbageCollector
from kubesched.embedded.controllers.informer import SharedPodInformer, shared_pod_informer
from kubesched.embedded.controllers.job import JobController
from kubesched.embedded.controllers.replicaset import ReplicaSetController
from kubesched.embedded.controllers.statefulset import StatefulSetController
from kubesched.embedded.store import MemoryCluster

T0 = 1_700_000_000.0

Obj = dict[str, Any]


def owner_ref(kind: str, name: str, *, controller: bool = True) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "name": name,
        "uid": f"uid-{name}",
        "controller": controller,
    }


def pod(name: str, *refs: Obj, labels: dict[str, str] | None = None, namespace: str = "default") -> Obj:
    meta: Obj = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    if refs:
        meta["ownerReferences"] = list(refs)
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": [{"name": "c"}]}}


def replicaset(name: str, replicas: int = 0) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c"}]}},
        },
    }


def new_cluster() -> tuple[MemoryCluster, VirtualClock]:
    clock = VirtualClock(T0)
    return MemoryCluster(clock), clock


def pod_watches(cluster: MemoryCluster) -> int:
    return len(cluster._subs.get("Pod", []))


def names(pods: list[Obj]) -> list[str]:
    return sorted(p["metadata"]["name"] for p in pods)


def test_the_workload_controllers_share_one_pod_watch_and_release_it_when_all_stop() -> None:
    cluster, clock = new_cluster()
    controllers = [
        ReplicaSetController(cluster, clock).start(),
        DeploymentController(cluster, clock).start(),
        JobController(cluster, clock).start(),
        DaemonSetController(cluster, clock).start(),
        StatefulSetController(cluster, clock).start(),
    ]
    informer = shared_pod_informer(cluster)
    assert informer is shared_pod_informer(cluster)
    assert informer.handler_count == 5
    assert pod_watches(cluster) == 1
    for c in controllers:
        c.stop()
    assert informer.handler_count == 0
    assert pod_watches(cluster) == 0


def test_each_store_has_its_own_informer() -> None:
    a, _ = new_cluster()
    b, _ = new_cluster()
    assert shared_pod_informer(a) is not shared_pod_informer(b)


def test_existing_pods_are_indexed_and_handlers_get_later_events_with_their_references() -> None:
    cluster, _ = new_cluster()
    cluster.create(pod("a-1", owner_ref("ReplicaSet", "a")))
    cluster.create(pod("orphan"))
    informer = SharedPodInformer(cluster)
    seen: list[tuple[str, str, str | None, str | None]] = []

    def handler(ev: WatchEvent, ref: Any, old_ref: Any) -> None:
        name = ev.object["metadata"]["name"]
        seen.append((ev.type, name, ref and ref["name"], old_ref and old_ref["name"]))

    reg = informer.add_event_handler(handler)
    assert seen == []  # the pods that existed are indexed, not handed to the handler
    assert names(informer.owned("default", "uid-a")) == ["a-1"]
    assert names(informer.orphans("default")) == ["orphan"]

    orphan = cluster.get("Pod", "default", "orphan")
    cluster.update(
        {**orphan, "metadata": {**orphan["metadata"], "ownerReferences": [owner_ref("ReplicaSet", "a")]}}
    )
    cluster.create(pod("b-1", owner_ref("Job", "b")))
    cluster.delete("Pod", "default", "a-1")
    assert seen == [
        ("MODIFIED", "orphan", "a", None),
        ("ADDED", "b-1", "b", None),
        ("DELETED", "a-1", "a", "a"),  # a DELETED event carries the last object as old too
    ]
    assert names(informer.owned("default", "uid-a")) == ["orphan"]
    assert names(informer.owned("default", "uid-b")) == ["b-1"]
    assert informer.orphans("default") == []

    reg.stop()
    reg.stop()  # twice is fine
    assert informer.owned("default", "uid-a") == []  # the index goes with the last handler
    informer.add_event_handler(handler)  # and is rebuilt with the next one
    assert names(informer.owned("default", "uid-a")) == ["orphan"]


def test_a_pod_being_deleted_without_a_controller_is_no_orphan_to_adopt() -> None:
    cluster, _ = new_cluster()
    cluster.create({**pod("p"), "metadata": {**pod("p")["metadata"], "finalizers": ["example.com/keep"]}})
    informer = SharedPodInformer(cluster)
    informer.add_event_handler(lambda ev, ref, old_ref: None)
    assert names(informer.orphans("default")) == ["p"]
    cluster.delete("Pod", "default", "p", grace=True)
    assert informer.orphans("default") == []


# a sequence of pod writes: (pod index, controller name or None, delete?)
writes = st.lists(
    st.tuples(
        st.integers(0, 5), st.sampled_from([None, "a", "b"]), st.booleans(), st.sampled_from(["x", "y"])
    ),
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(writes)
def test_the_index_equals_a_pass_over_every_pod(ops: list[tuple[int, str | None, bool, str]]) -> None:
    cluster, _ = new_cluster()
    informer = SharedPodInformer(cluster)
    informer.add_event_handler(lambda ev, ref, old_ref: None)
    for i, owner, delete, namespace in ops:
        name = f"p{i}"
        try:
            current = cluster.get("Pod", namespace, name)
        except Exception:  # noqa: BLE001 - not there yet
            current = None
        if delete:
            if current is not None:
                cluster.delete("Pod", namespace, name)
            continue
        refs = [owner_ref("ReplicaSet", owner)] if owner else []
        if current is None:
            cluster.create(pod(name, *refs, namespace=namespace))
        else:
            cluster.update({**current, "metadata": {**current["metadata"], "ownerReferences": refs}})
    every = cluster.list("Pod", None).items
    for namespace in ("x", "y"):
        for owner in ("a", "b"):
            expected = [
                p
                for p in every
                if p["metadata"]["namespace"] == namespace
                and any(r.get("uid") == f"uid-{owner}" for r in p["metadata"].get("ownerReferences") or [])
            ]
            assert names(informer.owned(namespace, f"uid-{owner}")) == names(expected)
        expected_orphans = [
            p
            for p in every
            if p["metadata"]["namespace"] == namespace and not p["metadata"].get("ownerReferences")
        ]
        assert names(informer.orphans(namespace)) == names(expected_orphans)


def test_an_orphans_status_update_or_binding_asks_no_replicaset_but_a_label_change_does() -> None:
    cluster, clock = new_cluster()
    web = replicaset("web")
    cluster.create({**web, "metadata": {**web["metadata"], "finalizers": ["example.com/keep"]}})
    cluster.delete("ReplicaSet", "default", "web")  # being deleted: selects orphans, adopts none
    cluster.create(replicaset("api"))
    rs = ReplicaSetController(cluster, clock).start()
    clock.run_until(clock.now())
    queued: list[str] = []
    add = rs.queue.add
    rs.queue.add = lambda key: (queued.append(key), add(key))[1]  # type: ignore[method-assign]

    p = cluster.create(pod("p", labels={"app": "web"}))
    assert queued == ["default/web"]  # addPod: the owners that select it look
    clock.run_until(clock.now())
    cluster.patch_status("Pod", "default", "p", {"status": {"phase": "Running"}})
    cluster.bind("default", "p", p["metadata"]["uid"], "n1")
    assert queued == ["default/web"]  # updatePod: neither labels nor controller changed
    p = cluster.get("Pod", "default", "p")
    cluster.update({**p, "metadata": {**p["metadata"], "labels": {"app": "api"}}})
    assert queued == ["default/web", "default/api"]
    clock.run_until(clock.now())
    adopted = cluster.get("Pod", "default", "p")["metadata"]["ownerReferences"]
    assert [(r["kind"], r["name"], r["controller"]) for r in adopted] == [("ReplicaSet", "api", True)]


def test_the_garbage_collector_queues_nothing_for_a_binding_and_collects_after_it() -> None:
    cluster, clock = new_cluster()
    rs = cluster.create(replicaset("web"))
    ref = {**owner_ref("ReplicaSet", "web"), "uid": rs["metadata"]["uid"]}
    uid = cluster.create(pod("web-1", ref, labels={"app": "web"}))["metadata"]["uid"]
    gc = GarbageCollector(cluster, clock).start()
    clock.run_until(clock.now())
    queued: list[str] = []
    add = gc.queue.add
    gc.queue.add = lambda key: (queued.append(key), add(key))[1]  # type: ignore[method-assign]

    cluster.bind("default", "web-1", uid, "n1")
    assert queued == []
    cluster.delete("ReplicaSet", "default", "web")
    clock.run_until(clock.now() + 1)
    assert queued == [uid]
    # deleted gracefully (a bound pod waits for its kubelet): deletion due after the 30 s grace period
    assert cluster.get("Pod", "default", "web-1")["metadata"]["deletionTimestamp"] == "2023-11-14T22:13:50Z"
