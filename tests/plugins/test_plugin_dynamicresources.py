"""DynamicResources against upstream's plugin test table (``dynamicresources_test.go``:
``TestPlugin``), the cases within v1.35's default feature gates: each extension point's status
and message, in-flight claims after Reserve, the claim written by PreBind (finalizer, allocation,
reservedFor) and what Unreserve/PostFilter change."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from kubesched.config.args import decode_args
from kubesched.errors import ConflictError, NotFoundError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import NodeToStatus
from kubesched.framework.events import QueueingHint
from kubesched.framework.results import NodeScore
from kubesched.framework.status import Code, Status
from kubesched.plugins.dynamicresources.dynamic_resources import DynamicResources, DynamicResourcesArgs
from kubesched.testing import FakeHandle, make_node, make_pod, node_info

NS, POD, POD_UID = "default", "my-pod", "1234"
CLAIM_NAME, CLASS, DRIVER, NODE = "my-pod-my-resource", "my-resource-class", "some-driver", "worker"
FINALIZER = "resource.kubernetes.io/delete-protection"


class FakeCluster:
    """The objects the plugin lists and the client it writes through (resourceVersions counted)."""

    def __init__(self) -> None:
        self.store: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.rv = 100
        self.writes: list[str] = []

    def add(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        o = copy.deepcopy(dict(obj))
        self.rv += 1
        o.setdefault("metadata", {})["resourceVersion"] = str(self.rv)
        kind = o["kind"]
        ns = o["metadata"].get("namespace", "") if kind == "ResourceClaim" else ""
        self.store[(kind, ns, o["metadata"]["name"])] = o
        return o

    # ObjectLister
    def list(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        return [o for (k, _, _), o in sorted(self.store.items()) if k == kind]

    def get(self, kind: str, namespace: str | None, name: str) -> Any:
        o = self.store.get((kind, namespace or "", name))
        return o

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        return {}

    # client
    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        key = ("ResourceClaim", obj["metadata"]["namespace"], obj["metadata"]["name"])
        cur = self.store.get(key)
        if cur is None:
            raise NotFoundError(f'resourceclaims.resource.k8s.io "{key[2]}" not found')
        if obj["metadata"].get("resourceVersion") != cur["metadata"]["resourceVersion"]:
            raise ConflictError("the object has been modified")
        self.writes.append("update")
        new = copy.deepcopy(obj)
        new["status"] = copy.deepcopy(cur.get("status"))
        return self.add(new)

    def patch_status(
        self, kind: str, namespace: str | None, name: str, patch: Mapping[str, Any]
    ) -> dict[str, Any]:
        cur = copy.deepcopy(self.store[(kind, namespace or "", name)])
        status = cur.setdefault("status", {})
        for k, v in patch.items():
            if v is None:
                status.pop(k, None)
            else:
                status[k] = copy.deepcopy(v)
        self.writes.append("status")
        return self.add(cur)


def node_selector(key: str, value: str, fields: bool = False) -> dict[str, Any]:
    req = {"key": key, "operator": "In", "values": [value]}
    return {"nodeSelectorTerms": [{"matchFields" if fields else "matchExpressions": [req]}]}


ALLOCATION = {
    "devices": {"results": [{"request": "req-1", "driver": DRIVER, "pool": NODE, "device": "instance-1"}]},
    "nodeSelector": node_selector("metadata.name", NODE, fields=True),
}


def claim(
    name: str = CLAIM_NAME,
    *,
    owner: bool = True,
    allocation: Any = None,
    reserved: bool = False,
    finalizer: bool = False,
    admin: bool = False,
    deleting: bool = False,
    first_available: bool = False,
    class_name: str = CLASS,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": NS, "uid": f"uid-{name}"}
    if owner:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": POD, "uid": POD_UID, "controller": True}
        ]
    if finalizer:
        meta["finalizers"] = [FINALIZER]
    if deleting:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    if first_available:
        req = {
            "name": "req-1",
            "firstAvailable": [{"name": "subreq-1", "deviceClassName": class_name, "count": 1}],
        }
    else:
        req = {
            "name": "req-1",
            "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": 1},
        }
        if admin:
            req["exactly"]["adminAccess"] = True
    status: dict[str, Any] = {}
    if allocation is not None:
        status["allocation"] = copy.deepcopy(allocation)
        if admin:
            for r in status["allocation"].get("devices", {}).get("results", []):
                r["adminAccess"] = True
    if reserved:
        status["reservedFor"] = [{"resource": "pods", "name": POD, "uid": POD_UID}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {"devices": {"requests": [req]}},
        "status": status,
    }


def device_class(broken: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if broken:
        spec["selectors"] = [{"cel": {"expression": f'device.attributes["{DRIVER}"].healthy'}}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": CLASS},
        "spec": spec,
    }


def worker_slice(*devices: str, node: str = NODE) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "resourceSliceCount": 1},
            "devices": [{"name": d} for d in devices or ("instance-1",)],
        },
    }


def pod(template: bool = False, status: bool = True) -> Any:
    rc = {"name": "my-resource", "resourceClaimTemplateName" if template else "resourceClaimName": CLAIM_NAME}
    st = (
        {"resourceClaimStatuses": [{"name": "my-resource", "resourceClaimName": CLAIM_NAME}]}
        if template and status
        else {}
    )
    return make_pod(POD, namespace=NS, uid=POD_UID, spec={"resourceClaims": [rc]}, status=st)


WORKER = node_info(make_node(NODE, labels={"kubernetes.io/hostname": NODE}))


def setup(
    *objs: Mapping[str, Any],
    gates: Mapping[str, bool] | None = None,
    args: DynamicResourcesArgs | None = None,
) -> tuple[DynamicResources, FakeCluster]:
    cluster = FakeCluster()
    for o in objs:
        cluster.add(o)
    h = FakeHandle(objects=cluster)
    h.client = cluster
    if gates:
        h.feature_gates = {**h.feature_gates, **gates}
    return DynamicResources(args, h), cluster


def status_of(cluster: FakeCluster, name: str = CLAIM_NAME) -> Any:
    return cluster.store[("ResourceClaim", NS, name)].get("status")


def run_to_filter(pl: DynamicResources, p: Any) -> tuple[CycleState, Status | None, Status | None]:
    state = CycleState()
    assert pl.pre_enqueue(p) is None
    _, pre = pl.pre_filter(state, p, [WORKER])
    if pre is not None:
        return state, pre, None
    return state, None, pl.filter(state, p, WORKER)


# -- the table ------------------------------------------------------------------------------------


def test_empty() -> None:
    pl, _ = setup()
    p = make_pod("foo")
    state = CycleState()
    assert pl.pre_filter(state, p, []) == (None, Status(Code.Skip))
    assert pl.post_filter(state, p, NodeToStatus())[1] == Status(
        Code.Unschedulable, "no new claims to deallocate"
    )
    assert pl.pre_bind_pre_flight(state, p, NODE) == Status(Code.Skip)


@pytest.mark.parametrize("template", [False, True], ids=["claim-reference", "claim-template"])
def test_claim_reference_and_template(template: bool) -> None:
    pl, cluster = setup(claim(allocation=ALLOCATION), claim("not-my-claim", owner=False))
    p = pod(template=template)
    state, pre, flt = run_to_filter(pl, p)
    assert (pre, flt) == (None, None)
    stale = FakeCluster()
    stale.store = dict(cluster.store)  # the informer before it sees the write
    assert pl.reserve(state, p, NODE) is None
    assert pl.pre_bind_pre_flight(state, p, NODE) is None
    assert pl.pre_bind(state, p, NODE) is None
    assert status_of(cluster) == {
        "allocation": ALLOCATION,
        "reservedFor": [{"resource": "pods", "name": POD, "uid": POD_UID}],
    }
    assert cluster.writes == ["status"]
    assumed = pl.manager.get_claim(stale, NS, CLAIM_NAME)
    assert assumed is not None and assumed.is_reserved_for(POD_UID)  # the assume cache has the write


@pytest.mark.parametrize(
    ("objs", "p", "message"),
    [
        (
            [claim(allocation=ALLOCATION)],
            pod(template=True, status=False),
            'pod "default/my-pod": ResourceClaim not created yet',
        ),
        (
            [claim(allocation=ALLOCATION, deleting=True)],
            pod(template=True),
            'resourceclaim "my-pod-my-resource" is being deleted',
        ),
        (
            [
                {
                    **claim(allocation=ALLOCATION),
                    "metadata": {
                        **claim()["metadata"],
                        "ownerReferences": [
                            {
                                "apiVersion": "v1",
                                "kind": "Pod",
                                "name": POD,
                                "uid": POD_UID + "123",
                                "controller": True,
                            }
                        ],
                    },
                }
            ],
            pod(template=True),
            "ResourceClaim default/my-pod-my-resource was not created for pod default/my-pod (pod is not owner)",
        ),
        ([], pod(), 'resourceclaim.resource.k8s.io "my-pod-my-resource" not found'),
    ],
    ids=["missing-claim", "deleted-claim", "wrong-claim", "claim-not-in-informer"],
)
def test_pre_enqueue(objs: list[Any], p: Any, message: str) -> None:
    pl, _ = setup(*objs)
    assert pl.pre_enqueue(p) == Status(Code.UnschedulableAndUnresolvable, message)


def test_no_resources() -> None:
    pl, _ = setup(claim(), device_class())
    state, pre, flt = run_to_filter(pl, pod())
    assert pre is None
    assert flt == Status(Code.UnschedulableAndUnresolvable, "cannot allocate all claims")
    assert pl.post_filter(state, pod(), NodeToStatus())[1] == Status(
        Code.Unschedulable, "still not schedulable"
    )


@pytest.mark.parametrize("finalizer", [False, True], ids=["with-resources", "with-resources-has-finalizer"])
def test_with_resources(finalizer: bool) -> None:
    pl, cluster = setup(claim(finalizer=finalizer), device_class(), worker_slice())
    p = pod()
    state, pre, flt = run_to_filter(pl, p)
    assert (pre, flt) == (None, None)
    assert pl.reserve(state, p, NODE) is None
    in_flight = pl.manager.in_flight()
    assert [c.name for c in in_flight] == [CLAIM_NAME]
    assert in_flight[0].allocation is not None and FINALIZER in in_flight[0].finalizers
    assert pl.pre_bind(state, p, NODE) is None
    stored = cluster.store[("ResourceClaim", NS, CLAIM_NAME)]
    assert stored["metadata"]["finalizers"] == [FINALIZER]
    assert stored["status"] == {
        "allocation": ALLOCATION,
        "reservedFor": [{"resource": "pods", "name": POD, "uid": POD_UID}],
    }
    assert cluster.writes == (["status"] if finalizer else ["update", "status"])
    assert pl.manager.in_flight() == []


def test_with_resources_finalizer_gets_removed_before_pre_bind() -> None:
    pl, cluster = setup(claim(finalizer=True), device_class(), worker_slice())
    p = pod()
    state, _, _ = run_to_filter(pl, p)
    assert pl.reserve(state, p, NODE) is None
    cluster.add(claim(finalizer=False))  # a newer resourceVersion without the finalizer
    assert pl.pre_bind(state, p, NODE) is None
    assert cluster.writes == ["update", "status"]  # PreBind read the claim and added the finalizer again
    assert cluster.store[("ResourceClaim", NS, CLAIM_NAME)]["metadata"]["finalizers"] == [FINALIZER]


def test_skip_bind_unreserve_drops_in_flight() -> None:
    pl, cluster = setup(claim(), device_class(), worker_slice())
    p = pod()
    state, _, _ = run_to_filter(pl, p)
    assert pl.reserve(state, p, NODE) is None
    assert len(pl.manager.in_flight()) == 1
    pl.unreserve(state, p, NODE)
    assert pl.manager.in_flight() == []
    assert cluster.writes == []


def test_exhausted_resources() -> None:
    other = claim("not-my-claim", owner=False, allocation=ALLOCATION)
    pl, _ = setup(claim(), other, device_class(), worker_slice())
    state, pre, flt = run_to_filter(pl, pod())
    assert flt == Status(Code.UnschedulableAndUnresolvable, "cannot allocate all claims")
    assert pl.post_filter(state, pod(), NodeToStatus())[1] == Status(
        Code.Unschedulable, "still not schedulable"
    )


def test_in_flight_allocation_blocks_the_device_for_the_next_pod() -> None:
    pl, _ = setup(claim(), claim("other", owner=False), device_class(), worker_slice())
    p = pod()
    state, _, flt = run_to_filter(pl, p)
    assert flt is None and pl.reserve(state, p, NODE) is None
    p2 = make_pod(
        "p2", namespace=NS, uid="5678", spec={"resourceClaims": [{"name": "r", "resourceClaimName": "other"}]}
    )
    state2 = CycleState()
    assert pl.pre_filter(state2, p2, [WORKER]) == (None, None)
    assert pl.filter(state2, p2, WORKER) == Status(
        Code.UnschedulableAndUnresolvable, "cannot allocate all claims"
    )


def test_request_admin_access_with_feature_gate() -> None:
    other = claim("not-my-claim", owner=False, allocation=ALLOCATION)
    pl, cluster = setup(claim(admin=True), other, device_class(), worker_slice())
    p = pod()
    state, pre, flt = run_to_filter(pl, p)
    assert (pre, flt) == (None, None)
    assert pl.reserve(state, p, NODE) is None
    assert pl.pre_bind(state, p, NODE) is None
    admin_alloc = copy.deepcopy(ALLOCATION)
    admin_alloc["devices"]["results"][0]["adminAccess"] = True
    assert status_of(cluster)["allocation"] == admin_alloc


def test_request_admin_access_without_feature_gate() -> None:
    pl, _ = setup(claim(admin=True), device_class(), worker_slice(), gates={"DRAAdminAccess": False})
    _, _, flt = run_to_filter(pl, pod())
    assert flt == Status(
        Code.Error,
        "claim default/my-pod-my-resource, request req-1: admin access is requested, but "
        "the feature is disabled",
    )


def test_structured_ignore_allocated_admin_access() -> None:
    other = claim("not-my-claim", owner=False, allocation=ALLOCATION, admin=True)
    pl, _ = setup(claim(), other, device_class(), worker_slice())
    _, pre, flt = run_to_filter(pl, pod())
    assert (pre, flt) == (None, None)


@pytest.mark.parametrize("broken", ["claim", "class"])
def test_cel_runtime_error(broken: str) -> None:
    c = claim()
    if broken == "claim":
        c["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
            {"cel": {"expression": f'device.attributes["{DRIVER}"].healthy'}}
        ]
    pl, _ = setup(c, device_class(broken=broken == "class"), worker_slice())
    _, _, flt = run_to_filter(pl, pod())
    who = "claim default/my-pod-my-resource" if broken == "claim" else f"class {CLASS}"
    assert flt == Status(
        Code.Error,
        f"{who}: selector #0 on device some-driver/worker/instance-1: CEL runtime error: "
        "no such key: healthy. Consider using CEL optional chaining (?), has() macro, "
        "or orValue() for optional fields",
    )


def test_missing_class() -> None:
    pl, _ = setup(claim())
    state, pre, _ = run_to_filter(pl, pod())
    assert pre == Status(
        Code.UnschedulableAndUnresolvable, f"request req-1: device class {CLASS} does not exist"
    )
    assert pl.post_filter(state, pod(), NodeToStatus())[1] == Status(
        Code.Unschedulable, "no new claims to deallocate"
    )


def test_wrong_topology_post_filter_deallocates() -> None:
    wrong = claim(
        allocation={
            "devices": {"results": []},
            "nodeSelector": node_selector("no-such-label", "no-such-value"),
        }
    )
    pl, cluster = setup(wrong)
    state, pre, flt = run_to_filter(pl, pod())
    assert pre is None
    assert flt == Status(Code.UnschedulableAndUnresolvable, "resourceclaim not available on the node")
    assert pl.post_filter(state, pod(), NodeToStatus())[1] == Status(
        Code.Unschedulable, "deallocation of ResourceClaim completed"
    )
    assert status_of(cluster) == {}


def test_good_topology_and_bind_failure_unreserve() -> None:
    good = claim(
        allocation={"devices": {"results": []}, "nodeSelector": node_selector("kubernetes.io/hostname", NODE)}
    )
    pl, cluster = setup(good)
    p = pod()
    state, pre, flt = run_to_filter(pl, p)
    assert (pre, flt) == (None, None)
    assert pl.reserve(state, p, NODE) is None
    assert pl.pre_bind(state, p, NODE) is None
    assert status_of(cluster)["reservedFor"] == [{"resource": "pods", "name": POD, "uid": POD_UID}]
    pl.unreserve(state, p, NODE)  # as after a failed Bind
    assert "reservedFor" not in status_of(cluster)


def test_reserved_okay() -> None:
    pl, cluster = setup(claim(allocation=ALLOCATION, reserved=True))
    p = pod()
    state, pre, flt = run_to_filter(pl, p)
    assert (pre, flt) == (None, None)
    assert pl.reserve(state, p, NODE) is None
    assert pl.pre_bind(state, p, NODE) is None
    assert cluster.writes == []


def test_claim_with_unknown_device_class() -> None:
    pl, _ = setup(claim(class_name="does-not-exist"))
    _, pre, _ = run_to_filter(pl, pod())
    assert pre == Status(
        Code.UnschedulableAndUnresolvable, "request req-1: device class does-not-exist does not exist"
    )


def test_claim_with_prioritized_list_feature_disabled() -> None:
    pl, _ = setup(claim(first_available=True), device_class(), gates={"DRAPrioritizedList": False})
    _, pre, _ = run_to_filter(pl, pod())
    assert pre == Status(
        Code.UnschedulableAndUnresolvable,
        "resource claim default/my-pod-my-resource, request "
        "req-1: has subrequests, but the DRAPrioritizedList "
        "feature is disabled",
    )


def test_claim_in_flight_for_another_pod() -> None:
    pl, _ = setup(claim(), device_class(), worker_slice())
    p = pod()
    state, _, _ = run_to_filter(pl, p)
    assert pl.reserve(state, p, NODE) is None
    _, pre = pl.pre_filter(CycleState(), p, [WORKER])
    assert pre == Status(
        Code.UnschedulableAndUnresolvable,
        "resource claim default/my-pod-my-resource is in the process of being allocated",
    )


def test_timeout() -> None:
    c = claim()
    c["spec"]["devices"]["requests"] = [
        {"name": f"req-{i}", "exactly": {"deviceClassName": CLASS, "count": 1}} for i in range(5)
    ]
    pl, _ = setup(
        c,
        device_class(),
        worker_slice("instance-1", "instance-2", "instance-3", "instance-4"),
        args=DynamicResourcesArgs(filter_timeout=1e-9),
    )
    _, _, flt = run_to_filter(pl, pod())
    assert flt == Status(Code.UnschedulableAndUnresolvable, "timed out trying to allocate devices")


def test_timeout_disabled_by_gate() -> None:
    c = claim()
    c["spec"]["devices"]["requests"] = [
        {"name": f"req-{i}", "exactly": {"deviceClassName": CLASS, "count": 1}} for i in range(5)
    ]
    pl, _ = setup(
        c,
        device_class(),
        worker_slice("instance-1", "instance-2", "instance-3", "instance-4"),
        args=DynamicResourcesArgs(filter_timeout=1e-9),
        gates={"DRASchedulerFilterTimeout": False},
    )
    _, _, flt = run_to_filter(pl, pod())
    assert flt == Status(Code.UnschedulableAndUnresolvable, "cannot allocate all claims")


def test_score_prefers_earlier_subrequest() -> None:
    c = claim()
    c["spec"]["devices"]["requests"] = [
        {
            "name": "req-1",
            "firstAvailable": [
                {"name": "big", "deviceClassName": CLASS, "count": 2},
                {"name": "small", "deviceClassName": CLASS, "count": 1},
            ],
        }
    ]
    two = node_info(make_node("two"))
    slices = [worker_slice("instance-1"), {**worker_slice("a", "b", node="two")}]
    pl, _ = setup(c, device_class(), *slices)
    p = pod()
    state = CycleState()
    assert pl.pre_filter(state, p, [WORKER, two]) == (None, None)
    assert pl.filter(state, p, WORKER) is None and pl.filter(state, p, two) is None
    scores = [NodeScore(NODE, pl.score(state, p, WORKER)[0]), NodeScore("two", pl.score(state, p, two)[0])]
    assert [s.score for s in scores] == [7, 8]
    assert pl.normalize_score(state, p, scores) is None
    assert [s.score for s in scores] == [87, 100]


def test_queueing_hints() -> None:
    pl, _ = setup(claim(), device_class())
    p = pod()
    old = claim()
    new = claim(allocation=ALLOCATION)
    new["metadata"]["uid"] = old["metadata"]["uid"]
    assert pl._after_claim_change(p, old, new) == QueueingHint.Queue
    assert pl._after_claim_change(p, old, old) == QueueingHint.QueueSkip
    other_old, other_new = claim("x", allocation=ALLOCATION), claim("x")
    assert pl._after_claim_change(p, other_old, other_new) == QueueingHint.Queue  # deallocated
    assert pl._after_claim_change(p, claim("x"), claim("x", reserved=True)) == QueueingHint.QueueSkip
    assert pl._after_pod_change(p, None, pod(template=True)) == QueueingHint.Queue
    assert pl._after_pod_change(p, None, make_pod("other")) == QueueingHint.QueueSkip


def test_args() -> None:
    assert decode_args(DynamicResourcesArgs, None, "args").filter_timeout == 10.0
    assert decode_args(DynamicResourcesArgs, {"filterTimeout": "1m"}, "args").filter_timeout == 60.0
    assert decode_args(DynamicResourcesArgs, {"filterTimeout": "0s"}, "args").filter_timeout == 0.0
