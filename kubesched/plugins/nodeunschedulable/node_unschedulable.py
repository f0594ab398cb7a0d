"""NodeUnschedulable: rejects nodes with ``spec.unschedulable`` unless the pod tolerates the
``node.kubernetes.io/unschedulable:NoSchedule`` taint
(``pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.api.taints import NO_SCHEDULE, Taint, tolerates
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import EnqueueExtensions, FilterPlugin, SignPlugin
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.object_cast import as_objects
from kubesched.framework.signers import TOLERATIONS_SIGNER_NAME, SignFragment, tolerations_signer
from kubesched.framework.status import Code, Status

if TYPE_CHECKING:
    from kubesched.framework.batch import BoolArray, IntArray
    from kubesched.framework.handle import Handle
    from kubesched.framework.node_table import NodeTable

TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"

_UNSCHEDULABLE_TAINT = Taint(TAINT_NODE_UNSCHEDULABLE, "", NO_SCHEDULE)


def tolerates_unschedulable(pod: Pod) -> bool:
    """True if ``pod`` tolerates ``node.kubernetes.io/unschedulable:NoSchedule`` (empty value)."""
    return tolerates(pod.tolerations, _UNSCHEDULABLE_TAINT)


class NodeUnschedulable(FilterPlugin, EnqueueExtensions, SignPlugin):
    """Filter: ``node(s) were unschedulable`` (UnschedulableAndUnresolvable) for a cordoned node the
    pod does not tolerate; ``node(s) had unknown conditions`` for a NodeInfo without Node. No args."""

    NAME = "NodeUnschedulable"
    Args = None

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        """Feasibility depends on whether the pod tolerates the unschedulable taint: its tolerations."""
        return [SignFragment(TOLERATIONS_SIGNER_NAME, tolerations_signer(pod))], None

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject cordoned nodes unless tolerated."""
        node = node_info.node
        if node is None:
            return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_UNKNOWN_CONDITION)
        if not node.unschedulable:
            return None
        if not tolerates_unschedulable(pod):
            return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_UNSCHEDULABLE)
        return None

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> BoolArray | None:
        """Vectorised :meth:`filter` (snapshot rows always have a node)."""
        if tolerates_unschedulable(pod):
            return np.ones(len(rows), dtype=np.bool_)
        out: BoolArray = ~table.unschedulable[rows]
        return out

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``Node/Add|UpdateNodeTaint`` (node became schedulable) and ``Pod/UpdatePodToleration``
        (the pod itself now tolerates the unschedulable taint)."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
                self.is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration),
                self.is_schedulable_after_pod_toleration_change,
            ),
        ]

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue when a schedulable node is added or a node flips from unschedulable to schedulable."""
        original, modified = as_objects(Node, old_obj, new_obj)
        if modified is None:
            return QueueingHint.QueueSkip
        if (original is not None and original.unschedulable and not modified.unschedulable) or (
            original is None and not modified.unschedulable
        ):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_pod_toleration_change(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """Queue when ``pod`` itself (same UID) now tolerates the unschedulable taint."""
        _, modified = as_objects(Pod, old_obj, new_obj)
        if modified is not None and modified.uid == pod.uid and tolerates_unschedulable(modified):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip
