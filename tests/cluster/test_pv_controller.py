"""The embedded cluster's PV controller (``pv_controller.go`` ``bind``): an update that sets a PV's
``claimRef`` completes the binding with the PV and PVC writes kube-controller-manager would make."""

from __future__ import annotations

import copy

from plugin_volume_support import pv, pvc

from kubesched.clock import VirtualClock
from kubesched.cluster.memory import MemoryCluster
from kubesched.cluster.pv_controller import claim_ref_changed, complete_binding


def _cluster(*, pv_controller: bool = True) -> MemoryCluster:
    c = MemoryCluster(VirtualClock(start=1_700_000_000.0), pv_controller=pv_controller)
    c.create(pvc("data", storage="5Gi"))
    c.create(pv("pv-a", storage="8Gi"))
    return c


def _claim(c: MemoryCluster) -> dict:
    claim = c.get("PersistentVolumeClaim", "default", "data")
    return {"kind": "PersistentVolumeClaim", "namespace": "default", "name": "data", "apiVersion": "v1",
            "uid": claim["metadata"]["uid"], "resourceVersion": claim["metadata"]["resourceVersion"]}


def _set_claim_ref(c: MemoryCluster) -> dict:
    obj = copy.deepcopy(c.get("PersistentVolume", "", "pv-a"))
    obj["spec"]["claimRef"] = _claim(c)
    return c.update(obj)


def test_setting_claim_ref_binds_pv_and_claim() -> None:
    c = _cluster()
    returned = _set_claim_ref(c)
    assert returned["spec"]["claimRef"]["name"] == "data"
    stored_pv = c.get("PersistentVolume", "", "pv-a")
    assert stored_pv["status"]["phase"] == "Bound"
    claim = c.get("PersistentVolumeClaim", "default", "data")
    assert claim["spec"]["volumeName"] == "pv-a"
    assert claim["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "yes",
                                                "pv.kubernetes.io/bound-by-controller": "yes"}
    assert claim["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "8Gi"}}


def test_no_binding_without_controller_or_for_a_claim_bound_elsewhere() -> None:
    c = _cluster(pv_controller=False)
    _set_claim_ref(c)
    assert c.get("PersistentVolume", "", "pv-a")["status"]["phase"] == "Available"
    assert "volumeName" not in c.get("PersistentVolumeClaim", "default", "data")["spec"]

    c = _cluster()
    claim = copy.deepcopy(c.get("PersistentVolumeClaim", "default", "data"))
    claim["spec"]["volumeName"] = "pv-other"
    c.update(claim)
    _set_claim_ref(c)
    assert c.get("PersistentVolume", "", "pv-a")["status"]["phase"] == "Available"
    assert c.get("PersistentVolumeClaim", "default", "data")["spec"]["volumeName"] == "pv-other"


def test_uid_mismatch_and_missing_claim_are_left_alone() -> None:
    c = _cluster(pv_controller=False)
    bad = copy.deepcopy(c.get("PersistentVolume", "", "pv-a"))
    bad["spec"]["claimRef"] = {"namespace": "default", "name": "data", "uid": "not-the-uid"}
    assert complete_binding(c, bad) is False
    bad["spec"]["claimRef"] = {"namespace": "default", "name": "missing"}
    assert complete_binding(c, bad) is False
    assert c.get("PersistentVolume", "", "pv-a")["status"]["phase"] == "Available"


def test_claim_ref_changed() -> None:
    base = pv("pv-a")
    with_ref = pv("pv-a", claim=("default", "data"))
    assert claim_ref_changed(base, with_ref) is True
    assert claim_ref_changed(with_ref, with_ref) is False
    assert claim_ref_changed(with_ref, pv("pv-a", claim=("default", "other"))) is True
    assert claim_ref_changed(with_ref, base) is False
