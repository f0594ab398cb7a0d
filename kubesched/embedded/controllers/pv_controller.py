"""The embedded cluster's PersistentVolume controller: what kube-controller-manager's PV binder
(``pkg/controller/volume/persistentvolume/pv_controller.go``) and an external provisioner do once
the scheduler's VolumeBinding has written its choice, so that ``simulate``, ``replay`` and
``serve`` bind claims as a real cluster does (VolumeBinding's PreBind waits for it).

* A PV whose ``spec.claimRef`` names an existing claim (same uid when the ref has one) that is not
  bound elsewhere (``syncVolume`` / ``bind``): the claim gets ``spec.volumeName``, the annotations
  ``pv.kubernetes.io/bind-completed: "yes"`` and (when the controller set the volume name)
  ``pv.kubernetes.io/bound-by-controller: "yes"``; the PV ``status.phase: Bound``; the claim
  ``status.phase: Bound`` with the PV's ``accessModes`` and ``capacity``.
* A claim that names a PV (``spec.volumeName``) without a claimRef (pre-bound by the user): the PV
  gets the claimRef (with the claim's uid), then as above.
* A claim annotated ``volume.kubernetes.io/selected-node`` (delayed binding, chosen by the
  scheduler) without a volume, whose StorageClass has a provisioner other than
  ``kubernetes.io/no-provisioner``: a PV is provisioned as external-provisioner does --
  ``pvc-<claim uid>``, the requested capacity, the claim's access modes and volume mode, the class's
  ``reclaimPolicy`` (default ``Delete``), ``pv.kubernetes.io/provisioned-by: <provisioner>``, a
  CSI source (driver = provisioner), node affinity ``kubernetes.io/hostname In [<the selected
  node's hostname label>]`` and a claimRef to the claim; then it is bound as above.

Everything else (unbound PVs, reclaiming released volumes, Lost claims, expansion) is left alone.
The controller reacts to the store's own watch events, synchronously: by the time a write that
makes a binding possible returns, the binding is complete.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import Any

from kubesched.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from kubesched.client.client import ClusterClient, Subscription, WatchEvent
from kubesched.errors import KubeschedError, NotFoundError

__all__ = ["ANN_PROVISIONED_BY", "PVController"]

log = logging.getLogger(__name__)

ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
HOSTNAME_LABEL = "kubernetes.io/hostname"

Obj = dict[str, Any]


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, Mapping) else {}


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    s = obj.get("spec")
    return s if isinstance(s, Mapping) else {}


def _writable(obj: Obj, field: str) -> Obj:
    """``obj[field]`` as a dict to write into (a missing or malformed one, e.g. ``spec: null``,
    becomes a new empty dict, as it reads)."""
    value = obj.get(field)
    if not isinstance(value, dict):
        value = obj[field] = dict(value) if isinstance(value, Mapping) else {}
    return value


class PVController:
    """Binds claims and volumes of ``cluster`` (module docstring; any ClusterClient, in practice the
    embedded :class:`~kubesched.embedded.store.MemoryCluster`). :meth:`start` subscribes to
    PersistentVolume and PersistentVolumeClaim changes (existing objects are reconciled at once);
    :meth:`stop` ends it. :meth:`sync_all` reconciles every object once (for stores without watches)."""

    def __init__(self, cluster: ClusterClient) -> None:
        self.cluster = cluster
        self._subs: list[Subscription] = []

    def start(self) -> PVController:
        self._subs = [
            self.cluster.watch("PersistentVolume", None, self._on_event),
            self.cluster.watch("PersistentVolumeClaim", None, self._on_event),
        ]
        return self

    def stop(self) -> None:
        for s in self._subs:
            s.stop()
        self._subs = []

    def sync_all(self) -> None:
        for pvc in self.cluster.list("PersistentVolumeClaim").items:
            self.sync_claim(pvc)
        for pv in self.cluster.list("PersistentVolume").items:
            self.sync_volume(pv)

    def _on_event(self, ev: WatchEvent) -> None:
        if ev.type not in ("ADDED", "MODIFIED"):
            return
        try:
            if ev.kind == "PersistentVolume":
                self.sync_volume(ev.object)
            else:
                self.sync_claim(ev.object)
        except (KubeschedError, ValueError) as e:
            meta = _meta(ev.object)
            log.warning(
                "PV controller: %s %s/%s: %s", ev.kind, meta.get("namespace") or "", meta.get("name"), e
            )

    # ------------------------------------------------------------------ volumes

    def sync_volume(self, pv_obj: Mapping[str, Any]) -> None:
        """Complete the binding a PV's claimRef asks for (no-op when there is none or it is done)."""
        pv = PersistentVolume.from_obj(pv_obj)
        ref = pv.claim_ref
        if ref is None or pv.deleting:
            return
        try:
            claim_obj = self.cluster.get("PersistentVolumeClaim", ref.namespace or "default", ref.name)
        except NotFoundError:
            return
        claim = PersistentVolumeClaim.from_obj(claim_obj)
        if not pv.bound_to(claim) or claim.deleting:
            return
        if claim.volume_name not in ("", pv.name):
            return  # the claim is bound to another volume
        if claim.volume_name != pv.name or ANN_BIND_COMPLETED not in claim.annotations:
            new = copy.deepcopy(dict(claim_obj))
            meta = _writable(new, "metadata")
            ann = meta.get("annotations")
            ann = dict(ann) if isinstance(ann, Mapping) else {}
            if not claim.volume_name:
                _writable(new, "spec")["volumeName"] = pv.name
                ann[ANN_BOUND_BY_CONTROLLER] = "yes"
            ann[ANN_BIND_COMPLETED] = "yes"
            meta["annotations"] = ann
            claim_obj = self.cluster.update(new)
        if pv.phase != "Bound":
            self.cluster.patch_status("PersistentVolume", "", pv.name, {"phase": "Bound"})
        status = claim_obj.get("status") if isinstance(claim_obj.get("status"), Mapping) else {}
        if (status or {}).get("phase") != "Bound":
            patch: Obj = {"phase": "Bound"}
            spec = _spec(pv_obj)
            if spec.get("accessModes"):
                patch["accessModes"] = list(spec["accessModes"])
            if isinstance(spec.get("capacity"), Mapping):
                patch["capacity"] = dict(spec["capacity"])
            self.cluster.patch_status("PersistentVolumeClaim", claim.namespace, claim.name, patch)

    # ------------------------------------------------------------------ claims

    def sync_claim(self, claim_obj: Mapping[str, Any]) -> None:
        """Pre-bound claims get their PV's claimRef; claims with a selected node get a provisioned PV."""
        claim = PersistentVolumeClaim.from_obj(claim_obj)
        if claim.deleting:
            return
        if claim.volume_name:
            try:
                pv_obj = self.cluster.get("PersistentVolume", "", claim.volume_name)
            except NotFoundError:
                return
            pv = PersistentVolume.from_obj(pv_obj)
            if pv.claim_ref is None:
                new = copy.deepcopy(dict(pv_obj))
                _writable(new, "spec")["claimRef"] = _claim_ref(claim)
                self.cluster.update(new)  # its event completes the binding
            elif pv.bound_to(claim):
                self.sync_volume(pv_obj)
            return
        node = claim.annotations.get(ANN_SELECTED_NODE)
        if not node or not claim.storage_class:
            return
        try:
            sc = StorageClass.from_obj(self.cluster.get("StorageClass", "", claim.storage_class))
        except NotFoundError:
            return
        if not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER:
            return
        name = f"pvc-{claim.uid}" if claim.uid else f"pvc-{claim.namespace}-{claim.name}"
        try:
            self.cluster.get("PersistentVolume", "", name)
            return  # provisioned already
        except NotFoundError:
            pass
        self.cluster.create(self._provisioned_volume(name, claim, sc, node))

    def _provisioned_volume(
        self, name: str, claim: PersistentVolumeClaim, sc: StorageClass, node: str
    ) -> Obj:
        hostname = node
        try:
            labels = _meta(self.cluster.get("Node", "", node)).get("labels")
            if isinstance(labels, Mapping) and labels.get(HOSTNAME_LABEL):
                hostname = str(labels[HOSTNAME_LABEL])
        except NotFoundError:
            pass
        requests = (_spec(claim.raw).get("resources") or {}).get("requests") or {}
        try:
            reclaim = str(self.cluster.get("StorageClass", "", sc.name).get("reclaimPolicy") or "Delete")
        except NotFoundError:
            reclaim = "Delete"
        spec: Obj = {
            "capacity": {"storage": requests.get("storage", "0")},
            "accessModes": list(claim.access_modes),
            "storageClassName": sc.name,
            "volumeMode": claim.volume_mode,
            "persistentVolumeReclaimPolicy": reclaim,
            "claimRef": _claim_ref(claim),
            "csi": {"driver": sc.provisioner, "volumeHandle": name},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": HOSTNAME_LABEL, "operator": "In", "values": [hostname]}
                            ]
                        }
                    ]
                }
            },
        }
        return {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": {ANN_PROVISIONED_BY: sc.provisioner}},
            "spec": spec,
        }


def _claim_ref(claim: PersistentVolumeClaim) -> Obj:
    ref: Obj = {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "namespace": claim.namespace,
        "name": claim.name,
    }
    if claim.uid:
        ref["uid"] = claim.uid
    if claim.resource_version:
        ref["resourceVersion"] = claim.resource_version
    return ref
