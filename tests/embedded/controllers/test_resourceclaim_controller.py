"""The embedded ResourceClaim controller, after upstream's ``pkg/controller/resourceclaim/
controller_test.go: TestSyncHandler`` cases (pod ``test-pod`` uid ``uidpod1`` in ``my-namespace``
with pod claim ``acme-resource`` from template ``my-template``), plus the flows the embedded
cluster drives through watch events (pod done, pod deleted, template arriving late)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.clock import VirtualClock
from kubesched.embedded.controllers.garbagecollector import GarbageCollector
from kubesched.embedded.controllers.resourceclaim import (
    DELETE_PROTECTION_FINALIZER,
    ClaimNameError,
    ResourceClaimController,
    generate_claim_name_base,
    pod_claim_name,
)
from kubesched.embedded.store import MemoryCluster

NS = "my-namespace"
POD = "test-pod"
POD_UID = "uidpod1"
PC = "acme-resource"
TEMPLATE = "my-template"
T0 = 1_700_000_000.0

Obj = dict[str, Any]


def make_pod(
    name: str = POD,
    uid: str = POD_UID,
    *,
    claims: bool = True,
    statuses: list[Obj] | None = None,
    node: str = "",
    phase: str = "Pending",
) -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "busybox"}]}
    if claims:
        spec["resourceClaims"] = [{"name": PC, "resourceClaimTemplateName": TEMPLATE}]
    if node:
        spec["nodeName"] = node
    status: Obj = {"phase": phase}
    if statuses is not None:
        status["resourceClaimStatuses"] = statuses
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "uid": uid},
        "spec": spec,
        "status": status,
    }


def make_template(labels: dict[str, str] | None = None) -> Obj:
    meta: Obj = {"annotations": {"team": "ml"}}
    if labels:
        meta["labels"] = labels
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": TEMPLATE, "namespace": NS},
        "spec": {
            "metadata": meta,
            "spec": {
                "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}
            },
        },
    }


def owner(name: str = POD, uid: str = POD_UID, controller: bool = True) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": name,
        "uid": uid,
        "controller": controller,
        "blockOwnerDeletion": True,
    }


def make_claim(
    name: str,
    *,
    owners: list[Obj] | None = None,
    generated: bool = False,
    allocated: bool = False,
    reserved: list[tuple[str, str]] = (),
    finalizer: bool = False,
) -> Obj:  # type: ignore[assignment]
    meta: Obj = {"name": name, "namespace": NS}
    if owners:
        meta["ownerReferences"] = owners
    if generated:
        meta["annotations"] = {"resource.kubernetes.io/pod-claim-name": PC}
    if finalizer:
        meta["finalizers"] = [DELETE_PROTECTION_FINALIZER]
    status: Obj = {}
    if allocated:
        status["allocation"] = {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "gpu.example.com", "pool": "worker", "device": "gpu-0"}
                ]
            }
        }
    if reserved:
        status["reservedFor"] = [{"resource": "pods", "name": n, "uid": u} for n, u in reserved]
    claim: Obj = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}
        },
    }
    if status:
        claim["status"] = status
    return claim


def cluster_with(*objs: Obj, gc: bool = True, **kw: Any) -> tuple[MemoryCluster, ResourceClaimController]:
    clock = VirtualClock(T0)
    cluster = MemoryCluster(clock)
    cluster.load(copy.deepcopy(list(objs)))
    ctrl = ResourceClaimController(cluster, clock_now=clock.now, **kw).start()
    if gc:
        GarbageCollector(cluster, clock).start()
    return cluster, ctrl


def settle(cluster: MemoryCluster) -> None:
    """Run the work the cluster's controllers queued on its virtual clock, at the current instant."""
    clock = cluster._clock
    assert isinstance(clock, VirtualClock)
    clock.run_until(clock.now())


def stored(obj: Obj) -> Obj:
    """``obj`` without the fields the store assigns (uid, resourceVersion, creationTimestamp)."""
    out = copy.deepcopy(obj)
    for k in ("uid", "resourceVersion", "creationTimestamp"):
        out["metadata"].pop(k, None)
    return out


