"""NodeName: a pod with ``spec.nodeName`` only fits that node
(``pkg/scheduler/framework/plugins/nodename/node_name.go``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.node import Node
from kubesched.api.pod import Pod
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
from kubesched.framework.signers import NODE_NAME_SIGNER_NAME, SignFragment
from kubesched.framework.status import Code, Status

if TYPE_CHECKING:
    from kubesched.framework.batch import BoolArray, IntArray
    from kubesched.framework.handle import Handle
    from kubesched.framework.node_table import NodeTable

ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_name: str) -> bool:
    """``Fits``: True if ``pod.spec.nodeName`` is empty or equals ``node_name``."""
    return not pod.node_name or pod.node_name == node_name


class NodeName(FilterPlugin, EnqueueExtensions, SignPlugin):
    """Filter: UnschedulableAndUnresolvable ``node(s) didn't match the requested node name``. No args."""

    NAME = "NodeName"
    Args = None

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        """Feasibility depends on ``spec.nodeName``."""
        return [SignFragment(NODE_NAME_SIGNER_NAME, pod.node_name)], None

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject every node but the requested one."""
        if node_info.node is None:
            return Status(Code.Error, "node not found")
        if not fits(pod, node_info.node.name):
            return Status(Code.UnschedulableAndUnresolvable, ERR_REASON)
        return None

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> BoolArray | None:
        """Vectorised :meth:`filter`: only the row of ``spec.nodeName`` passes (all when unset)."""
        if not pod.node_name:
            return np.ones(len(rows), dtype=np.bool_)
        out: BoolArray = rows == table.rows.get(pod.node_name, -1)
        return out

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``Node/Add`` with :meth:`is_schedulable_after_node_add`."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add), self.is_schedulable_after_node_add
            )
        ]

    def is_schedulable_after_node_add(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue only if the added node is the one the pod asks for (or it asks for none)."""
        _, added = as_objects(Node, old_obj, new_obj)
        if added is None or not fits(pod, added.name):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue
