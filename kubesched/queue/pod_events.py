"""Cluster events derived from a pod update (``pkg/scheduler/backend/queue/scheduling_queue.go``
``MoveAllToActiveOrBackoffQueue``; ``PodSchedulingPropertiesChange`` in
``pkg/scheduler/framework/events.go``).

The resource is ``UnscheduledPod`` when the new pod has no ``spec.nodeName``, else
``AssignedPod``. Action types, in this order: ``UpdatePodLabel`` (labels differ),
``UpdatePodScaleDown`` (some request removed or lowered), ``UpdatePodSchedulingGatesEliminated``
(gates went from some to none), ``UpdatePodToleration`` (toleration count changed),
``UpdatePodGeneratedResourceClaim`` (``status.resourceClaimStatuses`` changed); none of
them -> a single generic ``Update``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.pod import Pod
from kubesched.framework.events import ActionType, ClusterEvent, EventResource


def _claim_statuses(p: Pod) -> list[tuple[str, str]]:
    status = p.raw.get("status") if isinstance(p.raw, Mapping) else None
    raw: Any = status.get("resourceClaimStatuses") if isinstance(status, Mapping) else None
    out = []
    for s in raw or []:
        if isinstance(s, Mapping):
            out.append((str(s.get("name", "")), str(s.get("resourceClaimName") or "")))
    return sorted(out)


def _scaled_down(new: Pod, old: Pod) -> bool:
    new_req = new.requests
    for name, old_q in old.requests.items():
        new_q = new_req.get(name)
        if new_q is None or old_q > new_q:
            return True
    return False


def pod_scheduling_properties_change(new_pod: Pod, old_pod: Pod | None) -> list[ClusterEvent]:
    """The events an update from ``old_pod`` to ``new_pod`` represents (see module docstring).

    ``old_pod=None`` yields the generic ``Update`` event.
    """
    r = EventResource.UnscheduledPod if not new_pod.node_name else EventResource.AssignedPod
    if old_pod is None:
        return [ClusterEvent(r, ActionType.Update)]
    actions: list[ActionType] = []
    if dict(new_pod.labels) != dict(old_pod.labels):
        actions.append(ActionType.UpdatePodLabel)
    if _scaled_down(new_pod, old_pod):
        actions.append(ActionType.UpdatePodScaleDown)
    if not new_pod.scheduling_gates and old_pod.scheduling_gates:
        actions.append(ActionType.UpdatePodSchedulingGatesEliminated)
    if len(new_pod.tolerations) != len(old_pod.tolerations):
        actions.append(ActionType.UpdatePodToleration)
    if _claim_statuses(new_pod) != _claim_statuses(old_pod):
        actions.append(ActionType.UpdatePodGeneratedResourceClaim)
    if not actions:
        return [ClusterEvent(r, ActionType.Update)]
    return [ClusterEvent(r, a) for a in actions]