def claims(cluster: MemoryCluster) -> list[Obj]:
    return [stored(c) for c in cluster.list("ResourceClaim").items]


def statuses(cluster: MemoryCluster, name: str = POD) -> Any:
    return cluster.get("Pod", NS, name)["status"].get("resourceClaimStatuses")


GENERATED = "test-pod-acme-resource-"


def generated_claim(name: str, *, labels: dict[str, str] | None = None) -> Obj:
    meta: Obj = {
        "generateName": GENERATED,
        "name": name,
        "namespace": NS,
        "ownerReferences": [owner()],
        "annotations": {"team": "ml", "resource.kubernetes.io/pod-claim-name": PC},
    }
    if labels:
        meta["labels"] = labels
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}
        },
    }


# ---------------------------------------------------------------------- pods


def test_create_claim_from_template() -> None:
    cluster, _ = cluster_with(make_template(labels={"app": "train"}), make_pod())
    (claim,) = cluster.list("ResourceClaim").items
    name = claim["metadata"]["name"]
    assert name == "test-pod-acme-resource-q7rcl"
    assert stored(claim) == generated_claim(name, labels={"app": "train"})
    assert statuses(cluster) == [{"name": PC, "resourceClaimName": name}]


def test_nop_when_claim_exists() -> None:
    existing = generated_claim("test-pod-acme-resource-1")
    cluster, _ = cluster_with(
        make_template(),
        existing,
        make_pod(statuses=[{"name": PC, "resourceClaimName": "test-pod-acme-resource-1"}]),
    )
    assert claims(cluster) == [existing]
    assert statuses(cluster) == [{"name": PC, "resourceClaimName": "test-pod-acme-resource-1"}]


def test_recreate_deleted_claim() -> None:
    cluster, _ = cluster_with(
        make_template(), make_pod(statuses=[{"name": PC, "resourceClaimName": "test-pod-acme-resource-1"}])
    )
    (claim,) = claims(cluster)
    name = claim["metadata"]["name"]
    assert name != "test-pod-acme-resource-1"
    assert claim == generated_claim(name)
    assert statuses(cluster) == [{"name": PC, "resourceClaimName": name}]


def test_find_existing_claim_by_owner_and_annotation() -> None:
    existing = generated_claim("test-pod-acme-resource-1")
    cluster, _ = cluster_with(existing, make_pod())  # no template needed: the claim is found
    assert claims(cluster) == [existing]
    assert statuses(cluster) == [{"name": PC, "resourceClaimName": "test-pod-acme-resource-1"}]


def test_claim_not_owned_by_pod_blocks_the_pod() -> None:
    # podNeedsWork: "cannot proceed with the pod unless that other claim gets deleted"
    conflicting = make_claim("test-pod-acme-resource")  # no owner
    cluster, _ = cluster_with(
        make_template(),
        conflicting,
        make_pod(statuses=[{"name": PC, "resourceClaimName": "test-pod-acme-resource"}]),
    )
    assert claims(cluster) == [conflicting]
    assert statuses(cluster) == [{"name": PC, "resourceClaimName": "test-pod-acme-resource"}]


def test_missing_template_reports_event_then_creates_claim_when_template_arrives() -> None:
    cluster, _ = cluster_with(make_pod())
    assert claims(cluster) == []
    assert statuses(cluster) is None
    (event,) = cluster.events()
    assert (event["type"], event["reason"], event["message"], event["source"]) == (
        "Warning",
        "FailedResourceClaimCreation",
        'PodResourceClaim acme-resource: resource claim template "my-template": '
        'resourceclaimtemplate.resource.k8s.io "my-template" not found',
        {"component": "resource_claim"},
    )
    assert event["involvedObject"]["name"] == POD
    cluster.create(make_template())
    (claim,) = claims(cluster)
    assert claim == generated_claim(claim["metadata"]["name"])
    assert statuses(cluster) == [{"name": PC, "resourceClaimName": claim["metadata"]["name"]}]


def test_pod_without_claims_and_deleting_pod_are_left_alone() -> None:
    deleting = make_pod("gone", "uid-gone")
    deleting["metadata"]["deletionTimestamp"] = "2023-11-14T22:13:20Z"
    cluster, _ = cluster_with(make_template(), make_pod(claims=False), deleting)
    assert claims(cluster) == []
    assert statuses(cluster) is None and statuses(cluster, "gone") is None


def test_admin_access_needs_the_feature_gate() -> None:
    template = make_template()
    template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    cluster, _ = cluster_with(template, make_pod(), admin_access_enabled=False)
    assert claims(cluster) == []
    assert cluster.events()[0]["message"] == (
        "PodResourceClaim acme-resource: admin access is requested, but the feature is disabled"
    )
    cluster2, _ = cluster_with(template, make_pod())
    assert len(claims(cluster2)) == 1


def test_add_reserved_for_scheduled_pod() -> None:
    allocated = make_claim("test-pod-acme-resource-1", owners=[owner()], generated=True, allocated=True)
    cluster, _ = cluster_with(
        make_template(),
        allocated,
        make_pod(node="worker", statuses=[{"name": PC, "resourceClaimName": "test-pod-acme-resource-1"}]),
    )
    expected = copy.deepcopy(allocated)
    expected["status"]["reservedFor"] = [{"resource": "pods", "name": POD, "uid": POD_UID}]
    assert claims(cluster) == [expected]


