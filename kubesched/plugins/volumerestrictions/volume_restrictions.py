"""VolumeRestrictions (``pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go``).

Two checks (``Filter``):

* inline-volume conflicts with pods already on the node: the same GCE PD (unless every mount
  is read-only), AWS EBS volume ID, iSCSI IQN (unless all read-only) or RBD image (overlapping
  monitors, same pool and image, unless all read-only) -> Unschedulable ``node(s) had no available disk``;
* ReadWriteOncePod claims: PreFilter counts the pod's RWOP claims already used by any pod in the
  snapshot (cluster-wide, ``StorageInfos().IsPVCUsedByPods``); Filter rejects every node with
  Unschedulable ``node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod
  access mode`` while that count is positive. The PreFilter extensions adjust the count for
  added/removed pods (preemption, nominated pods) by claim name, as upstream.

PreFilter: a missing PVC is UnschedulableAndUnresolvable ``persistentvolumeclaim "<name>" not found``;
Skip when the pod has no restricted inline volume and no RWOP conflict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.api.pod import Pod
from kubesched.api.storage import READ_WRITE_ONCE_POD, PersistentVolumeClaim, not_found
from kubesched.errors import ManifestError
from kubesched.framework.cycle_state import CycleState, StateData
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    SignPlugin,
)
from kubesched.framework.node_info import NodeInfo, PodInfo
from kubesched.framework.results import PreFilterResult
from kubesched.framework.signers import VOLUMES_SIGNER_NAME, SignFragment, volumes_signer
from kubesched.framework.status import Code, Status

NAME = "VolumeRestrictions"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)

_RESTRICTED = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


class _PreFilterState(StateData):
    """The pod's RWOP claim names and how many of them are in use by other pods."""

    __slots__ = ("rwop_claims", "conflicting_ref_count")

    def __init__(self, rwop_claims: frozenset[str], conflicting_ref_count: int) -> None:
        self.rwop_claims = rwop_claims
        self.conflicting_ref_count = conflicting_ref_count

    def update_with_pod(self, pod: Pod, multiplier: int) -> None:
        # upstream matches by claim name only (no namespace check)
        n = sum(1 for c in pod.pvc_names if c in self.rwop_claims)
        self.conflicting_ref_count += multiplier * n

    def clone(self) -> _PreFilterState:
        return _PreFilterState(self.rwop_claims, self.conflicting_ref_count)


def needs_restrictions_check(volume: Mapping[str, Any]) -> bool:
    """True for GCE PD, AWS EBS, RBD and iSCSI inline volumes."""
    return any(isinstance(volume.get(k), Mapping) for k in _RESTRICTED)


