"""The PersistentVolume controller's part of a binding, for the embedded cluster
(``pkg/controller/volume/persistentvolume/pv_controller.go``: ``syncVolume`` -> ``bind``).

A real cluster runs kube-controller-manager, whose PV controller completes a binding once the
scheduler's VolumeBinding PreBind has written ``spec.claimRef`` on a PersistentVolume. The embedded
cluster (:class:`~kubesched.cluster.memory.MemoryCluster`) has no controller manager, so it calls
:func:`complete_binding` synchronously when an update sets or changes a PV's ``claimRef``. The
writes are those of ``bind``:

1. ``updateVolumePhase``: PV ``status.phase: Bound``;
2. ``bindClaimToVolume``: PVC ``spec.volumeName`` and the annotations
   ``pv.kubernetes.io/bind-completed: "yes"`` and ``pv.kubernetes.io/bound-by-controller: "yes"``;
3. ``updateClaimStatus``: PVC ``status.phase: Bound`` with the PV's ``accessModes`` and
   ``capacity``.

Not modelled: dynamic provisioning (a claim annotated ``volume.kubernetes.io/selected-node`` stays
Pending), reclaim policies, and the periodic resync (PVs created already bound to a claim are left
as written).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Protocol

from kubesched.api.storage import ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER
from kubesched.errors import NotFoundError

Obj = dict[str, Any]


class _Store(Protocol):
    def get(self, kind: str, namespace: str | None, name: str) -> Obj: ...

    def update(self, obj: Obj) -> Obj: ...

    def patch_status(self, kind: str, namespace: str | None, name: str, patch: Obj) -> Obj: ...


def _claim_ref(pv: Mapping[str, Any]) -> Mapping[str, Any] | None:
    ref = (pv.get("spec") or {}).get("claimRef")
    return ref if isinstance(ref, Mapping) and ref.get("name") else None


def claim_ref_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """True if ``new`` (a PersistentVolume) names a claim that ``old`` did not name."""
    ref = _claim_ref(new)
    if ref is None:
        return False
    before = _claim_ref(old)
    return before is None or (before.get("namespace"), before.get("name")) != (ref.get("namespace"), ref.get("name"))


def complete_binding(store: _Store, pv: Mapping[str, Any]) -> bool:
    """Bind the claim that ``pv``'s ``spec.claimRef`` names to ``pv`` (module docstring).

    Does nothing and returns ``False`` when the claim does not exist, its UID differs from the
    ref's, or it is already bound to another volume; returns ``True`` after the three writes.
    """
    ref = _claim_ref(pv)
    if ref is None:
        return False
    namespace = str(ref.get("namespace") or "default")
    try:
        current = store.get("PersistentVolumeClaim", namespace, str(ref["name"]))
    except NotFoundError:
        return False
    meta = current.get("metadata") or {}
    if ref.get("uid") and ref["uid"] != meta.get("uid"):
        return False
    pv_name = str((pv.get("metadata") or {}).get("name"))
    bound_to = (current.get("spec") or {}).get("volumeName")
    if bound_to and bound_to != pv_name:
        return False
    store.patch_status("PersistentVolume", "", pv_name, {"phase": "Bound"})
    claim = copy.deepcopy(dict(current))
    ann = claim.setdefault("metadata", {}).setdefault("annotations", {})
    ann[ANN_BIND_COMPLETED] = "yes"
    ann[ANN_BOUND_BY_CONTROLLER] = "yes"
    claim.setdefault("spec", {})["volumeName"] = pv_name
    store.update(claim)
    status: Obj = {"phase": "Bound"}
    spec = pv.get("spec") or {}
    modes = spec.get("accessModes")
    if modes:
        status["accessModes"] = list(modes)
    cap = spec.get("capacity")
    if isinstance(cap, Mapping):
        status["capacity"] = dict(cap)
    store.patch_status("PersistentVolumeClaim", namespace, str(ref["name"]), status)
    return True
