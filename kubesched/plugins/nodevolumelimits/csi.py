"""NodeVolumeLimits, the CSI attach limit (``pkg/scheduler/framework/plugins/nodevolumelimits/csi.go``).

Each PVC (or generic ephemeral volume) of a pod maps to a unique CSI volume
``<driver>/<volumeHandle>``: from the bound PV's ``spec.csi`` (``driver``, ``volumeHandle``), or,
for an unbound claim (or one whose PV is missing), from its StorageClass's provisioner with the
handle ``<namespace>-<claim name>``. Filter counts the unique volumes of the pods on the node per
driver, drops the new pod's volumes already attached there, and rejects with Unschedulable
``node(s) exceed max volume count`` when ``attached + new > limit`` for a driver whose limit is
``CSINode.spec.drivers[].allocatable.count``. No CSINode, or no count for a driver, means no limit.

A missing PVC of the pod itself is UnschedulableAndUnresolvable
``looking up PVC <ns>/<name>: persistentvolumeclaim "<name>" not found``; missing PVCs of pods
already on the node are not counted.

Not modelled (documented deviations): CSI migration of in-tree volumes (inline in-tree volumes and
PVs without ``spec.csi`` are not counted; a provisioner name is used as is) and volumes counted from
``VolumeAttachment`` objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubesched.api.pod import Pod
from kubesched.api.storage import (
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    csi_node_limits,
    ephemeral_owner_error,
    not_found,
    pod_claims,
)
from kubesched.errors import ManifestError
from kubesched.framework.cycle_state import CycleState
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

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"


class _PVCNotFoundError(Exception):
    """A PVC of the pod being scheduled does not exist."""


class NodeVolumeLimits(PreFilterPlugin, FilterPlugin, EnqueueExtensions, SignPlugin):
    """CSI volume attach limits from CSINode (module docstring)."""

    NAME = NAME
    Args = None

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        """Feasibility depends on the pod's volumes other than ConfigMap and Secret volumes."""
        return [SignFragment(VOLUMES_SIGNER_NAME, volumes_signer(pod))], None

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Skip unless the pod has a PVC or a generic ephemeral volume."""
        if pod_claims(pod.name, pod.volumes):
            return None, None
        return None, Status(Code.Skip)

    def _driver_info(self, pvc: PersistentVolumeClaim) -> tuple[str, str]:
        """``getCSIDriverInfo``: (driver, volume handle) or ("", "") when unknown."""
        if pvc.volume_name:
            pv_obj = self.required_handle().objects.get("PersistentVolume", "", pvc.volume_name)
            if pv_obj is not None:
                pv = PersistentVolume.from_obj(pv_obj)
                return pv.csi_driver, pv.csi_handle
        # unbound, or the PV is not (yet) known: use the class's provisioner
        if not pvc.storage_class:
            return "", ""
        sc_obj = self.required_handle().objects.get("StorageClass", "", pvc.storage_class)
        if sc_obj is None:
            return "", ""
        return StorageClass.from_obj(sc_obj).provisioner, f"{pvc.namespace}-{pvc.name}"

    def _attachable_volumes(self, pod: Pod, new_pod: bool, result: dict[str, str]) -> None:
        """``filterAttachableVolumes``: add ``unique name -> driver`` for each CSI volume of ``pod``.

        Raises ``_PVCNotFoundError`` (new pod, missing PVC) or ``ValueError`` (bad claim)."""
        for claim_name, ephemeral in pod_claims(pod.name, pod.volumes):
            if not claim_name:
                raise ValueError("PersistentVolumeClaim had no name")
            obj = self.required_handle().objects.get("PersistentVolumeClaim", pod.namespace, claim_name)
            if obj is None:
                if new_pod:
                    raise _PVCNotFoundError(
                        f"looking up PVC {pod.namespace}/{claim_name}: "
                        + not_found("persistentvolumeclaim", claim_name)
                    )
                continue
            pvc = PersistentVolumeClaim.from_obj(obj)
            if ephemeral:
                err = ephemeral_owner_error(pod.namespace, pod.name, pod.uid, pvc)
                if err is not None:
                    raise ValueError(err)
            driver, handle = self._driver_info(pvc)
            if not driver or not handle:
                continue
            result[f"{driver}/{handle}"] = driver

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject when a driver's attach limit would be exceeded on this node."""
        if not pod.volumes:
            return None
        node = node_info.node
        if node is None:
            return Status(Code.Error, err=RuntimeError("node not found"))
        new_volumes: dict[str, str] = {}
        try:
            self._attachable_volumes(pod, True, new_volumes)
        except _PVCNotFoundError as e:
            return Status(Code.UnschedulableAndUnresolvable, str(e))
        except (ValueError, ManifestError) as e:
            return Status.as_status(e)
        if not new_volumes:
            return None
        limits = csi_node_limits(self.required_handle().objects.get("CSINode", "", node.name))
        if not limits:
            return None
        attached: dict[str, str] = {}
        try:
            for pi in node_info.pods:
                self._attachable_volumes(pi.pod, False, attached)
        except (ValueError, ManifestError) as e:
            return Status.as_status(e)
        attached_count: dict[str, int] = {}
        for unique, driver in attached.items():
            new_volumes.pop(unique, None)
            attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for driver in new_volumes.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return Status(Code.Unschedulable, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """CSINode Add, Pod Delete (hint), PVC Add, VolumeAttachment Delete."""
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.CSINode, ActionType.Add)),
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Delete), self._after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add)),
            ClusterEventWithHint(ClusterEvent(EventResource.VolumeAttachment, ActionType.Delete)),
        ]

    @staticmethod
    def _after_pod_deleted(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        deleted = old_obj
        if not isinstance(deleted, Pod):
            raise TypeError(f"expected Pod, but got {type(deleted).__name__}")
        if not deleted.volumes:
            return QueueingHint.QueueSkip
        if not deleted.node_name and not deleted.nominated_node_name:
            return QueueingHint.QueueSkip
        if pod_claims(deleted.name, deleted.volumes):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip
