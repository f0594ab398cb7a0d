"""VolumeZone (``pkg/scheduler/framework/plugins/volumezone/volume_zone.go``).

PreFilter collects the zone/region topology of the pod's bound PVs: for each of the labels
``failure-domain.beta.kubernetes.io/zone``, ``failure-domain.beta.kubernetes.io/region``,
``topology.kubernetes.io/zone`` and ``topology.kubernetes.io/region`` present on a PV, the set of
values (``__``-separated, ``LabelZonesToSet``). Unbound claims of a WaitForFirstConsumer class are
skipped. Skip when nothing was collected.

Filter: a node with none of those labels passes (single-zone clusters); otherwise every PV
topology key must be on the node (a beta key may match the node's GA label) with a value in
the PV's set, else UnschedulableAndUnresolvable ``node(s) had no available volume zone``.

PreFilter rejections (UnschedulableAndUnresolvable): missing PVC/PV/StorageClass
(``persistentvolumeclaim "<n>" not found``, ``persistentvolume "<n>" not found``,
``storageclass.storage.k8s.io "<n>" not found``), ``PersistentVolumeClaim had no name``,
``PersistentVolumeClaim had no pv name and storageClass name``, ``PersistentVolume had no name``
(unbound claim of an Immediate class).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api.node import BETA_REGION_LABEL, BETA_ZONE_LABEL, REGION_LABEL, ZONE_LABEL
from kubesched.api.pod import Pod
from kubesched.api.storage import (
    BINDING_WAIT_FOR_FIRST_CONSUMER,
    PersistentVolumeClaim,
    StorageClass,
    not_found,
    pod_claims,
)
from kubesched.errors import ManifestError
from kubesched.framework.cycle_state import CycleState, StateData
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import EnqueueExtensions, FilterPlugin, PreFilterPlugin, SignPlugin
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.results import PreFilterResult
from kubesched.framework.signers import VOLUMES_SIGNER_NAME, SignFragment, volumes_signer
from kubesched.framework.status import Code, Status

NAME = "VolumeZone"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_CONFLICT = "node(s) had no available volume zone"

TOPOLOGY_LABELS = (BETA_ZONE_LABEL, BETA_REGION_LABEL, ZONE_LABEL, REGION_LABEL)
_TO_GA = {BETA_ZONE_LABEL: ZONE_LABEL, BETA_REGION_LABEL: REGION_LABEL}


@dataclass(frozen=True, slots=True)
class PVTopology:
    """One topology label of a bound PV: ``key`` and the allowed ``values``."""

    pv_name: str
    key: str
    values: frozenset[str]


class _State(StateData):
    __slots__ = ("topologies",)

    def __init__(self, topologies: list[PVTopology]) -> None:
        self.topologies = topologies

    def clone(self) -> _State:
        return self


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """``LabelZonesToSet``: split on ``__``, trim; ``None`` (unparsable) if any element is empty."""
    out = set()
    for z in value.split("__"):
        z = z.strip()
        if not z:
            return None
        out.add(z)
    return frozenset(out)


def pv_topologies(pv_name: str, labels: Mapping[str, str]) -> list[PVTopology]:
    """``getPVTopologies``: the PV's topology labels in :data:`TOPOLOGY_LABELS` order (unparsable skipped)."""
    out = []
    for key in TOPOLOGY_LABELS:
        if key in labels:
            vals = label_zones_to_set(labels[key])
            if vals is not None:
                out.append(PVTopology(pv_name, key, vals))
    return out


def _meta(obj: Any) -> Mapping[str, Any]:
    if not isinstance(obj, Mapping):
        raise TypeError(f"expected a Kubernetes object dict, but got {type(obj).__name__}")
    m = obj.get("metadata")
    return m if isinstance(m, Mapping) else {}


class VolumeZone(PreFilterPlugin, FilterPlugin, EnqueueExtensions, SignPlugin):
    """Bound PVs' zone/region labels versus node labels (module docstring)."""

    NAME = NAME
    Args = None

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        """Feasibility depends on the pod's volumes other than ConfigMap and Secret volumes."""
        return [SignFragment(VOLUMES_SIGNER_NAME, volumes_signer(pod))], None

    def _pv_topologies_for_pod(self, pod: Pod) -> tuple[list[PVTopology], Status | None]:
        objects = self.required_handle().objects
        out: list[PVTopology] = []
        for claim_name, _ in pod_claims(pod.name, pod.volumes):
            if not claim_name:
                return [], Status(Code.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no name")
            obj = objects.get("PersistentVolumeClaim", pod.namespace, claim_name)
            if obj is None:
                return [], Status(
                    Code.UnschedulableAndUnresolvable, not_found("persistentvolumeclaim", claim_name)
                )
            try:
                pvc = PersistentVolumeClaim.from_obj(obj)
            except ManifestError as e:
                return [], Status.as_status(e)
            if not pvc.volume_name:
                if not pvc.storage_class:
                    return [], Status(
                        Code.UnschedulableAndUnresolvable,
                        "PersistentVolumeClaim had no pv name and storageClass name",
                    )
                sc_obj = objects.get("StorageClass", "", pvc.storage_class)
                if sc_obj is None:
                    return [], Status(
                        Code.UnschedulableAndUnresolvable,
                        not_found("storageclass.storage.k8s.io", pvc.storage_class),
                    )
                if StorageClass.from_obj(sc_obj).binding_mode == BINDING_WAIT_FOR_FIRST_CONSUMER:
                    continue
                return [], Status(Code.UnschedulableAndUnresolvable, "PersistentVolume had no name")
            pv_obj = objects.get("PersistentVolume", "", pvc.volume_name)
            if pv_obj is None:
                return [], Status(
                    Code.UnschedulableAndUnresolvable, not_found("persistentvolume", pvc.volume_name)
                )
            labels = {str(k): str(v) for k, v in (_meta(pv_obj).get("labels") or {}).items()}
            out.extend(pv_topologies(pvc.volume_name, labels))
        return out, None

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Collect the bound PVs' topologies; Skip when there are none."""
        tops, status = self._pv_topologies_for_pod(pod)
        if status is not None:
            return None, status
        if not tops:
            return None, Status(Code.Skip)
        state.write(PRE_FILTER_STATE_KEY, _State(tops))
        return None, None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Every PV topology must be satisfied by a node that has any topology label."""
        if not pod.volumes:
            return None
        st = state.get(PRE_FILTER_STATE_KEY)
        if st is None:
            tops, status = self._pv_topologies_for_pod(pod)
            if status is not None:
                return status
        else:
            tops = st.topologies
        node = node_info.node
        if node is None:
            return Status(Code.Error, err=RuntimeError("node not found"))
        labels = node.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return None
        for t in tops:
            v = labels.get(t.key)
            if v is None:
                v = labels.get(_TO_GA.get(t.key, t.key))
            if v is None or v not in t.values:
                return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_CONFLICT)
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """StorageClass Add, Node Add/UpdateNodeLabel, PVC Add/Update, PV Add/Update (with hints)."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.StorageClass, ActionType.Add), self._after_sc_added
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add | ActionType.Update),
                self._after_pvc_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PersistentVolume, ActionType.Add | ActionType.Update),
                self._after_pv_change,
            ),
        ]

    @staticmethod
    def _after_sc_added(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        _meta(new_obj)
        if StorageClass.from_obj(new_obj).binding_mode == BINDING_WAIT_FOR_FIRST_CONSUMER:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    @staticmethod
    def _after_pvc_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        meta = _meta(new_obj)
        if str(meta.get("namespace") or "default") != pod.namespace:
            return QueueingHint.QueueSkip
        name = str(meta.get("name") or "")
        if any(c == name for c, _ in pod_claims(pod.name, pod.volumes)):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    @staticmethod
    def _after_pv_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        new_meta = _meta(new_obj)
        if old_obj is None:
            return QueueingHint.Queue
        old_meta = _meta(old_obj)
        name = str(new_meta.get("name") or "")
        if pv_topologies(name, old_meta.get("labels") or {}) != pv_topologies(
            name, new_meta.get("labels") or {}
        ):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip
