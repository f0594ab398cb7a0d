"""VolumeBinding: PreFilter rejections, per-node Filter reasons, Reserve/Unreserve assumptions and
PreBind writes (``pkg/scheduler/framework/plugins/volumebinding``)."""

from __future__ import annotations

import pytest
from plugin_volume_support import FakeStore, handle_with, pv, pvc, pvc_volumes, storage_class

from kubesched.config.args import decode_args
from kubesched.errors import ConfigError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins.volumebinding.volume_binding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    VolumeBinding,
    VolumeBindingArgs,
)
from kubesched.testing import make_node, make_pod, node_info, snapshot_of

N1 = make_node("n1", labels={"topology.kubernetes.io/zone": "a"})
N2 = make_node("n2", labels={"topology.kubernetes.io/zone": "b"})


def _plugin(objects: list[dict]) -> tuple[VolumeBinding, FakeStore]:
    store = FakeStore(objects)
    snap = snapshot_of([node_info(N1), node_info(N2)])
    return VolumeBinding(None, handle_with(store, snap)), store


def _filter_all(pl: VolumeBinding, pod, state: CycleState) -> dict[str, Status | None]:
    return {n.name: pl.filter(state, pod, node_info(n)) for n in (N1, N2)}


def _wffc_objects() -> list[dict]:
    return [
        storage_class("local"),
        pv("pv-big", storage="20Gi", hostnames=["n1"]),
        pv("pv-small", storage="5Gi", hostnames=["n1"]),
        pv("pv-other-class", storage="2Gi", sc="fast", hostnames=["n1"]),
        pvc("data"),
        pvc("data2"),
    ]


