"""Cluster events and queueing hints (``staging/.../framework/types.go``).

A plugin registers ``ClusterEventWithHint`` entries; when an event arrives the queue asks
each relevant hint whether the event may make a rejected pod schedulable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum, IntFlag
from typing import Any


class ActionType(IntFlag):
    """Bit set of object changes (order and names as upstream)."""

    Add = 1
    Delete = 1 << 1
    UpdateNodeAllocatable = 1 << 2
    UpdateNodeLabel = 1 << 3
    UpdateNodeTaint = 1 << 4
    UpdateNodeCondition = 1 << 5
    UpdateNodeAnnotation = 1 << 6
    UpdatePodLabel = 1 << 7
    UpdatePodScaleDown = 1 << 8
    UpdatePodToleration = 1 << 9
    UpdatePodSchedulingGatesEliminated = 1 << 10
    UpdatePodGeneratedResourceClaim = 1 << 11
    Update = (
        UpdateNodeAllocatable
        | UpdateNodeLabel
        | UpdateNodeTaint
        | UpdateNodeCondition
        | UpdateNodeAnnotation
        | UpdatePodLabel
        | UpdatePodScaleDown
        | UpdatePodToleration
        | UpdatePodSchedulingGatesEliminated
        | UpdatePodGeneratedResourceClaim
    )
    All = Add | Delete | Update


_ACTION_NAMES = [(ActionType.Add, "Add"), (ActionType.Delete, "Delete")]


def action_string(a: ActionType) -> str:
    """Upstream ``ActionType.String()`` for the values used in labels (``Add``, ``Delete``,
    ``Update``, ``UpdateNodeLabel``, ``All``...)."""
    if a == ActionType.All:
        return "All"
    if a == ActionType.Update:
        return "Update"
    names = [
        m.name for m in ActionType if m.name and m.value & a and m not in (ActionType.Update, ActionType.All)
    ]
    return "|".join(n for n in names if n)


class EventResource:
    """Resource names used in cluster events."""

    Pod = "Pod"
    AssignedPod = "AssignedPod"
    UnscheduledPod = "UnscheduledPod"
    TargetPod = "TargetPod"
    Node = "Node"
    PersistentVolume = "PersistentVolume"
    PersistentVolumeClaim = "PersistentVolumeClaim"
    CSINode = "storage.k8s.io/CSINode"
    CSIDriver = "storage.k8s.io/CSIDriver"
    VolumeAttachment = "storage.k8s.io/VolumeAttachment"
    CSIStorageCapacity = "storage.k8s.io/CSIStorageCapacity"
    StorageClass = "storage.k8s.io/StorageClass"
    ResourceClaim = "resource.k8s.io/ResourceClaim"
    ResourceSlice = "resource.k8s.io/ResourceSlice"
    DeviceClass = "resource.k8s.io/DeviceClass"
    Wildcard = "*"


_POD_VARIANTS = (EventResource.AssignedPod, EventResource.UnscheduledPod, EventResource.TargetPod)


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """``(resource, action_type, custom_label)``; ``label`` is e.g. ``NodeAdd`` or ``AssignedPodDelete``."""

    resource: str
    action_type: ActionType
    custom_label: str = ""

    @property
    def label(self) -> str:
        """The custom label or ``<resource><action>``."""
        return self.custom_label or f"{self.resource}{action_string(self.action_type)}"

    def is_wildcard(self) -> bool:
        """True for ``(*, All)``."""
        return self.resource == EventResource.Wildcard and self.action_type == ActionType.All

    def match(self, incoming: ClusterEvent) -> bool:
        """True if this *registered* event covers ``incoming``
        (``staging/src/k8s.io/kube-scheduler/framework/interface.go``)."""
        if self.is_wildcard():
            return True
        r = self.resource
        if (
            r == EventResource.Wildcard
            or r == incoming.resource
            or (r == EventResource.Pod and incoming.resource in _POD_VARIANTS)
        ):
            return (
                bool(self.action_type & incoming.action_type)
                and (incoming.action_type & ~self.action_type) == 0
            )
        return False


WILDCARD_EVENT = ClusterEvent(EventResource.Wildcard, ActionType.All, "*")
EVENT_UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.Wildcard, ActionType.All, "UnschedulableTimeout")
EVENT_FORCE_ACTIVATE = ClusterEvent(EventResource.Wildcard, ActionType.All, "ForceActivate")
NODE_ADD = ClusterEvent(EventResource.Node, ActionType.Add)
NODE_DELETE = ClusterEvent(EventResource.Node, ActionType.Delete)
ASSIGNED_POD_ADD = ClusterEvent(EventResource.AssignedPod, ActionType.Add)
ASSIGNED_POD_DELETE = ClusterEvent(EventResource.AssignedPod, ActionType.Delete)
UNSCHEDULED_POD_ADD = ClusterEvent(EventResource.UnscheduledPod, ActionType.Add)
UNSCHEDULED_POD_UPDATE = ClusterEvent(EventResource.UnscheduledPod, ActionType.Update)
UNSCHEDULED_POD_DELETE = ClusterEvent(EventResource.UnscheduledPod, ActionType.Delete)


class QueueingHint(IntEnum):
    """``QueueSkip`` = the event cannot help; ``Queue`` = it may."""

    QueueSkip = 0
    Queue = 1


#: ``QueueingHintFn(pod, old_obj, new_obj) -> QueueingHint``; raising is treated as Queue.
QueueingHintFn = Callable[[Any, Any, Any], QueueingHint]


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    """A registered event and its optional hint (``None`` = always Queue)."""

    event: ClusterEvent
    queueing_hint_fn: QueueingHintFn | None = None