def test_generate_name_truncation() -> None:
    assert generate_claim_name_base("test-pod", "acme-resource") == "test-pod-acme-resource-"
    pod, pc = "p" * 40, "c" * 30  # 72 characters with the hyphens
    base = generate_claim_name_base(pod, pc)
    assert base == "p" * (40 * 57 // 72) + "-" + "c" * (30 * 57 // 72)
    assert len(base) == 31 + 1 + 23


def test_pod_claim_name_errors() -> None:
    pod = make_pod()
    with pytest.raises(ClaimNameError, match='^pod "my-namespace/test-pod": ResourceClaim not created yet$'):
        pod_claim_name(pod, {"name": PC, "resourceClaimTemplateName": TEMPLATE})
    with pytest.raises(ClaimNameError, match='spec.resourceClaim "x": none of the supported fields are set$'):
        pod_claim_name(pod, {"name": "x"})
    assert pod_claim_name(pod, {"name": "x", "resourceClaimName": "shared"}) == ("shared", False)
    skipped = make_pod(statuses=[{"name": PC}])
    assert pod_claim_name(skipped, {"name": PC, "resourceClaimTemplateName": TEMPLATE}) == (None, True)


# ---------------------------------------------------------------------- claims


def test_stay_reserved_while_pod_exists() -> None:
    reserved = make_claim(
        "test-pod-acme-resource", owners=[owner()], allocated=True, reserved=[(POD, POD_UID)]
    )
    cluster, _ = cluster_with(
        reserved, make_pod(statuses=[{"name": PC, "resourceClaimName": "test-pod-acme-resource"}])
    )
    assert claims(cluster) == [reserved]


def test_clear_reserved_structured_deallocates_and_drops_finalizer() -> None:
    reserved = make_claim(
        "test-pod-acme-resource", owners=[owner()], allocated=True, reserved=[(POD, POD_UID)], finalizer=True
    )
    cluster, _ = cluster_with(reserved, gc=False)  # no pods
    expected = make_claim("test-pod-acme-resource", owners=[owner()])
    expected["status"] = {}  # as the API server prints a claim whose status fields are all empty
    assert claims(cluster) == [expected]


def test_dont_clear_reserved_structured_while_one_consumer_remains() -> None:
    shared = make_claim(
        "shared", allocated=True, reserved=[(POD, POD_UID), ("test-pod-II", "uidpod1-II")], finalizer=True
    )
    cluster, _ = cluster_with(shared, make_pod())
    assert claims(cluster) == [
        make_claim("shared", allocated=True, reserved=[(POD, POD_UID)], finalizer=True)
    ]


def test_clear_reserved_when_done_keeps_allocation_without_finalizer() -> None:
    claim = make_claim("test-pod-acme-resource", allocated=True, reserved=[(POD, POD_UID)])
    cluster, _ = cluster_with(claim, make_pod(phase="Succeeded"))
    assert claims(cluster) == [make_claim("test-pod-acme-resource", allocated=True)]


def test_remove_reservation_of_replaced_pod() -> None:
    shared = make_claim("shared", allocated=True, reserved=[(POD, POD_UID), (POD, "old-uid")])
    cluster, _ = cluster_with(shared, make_pod(claims=False))
    assert claims(cluster) == [make_claim("shared", allocated=True, reserved=[(POD, POD_UID)])]


def test_delete_generated_claim_when_pod_done() -> None:
    claim = make_claim(
        "test-pod-acme-resource", owners=[owner()], allocated=True, reserved=[(POD, POD_UID)], finalizer=True
    )
    cluster, _ = cluster_with(
        claim,
        make_pod(phase="Succeeded", statuses=[{"name": PC, "resourceClaimName": "test-pod-acme-resource"}]),
    )
    assert claims(cluster) == []


# ---------------------------------------------------------------------- flows


def _scheduled_pod_with_allocated_claim() -> tuple[MemoryCluster, str]:
    """Pod created, claim generated; then the scheduler's work: allocation, finalizer, reservation,
    binding."""
    cluster, _ = cluster_with(make_template(), make_pod())
    (claim,) = cluster.list("ResourceClaim").items
    name = claim["metadata"]["name"]
    cluster.update({**claim, "metadata": {**claim["metadata"], "finalizers": [DELETE_PROTECTION_FINALIZER]}})
    cluster.patch_status(
        "ResourceClaim",
        NS,
        name,
        {
            "allocation": make_claim("x", allocated=True)["status"]["allocation"],
            "reservedFor": [{"resource": "pods", "name": POD, "uid": POD_UID}],
        },
    )
    cluster.bind(NS, POD, POD_UID, "worker")
    return cluster, name


def test_pod_finishing_releases_and_deletes_its_claim() -> None:
    cluster, name = _scheduled_pod_with_allocated_claim()
    assert cluster.get("ResourceClaim", NS, name)["status"]["reservedFor"] == [
        {"resource": "pods", "name": POD, "uid": POD_UID}
    ]
    cluster.patch_status("Pod", NS, POD, {"phase": "Succeeded"})
    assert claims(cluster) == []


def test_pod_deletion_releases_claim_and_garbage_collector_removes_it() -> None:
    cluster, name = _scheduled_pod_with_allocated_claim()
    seen: list[tuple[str, Any, Any]] = []
    cluster.watch(
        "ResourceClaim",
        cluster.resource_version,
        lambda ev: seen.append((ev.type, ev.object.get("status"), ev.object["metadata"].get("finalizers"))),
    )
    cluster.delete("Pod", NS, POD)
    settle(cluster)  # the garbage collector works from its queue on the cluster's clock
    assert claims(cluster) == []
    # released (reservation and allocation cleared), the finalizer dropped, then deleted
    assert seen == [
        ("MODIFIED", {}, [DELETE_PROTECTION_FINALIZER]),
        ("MODIFIED", {}, None),
        ("DELETED", {}, None),
    ]


def test_garbage_collector_removes_orphans_at_start_and_keeps_owned_claims() -> None:
    orphan = make_claim("orphan", owners=[owner("gone", "uid-gone")])
    kept = make_claim("kept", owners=[owner()])
    replaced = make_claim("replaced", owners=[owner(POD, "older-uid")])
    unowned = make_claim("unowned")
    clock = VirtualClock(T0)
    cluster = MemoryCluster(clock)
    cluster.load([orphan, kept, replaced, unowned, make_pod(claims=False)])
    GarbageCollector(cluster, clock).start()
    clock.run_until(T0)
    assert [c["metadata"]["name"] for c in cluster.list("ResourceClaim").items] == ["kept", "unowned"]