def test_wait_for_first_consumer_match_reserve_and_pre_bind() -> None:
    pl, store = _plugin(_wffc_objects())
    pod = make_pod("web", spec=pvc_volumes("data"))
    state = CycleState()
    assert pl.pre_filter(state, pod, []) == (None, None)
    verdicts = _filter_all(pl, pod, state)
    assert verdicts["n1"] is None
    s2 = verdicts["n2"]
    assert s2 is not None and s2.code == Code.UnschedulableAndUnresolvable
    assert s2.reasons == [ERR_REASON_BIND_CONFLICT]
    assert s2.message() == "node(s) didn't find available persistent volumes to bind"

    assert pl.reserve(state, pod, "n1") is None
    assert pl.pre_bind_pre_flight(state, pod, "n1") is None

    # a second pod in the same run does not get the PV assumed for the first one: smallest left is pv-big
    pod2 = make_pod("web2", spec=pvc_volumes("data2"))
    st2 = CycleState()
    pl.pre_filter(st2, pod2, [])
    assert pl.filter(st2, pod2, node_info(N1)) is None
    assert pl.reserve(st2, pod2, "n1") is None
    pl.unreserve(st2, pod2, "n1")

    claim_rv = store.get("PersistentVolumeClaim", "default", "data")["metadata"]["resourceVersion"]
    assert pl.pre_bind(state, pod, "n1") is None
    stored_pv = store.get("PersistentVolume", "", "pv-small")
    assert stored_pv["spec"]["claimRef"] == {
        "kind": "PersistentVolumeClaim",
        "namespace": "default",
        "name": "data",
        "apiVersion": "v1",
        "uid": "uid-pvc-data",
        "resourceVersion": claim_rv,
    }
    assert store.get("PersistentVolume", "", "pv-big").get("spec", {}).get("claimRef") is None
    assert stored_pv["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert stored_pv["status"]["phase"] == "Bound"
    claim = store.get("PersistentVolumeClaim", "default", "data")
    assert claim["spec"]["volumeName"] == "pv-small"
    assert claim["status"]["phase"] == "Bound"
    assert claim["status"]["capacity"] == {"storage": "5Gi"}
    assert claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    assert pl.filter(st2, pod2, node_info(N1)) is None  # state of pod2 unchanged by the writes

    # next cycle of pod2 sees pv-small taken: picks pv-big
    st3 = CycleState()
    pl.pre_filter(st3, pod2, [])
    assert pl.filter(st3, pod2, node_info(N1)) is None
    assert pl.reserve(st3, pod2, "n1") is None
    assert pl.pre_bind(st3, pod2, "n1") is None
    assert store.get("PersistentVolumeClaim", "default", "data2")["spec"]["volumeName"] == "pv-big"

    # now the first pod's claims are bound: PreFilter narrows to the local PV's node, and nothing to bind
    st4 = CycleState()
    res, status = pl.pre_filter(st4, pod, [node_info(N1), node_info(N2)])
    assert status is None and res is not None and res.node_names == {"n1"}
    assert pl.filter(st4, pod, node_info(N1)) is None
    assert pl.reserve(st4, pod, "n1") is None
    assert pl.pre_bind_pre_flight(st4, pod, "n1") == Status(Code.Skip)


def test_second_pod_in_same_run_does_not_take_assumed_pv() -> None:
    pl, _ = _plugin([storage_class("local"), pv("pv-only", hostnames=["n1"]), pvc("data"), pvc("data2")])
    pod, pod2 = make_pod("a", spec=pvc_volumes("data")), make_pod("b", spec=pvc_volumes("data2"))
    s1 = CycleState()
    pl.pre_filter(s1, pod, [])
    assert pl.filter(s1, pod, node_info(N1)) is None
    pl.reserve(s1, pod, "n1")
    s2 = CycleState()
    pl.pre_filter(s2, pod2, [])
    st = pl.filter(s2, pod2, node_info(N1))
    assert st is not None and st.reasons == [ERR_REASON_BIND_CONFLICT]
    # Unreserve reverts the assumption
    pl.unreserve(s1, pod, "n1")
    s3 = CycleState()
    pl.pre_filter(s3, pod2, [])
    assert pl.filter(s3, pod2, node_info(N1)) is None


def test_smallest_fitting_pv_is_chosen_with_filters() -> None:
    objs = [
        storage_class("local"),
        pv("too-small", storage="512Mi", hostnames=["n1"]),
        pv("rox-only", storage="2Gi", modes=["ReadOnlyMany"], hostnames=["n1"]),
        pv("released", storage="2Gi", hostnames=["n1"], phase="Released"),
        pv("taken", storage="2Gi", hostnames=["n1"], claim=("default", "other")),
        pv("fits", storage="3Gi", hostnames=["n1"]),
        pv("bigger", storage="4Gi", hostnames=["n1"]),
        pvc("data"),
    ]
    pl, store = _plugin(objs)
    pod = make_pod("web", spec=pvc_volumes("data"))
    state = CycleState()
    pl.pre_filter(state, pod, [])
    assert pl.filter(state, pod, node_info(N1)) is None
    pl.reserve(state, pod, "n1")
    pl.pre_bind(state, pod, "n1")
    assert store.get("PersistentVolumeClaim", "default", "data")["spec"]["volumeName"] == "fits"


def test_label_selector_restricts_matching() -> None:
    objs = [
        storage_class("local"),
        pv("plain", hostnames=["n1"]),
        pv("gold", hostnames=["n1"], labels={"tier": "gold"}),
        pvc("data", selector={"matchLabels": {"tier": "gold"}}),
    ]
    pl, store = _plugin(objs)
    pod = make_pod("web", spec=pvc_volumes("data"))
    state = CycleState()
    pl.pre_filter(state, pod, [])
    pl.filter(state, pod, node_info(N1))
    pl.reserve(state, pod, "n1")
    assert pl.pre_bind(state, pod, "n1") is None
    assert store.get("PersistentVolumeClaim", "default", "data")["spec"]["volumeName"] == "gold"


def test_immediate_unbound_claim() -> None:
    pl, _ = _plugin([storage_class("std", mode="Immediate"), pvc("data", sc="std")])
    pod = make_pod("web", spec=pvc_volumes("data"))
    res, status = pl.pre_filter(CycleState(), pod, [])
    assert res is None
    assert status == Status(
        Code.UnschedulableAndUnresolvable, "pod has unbound immediate PersistentVolumeClaims"
    )


@pytest.mark.parametrize("sc", [None, "does-not-exist"])
def test_claim_without_class_counts_as_immediate(sc: str | None) -> None:
    pl, _ = _plugin([pvc("data", sc=sc)])
    _, status = pl.pre_filter(CycleState(), make_pod("web", spec=pvc_volumes("data")), [])
    assert status == Status(
        Code.UnschedulableAndUnresolvable, "pod has unbound immediate PersistentVolumeClaims"
    )


def test_missing_claim() -> None:
    pl, _ = _plugin([])
    _, status = pl.pre_filter(CycleState(), make_pod("web", spec=pvc_volumes("nope")), [])
    assert status == Status(Code.UnschedulableAndUnresolvable, 'persistentvolumeclaim "nope" not found')


def test_missing_ephemeral_claim_and_lost_and_deleting() -> None:
    lost = pvc("lost", volume_name="gone")
    lost["status"]["phase"] = "Lost"
    deleting = pvc("del")
    deleting["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    pl, _ = _plugin([lost, deleting])
    eph = make_pod("web", spec={"volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}]})
    _, s = pl.pre_filter(CycleState(), eph, [])
    assert s == Status(
        Code.UnschedulableAndUnresolvable,
        'waiting for ephemeral volume controller to create the persistentvolumeclaim "web-scratch"',
    )
    _, s = pl.pre_filter(CycleState(), make_pod("a", spec=pvc_volumes("lost")), [])
    assert s == Status(
        Code.UnschedulableAndUnresolvable,
        'persistentvolumeclaim "lost" bound to non-existent persistentvolume "gone"',
    )
    _, s = pl.pre_filter(CycleState(), make_pod("b", spec=pvc_volumes("del")), [])
    assert s == Status(Code.UnschedulableAndUnresolvable, 'persistentvolumeclaim "del" is being deleted')


def test_no_claims_skips_and_pre_bind_is_skipped() -> None:
    pl, _ = _plugin([])
    pod = make_pod("web")
    state = CycleState()
    assert pl.pre_filter(state, pod, []) == (None, Status(Code.Skip))
    assert pl.reserve(state, pod, "n1") is None
    assert pl.pre_bind_pre_flight(state, pod, "n1") == Status(Code.Skip)
    assert pl.pre_bind(state, pod, "n1") is None


def test_bound_claims_node_affinity_and_missing_pv() -> None:
    objs = [
        storage_class("local"),
        pv("pv-n1", hostnames=["n1"], claim=("default", "a")),
        pvc("a", volume_name="pv-n1", bound=True),
        pvc("b", volume_name="ghost", bound=True),
    ]
    pl, _ = _plugin(objs)
    pod = make_pod("web", spec=pvc_volumes("a"))
    state = CycleState()
    res, status = pl.pre_filter(state, pod, [node_info(N1), node_info(N2)])
    assert status is None and res is not None and res.node_names == {"n1"}
    v = _filter_all(pl, pod, state)
    assert v["n1"] is None
    assert v["n2"] == Status(Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_CONFLICT)
    assert ERR_REASON_NODE_CONFLICT == "node(s) didn't match PersistentVolume's node affinity"

    pod_b = make_pod("web-b", spec=pvc_volumes("b"))
    sb = CycleState()
    res, status = pl.pre_filter(sb, pod_b, [])
    assert (res, status) == (None, None)
    st = pl.filter(sb, pod_b, node_info(N1))
    assert st == Status(
        Code.UnschedulableAndUnresolvable,
        "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",
    )
    assert st.reasons == [ERR_REASON_PV_NOT_EXIST]


def test_all_reasons_appended_in_upstream_order() -> None:
    objs = [
        storage_class("local"),
        pv("pv-n1", hostnames=["n1"], claim=("default", "a")),
        pvc("a", volume_name="pv-n1", bound=True),
        pvc("c"),
    ]
    pl, _ = _plugin(objs)
    pod = make_pod("web", spec=pvc_volumes("a", "c"))
    state = CycleState()
    pl.pre_filter(state, pod, [])
    st = pl.filter(state, pod, node_info(N2))
    assert st is not None and st.code == Code.UnschedulableAndUnresolvable
    assert st.reasons == [ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT]


def test_dynamic_provisioning_topology_and_selected_node() -> None:
    objs = [storage_class("ebs", provisioner="ebs.csi.aws.com", allowed_zones=["a"]), pvc("data", sc="ebs")]
    pl, store = _plugin(objs)
    pod = make_pod("web", spec=pvc_volumes("data"))
    state = CycleState()
    assert pl.pre_filter(state, pod, []) == (None, None)
    v = _filter_all(pl, pod, state)
    assert v["n1"] is None
    assert v["n2"] == Status(Code.UnschedulableAndUnresolvable, ERR_REASON_BIND_CONFLICT)
    assert pl.reserve(state, pod, "n1") is None
    assert pl.pre_bind_pre_flight(state, pod, "n1") is None
    assert pl.pre_bind(state, pod, "n1") is None
    # PreBind wrote only the annotation; the embedded provisioner and PV controller did the rest
    assert [w for w in store.writes if w[1] == "PersistentVolumeClaim" and w[0] == "update"][0] == (
        "update",
        "PersistentVolumeClaim",
        "default",
        "data",
    )
    claim = store.get("PersistentVolumeClaim", "default", "data")
    assert claim["metadata"]["annotations"] == {
        "volume.kubernetes.io/selected-node": "n1",
        "pv.kubernetes.io/bind-completed": "yes",
        "pv.kubernetes.io/bound-by-controller": "yes",
    }
    assert claim["spec"]["volumeName"] == "pvc-uid-pvc-data" and claim["status"]["phase"] == "Bound"
    vol = store.get("PersistentVolume", "", "pvc-uid-pvc-data")
    assert vol["metadata"]["annotations"] == {"pv.kubernetes.io/provisioned-by": "ebs.csi.aws.com"}
    assert vol["spec"]["claimRef"]["uid"] == "uid-pvc-data" and vol["status"]["phase"] == "Bound"
    assert vol["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"] == [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}
    ]


def test_pre_bind_waits_for_provisioning_until_the_bind_timeout() -> None:
    """Without a provisioner the claim stays Pending with its selected node, and PreBind gives up
    after bindTimeoutSeconds as upstream's does."""
    objs = [storage_class("ebs", provisioner="ebs.csi.aws.com", allowed_zones=["a"]), pvc("data", sc="ebs")]
    store = FakeStore(objs)
    handle = handle_with(store, snapshot_of([node_info(N1), node_info(N2)]))
    handle.client.controller = None  # nobody provisions
    pl = VolumeBinding(VolumeBindingArgs(bind_timeout_seconds=0), handle)
    pod = make_pod("web", spec=pvc_volumes("data"))
    state = CycleState()
    pl.pre_filter(state, pod, [])
    _filter_all(pl, pod, state)
    assert pl.reserve(state, pod, "n1") is None
    st = pl.pre_bind(state, pod, "n1")
    assert st is not None and (st.code, st.message()) == (
        Code.Error,
        "binding volumes: context deadline exceeded",
    )
    claim = store.get("PersistentVolumeClaim", "default", "data")
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "n1"
    assert "volumeName" not in claim["spec"] and claim["status"]["phase"] == "Pending"
    # the annotated claim now only fits the selected node
    s2 = CycleState()
    pl.pre_filter(s2, pod, [])
    v = _filter_all(pl, pod, s2)
    assert v["n1"] is None and v["n2"] == Status(Code.UnschedulableAndUnresolvable, ERR_REASON_BIND_CONFLICT)


def test_no_provisioner_class_cannot_provision() -> None:
    pl, _ = _plugin([storage_class("local"), pvc("data")])
    pod = make_pod("web", spec=pvc_volumes("data"))
    state = CycleState()
    pl.pre_filter(state, pod, [])
    assert _filter_all(pl, pod, state) == {
        "n1": Status(Code.UnschedulableAndUnresolvable, ERR_REASON_BIND_CONFLICT),
        "n2": Status(Code.UnschedulableAndUnresolvable, ERR_REASON_BIND_CONFLICT),
    }


def test_storage_capacity() -> None:
    objs = [
        storage_class("csi", provisioner="csi.example.com"),
        pvc("data", sc="csi", storage="10Gi"),
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": {"name": "csi.example.com"},
            "spec": {"storageCapacity": True},
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIStorageCapacity",
            "metadata": {"name": "cap-a", "namespace": "kube-system"},
            "storageClassName": "csi",
            "capacity": "100Gi",
            "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}},
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIStorageCapacity",
            "metadata": {"name": "cap-b", "namespace": "kube-system"},
            "storageClassName": "csi",
            "capacity": "100Gi",
            "maximumVolumeSize": "5Gi",
            "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "b"}},
        },
    ]
    pl, _ = _plugin(objs)
    pod = make_pod("web", spec=pvc_volumes("data"))
    state = CycleState()
    pl.pre_filter(state, pod, [])
    v = _filter_all(pl, pod, state)
    assert v["n1"] is None
    assert v["n2"] == Status(Code.UnschedulableAndUnresolvable, "node(s) did not have enough free storage")
    assert v["n2"].reasons == [ERR_REASON_NOT_ENOUGH_SPACE]


def test_pre_bind_conflict_is_error_and_reverts() -> None:
    pl, store = _plugin([storage_class("local"), pv("pv1", hostnames=["n1"]), pvc("data")])
    pod = make_pod("web", spec=pvc_volumes("data"))
    state = CycleState()
    pl.pre_filter(state, pod, [])
    pl.filter(state, pod, node_info(N1))
    pl.reserve(state, pod, "n1")
    store.put(pv("pv1", hostnames=["n1"]))  # someone else changed the PV meanwhile
    st = pl.pre_bind(state, pod, "n1")
    assert st is not None and st.code == Code.Error
    assert st.message().startswith('Operation cannot be fulfilled on persistentvolumes "pv1"')
    assert len(pl.pv_cache) == 0


def test_events() -> None:
    pl, _ = _plugin([])
    resources = [e.event.resource for e in pl.events_to_register()]
    assert resources == [
        "storage.k8s.io/StorageClass",
        "PersistentVolumeClaim",
        "PersistentVolume",
        "Node",
        "storage.k8s.io/CSINode",
        "storage.k8s.io/CSIDriver",
        "storage.k8s.io/CSIStorageCapacity",
    ]
    pvc_hint = pl.events_to_register()[1].queueing_hint_fn
    assert pvc_hint is not None
    pod = make_pod("web", spec=pvc_volumes("data"))
    assert pvc_hint(pod, None, pvc("data")) == 1
    assert pvc_hint(pod, None, pvc("other")) == 0
    assert pvc_hint(pod, None, pvc("data", namespace="x")) == 0


def test_args() -> None:
    a = decode_args(VolumeBindingArgs, None, "args")
    assert a.bind_timeout_seconds == 600
    assert [(p.utilization, p.score) for p in a.shape] == [(0, 10), (100, 0)]
    assert decode_args(VolumeBindingArgs, {"bindTimeoutSeconds": 0}, "args").bind_timeout_seconds == 0
    with pytest.raises(ConfigError, match="should not be a negative value"):
        decode_args(VolumeBindingArgs, {"bindTimeoutSeconds": -1}, "args")
    with pytest.raises(ConfigError, match="increasing"):
        decode_args(
            VolumeBindingArgs,
            {"shape": [{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]},
            "args",
        )


def test_end_to_end_in_embedded_cluster() -> None:
    """Through the whole scheduler on the embedded cluster: two WaitForFirstConsumer claims get the two
    local PVs (one per node), the third finds none; PreBind's writes land in the store."""
    from kubesched.embedded.manifests import Manifest
    from kubesched.modes.simulate.run import run_simulation
    from kubesched.testing import node_manifest, pod_manifest

    objs = [
        node_manifest("n1"),
        node_manifest("n2"),
        storage_class("local"),
        pv("pv-a", storage="5Gi", hostnames=["n1"]),
        pv("pv-b", storage="5Gi", hostnames=["n2"]),
        pvc("d1"),
        pvc("d2"),
        pvc("d3"),
        pod_manifest("p1", spec=pvc_volumes("d1")),
        pod_manifest("p2", spec=pvc_volumes("d2")),
        pod_manifest("p3", spec=pvc_volumes("d3")),
    ]
    res = run_simulation([Manifest(o, "t.yaml", i) for i, o in enumerate(objs)], None, seed=3)
    out = {p.name: p for p in res.pods}
    host_of_pv = {"pv-a": "n1", "pv-b": "n2"}
    used = set()
    for pod, claim in (("p1", "d1"), ("p2", "d2")):
        assert out[pod].status == "Scheduled"
        c = res.cluster.get("PersistentVolumeClaim", "default", claim)
        assert c["status"]["phase"] == "Bound"
        assert host_of_pv[c["spec"]["volumeName"]] == out[pod].node
        v = res.cluster.get("PersistentVolume", "", c["spec"]["volumeName"])
        assert v["spec"]["claimRef"]["name"] == claim and v["status"]["phase"] == "Bound"
        used.add(c["spec"]["volumeName"])
    assert used == {"pv-a", "pv-b"}
    assert out["p3"].status == "Unschedulable"
    assert out["p3"].message.startswith(
        "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind."
    )


def test_prefilter_maps_pv_hostnames_to_node_names_through_labels() -> None:
    """A PV pinned to ``kubernetes.io/hostname In [host-a]`` makes the node labelled ``host-a`` the
    candidate, whatever its name (``worker-a``); a node named ``host-a`` without that label is not."""
    pl, _ = _plugin(
        [
            storage_class("local"),
            pv("pv-a", hostnames=["host-a"], claim=("default", "data"), phase="Bound"),
            pvc("data", volume_name="pv-a", bound=True),
        ]
    )
    worker = make_node("worker-a", labels={"kubernetes.io/hostname": "host-a"})
    named = make_node("host-a", labels={"kubernetes.io/hostname": "host-a-1"})
    other = make_node("worker-b")
    pod = make_pod("p", spec=pvc_volumes("data"))
    res, status = pl.pre_filter(CycleState(), pod, [node_info(worker), node_info(named), node_info(other)])
    assert status is None and res is not None and res.node_names == {"worker-a"}