def _have_overlap(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return bool(set(map(str, a)) & set(map(str, b)))


def is_volume_conflict(volume: Mapping[str, Any], existing_pod: Pod) -> bool:
    """``isVolumeConflict``: does ``volume`` conflict with any volume of ``existing_pod``?"""
    for ev in existing_pod.volumes:
        g, eg = volume.get("gcePersistentDisk"), ev.get("gcePersistentDisk")
        if isinstance(g, Mapping) and isinstance(eg, Mapping):
            if g.get("pdName") == eg.get("pdName") and not (g.get("readOnly") and eg.get("readOnly")):
                return True
        a, ea = volume.get("awsElasticBlockStore"), ev.get("awsElasticBlockStore")
        if isinstance(a, Mapping) and isinstance(ea, Mapping):
            if a.get("volumeID") == ea.get("volumeID"):
                return True
        i, ei = volume.get("iscsi"), ev.get("iscsi")
        if isinstance(i, Mapping) and isinstance(ei, Mapping):
            if i.get("iqn") == ei.get("iqn") and not (i.get("readOnly") and ei.get("readOnly")):
                return True
        r, er = volume.get("rbd"), ev.get("rbd")
        if isinstance(r, Mapping) and isinstance(er, Mapping):
            # API defaulting: pool "rbd"
            if (
                _have_overlap(r.get("monitors") or [], er.get("monitors") or [])
                and (r.get("pool") or "rbd") == (er.get("pool") or "rbd")
                and r.get("image") == er.get("image")
                and not (r.get("readOnly") and er.get("readOnly"))
            ):
                return True
    return False


def satisfy_volume_conflicts(pod: Pod, pods: Sequence[PodInfo]) -> bool:
    """``satisfyVolumeConflicts``: no restricted volume of ``pod`` conflicts with ``pods``."""
    for v in pod.volumes:
        if not needs_restrictions_check(v):
            continue
        for pi in pods:
            if is_volume_conflict(v, pi.pod):
                return False
    return True


def _as_pod(obj: Any) -> Pod | None:
    if obj is None or isinstance(obj, Pod):
        return obj
    if isinstance(obj, Mapping):
        return Pod.from_manifest(obj)
    raise TypeError(f"expected Pod, but got {type(obj).__name__}")


class VolumeRestrictions(PreFilterPlugin, FilterPlugin, EnqueueExtensions, PreFilterExtensions, SignPlugin):
    """Disk conflicts and ReadWriteOncePod exclusivity (module docstring)."""

    NAME = NAME
    Args = None

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        """Feasibility depends on the pod's volumes other than ConfigMap and Secret volumes."""
        return [SignFragment(VOLUMES_SIGNER_NAME, volumes_signer(pod))], None

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Compute the RWOP state; UnschedulableAndUnresolvable for a missing PVC; Skip if nothing to check."""
        needs_check = any(needs_restrictions_check(v) for v in pod.volumes)
        rwop: set[str] = set()
        for claim_name in pod.pvc_names:
            obj = self.required_handle().objects.get("PersistentVolumeClaim", pod.namespace, claim_name)
            if obj is None:
                return None, Status(
                    Code.UnschedulableAndUnresolvable, not_found("persistentvolumeclaim", claim_name)
                )
            try:
                pvc = PersistentVolumeClaim.from_obj(obj)
            except ManifestError as e:
                return None, Status.as_status(e)
            if READ_WRITE_ONCE_POD in pvc.access_modes:
                rwop.add(claim_name)
        conflicts = 0
        if rwop:
            snap = self.required_handle().snapshot()
            conflicts = sum(1 for c in rwop if snap.is_pvc_used_by_pods(f"{pod.namespace}/{c}"))
        if not needs_check and conflicts == 0:
            return None, Status(Code.Skip)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(frozenset(rwop), conflicts))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """AddPod/RemovePod adjust the RWOP conflict count."""
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Count the added pod's uses of the RWOP claims."""
        try:
            s: _PreFilterState = state.read(PRE_FILTER_STATE_KEY)
        except KeyError as e:
            return Status.as_status(e)
        s.update_with_pod(pod_info_to_add.pod, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Uncount the removed pod's uses of the RWOP claims."""
        try:
            s: _PreFilterState = state.read(PRE_FILTER_STATE_KEY)
        except KeyError as e:
            return Status.as_status(e)
        s.update_with_pod(pod_info_to_remove.pod, -1)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Disk conflicts on this node, then the RWOP conflict count."""
        if not satisfy_volume_conflicts(pod, node_info.pods):
            return Status(Code.Unschedulable, ERR_REASON_DISK_CONFLICT)
        try:
            s: _PreFilterState = state.read(PRE_FILTER_STATE_KEY)
        except KeyError as e:
            return Status.as_status(e)
        if s.conflicting_ref_count > 0:
            return Status(Code.Unschedulable, ERR_REASON_RWOP_CONFLICT)
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """AssignedPod/Pod Delete (hint), Node Add, PVC Add (hint)."""
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Delete), self._after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add), self._after_pvc_added
            ),
        ]

    @staticmethod
    def _after_pod_deleted(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        deleted = _as_pod(old_obj)
        if deleted is None or deleted.namespace != pod.namespace:
            return QueueingHint.QueueSkip
        if not satisfy_volume_conflicts(pod, [PodInfo(deleted)]):
            return QueueingHint.Queue
        claims = set(pod.pvc_names)
        if any(c in claims for c in deleted.pvc_names):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    @staticmethod
    def _after_pvc_added(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        if not isinstance(new_obj, Mapping):
            raise TypeError(f"expected PersistentVolumeClaim, but got {type(new_obj).__name__}")
        meta = new_obj.get("metadata") or {}
        if str(meta.get("namespace") or "default") != pod.namespace:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue if str(meta.get("name") or "") in pod.pvc_names else QueueingHint.QueueSkip
