"""NodePorts: the pod's host ports must be free on the node
(``pkg/scheduler/framework/plugins/nodeports/node_ports.go``).

Host ports are taken from regular and restartable init containers (``hostPort > 0``; empty
``hostIP`` -> ``0.0.0.0``, empty protocol -> ``TCP``), as :attr:`Pod.host_ports` holds them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.pod import ContainerPort, Pod
from kubesched.framework.cycle_state import CycleState, StateData, StateNotFoundError
from kubesched.framework.events import ASSIGNED_POD_DELETE, NODE_ADD, ClusterEventWithHint, QueueingHint
from kubesched.framework.interfaces import EnqueueExtensions, FilterPlugin, PreFilterPlugin, SignPlugin
from kubesched.framework.node_info import HostPortInfo, NodeInfo
from kubesched.framework.object_cast import as_objects
from kubesched.framework.results import PreFilterResult
from kubesched.framework.signers import HOST_PORTS_SIGNER_NAME, SignFragment, host_ports_signer
from kubesched.framework.status import Code, Status

if TYPE_CHECKING:
    from kubesched.framework.batch import BoolArray, IntArray
    from kubesched.framework.handle import Handle
    from kubesched.framework.node_table import NodeTable

NAME = "NodePorts"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"


@dataclass(slots=True)
class _PreFilterState(StateData):
    """The pod's wanted host ports (not affected by AddPod/RemovePod, so ``clone`` returns self)."""

    ports: tuple[ContainerPort, ...]

    def clone(self) -> _PreFilterState:
        return self


def fits_ports(want: Iterable[ContainerPort], in_use: HostPortInfo) -> bool:
    """``fitsPorts``: True if none of ``want`` conflicts with ``in_use``
    (``pkg/scheduler/framework/types.go`` ``HostPortInfo.CheckConflict``)."""
    return not any(in_use.check_conflict(p) for p in want)


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """``Fits``: True if ``pod``'s host ports are free on the node (used by preemption)."""
    return fits_ports(pod.host_ports, node_info.used_ports)


class NodePorts(PreFilterPlugin, FilterPlugin, EnqueueExtensions, SignPlugin):
    """PreFilter: Skip for a pod without host ports. Filter: Unschedulable
    ``node(s) didn't have free ports for the requested pod ports``. No args."""

    NAME = NAME
    Args = None

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        """Feasibility depends on the host ports of the pod's containers."""
        return [SignFragment(HOST_PORTS_SIGNER_NAME, host_ports_signer(pod))], None

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Record the pod's host ports; Skip when it has none."""
        if not pod.host_ports:
            return None, Status(Code.Skip)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(pod.host_ports))
        return None, None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject a node where a wanted host port is in use; Error if PreFilter did not run."""
        try:
            s = state.read(PRE_FILTER_STATE_KEY)
        except StateNotFoundError as e:
            return Status.as_status(
                RuntimeError(
                    f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: {e.args[0] if e.args else e}'
                )
            )
        if not isinstance(s, _PreFilterState):
            return Status.as_status(RuntimeError(f"{s!r}  convert to nodeports.preFilterState error"))
        if not fits_ports(s.ports, node_info.used_ports):
            return Status(Code.Unschedulable, ERR_REASON)
        return None

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> BoolArray | None:
        """Vectorised :meth:`filter`: nodes without used host ports pass; the others are checked one by one."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return None
        busy = table.has_ports[rows]
        ok: BoolArray = ~busy
        infos = table.infos
        for i in np.flatnonzero(busy).tolist():
            ni = infos[int(rows[i])]
            if ni is None:
                return None
            ok[i] = fits_ports(s.ports, ni.used_ports)
        return ok

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``AssignedPod/Delete`` with :meth:`is_schedulable_after_pod_deleted`; ``Node/Add`` (always Queue)."""
        return [
            ClusterEventWithHint(ASSIGNED_POD_DELETE, self.is_schedulable_after_pod_deleted),
            ClusterEventWithHint(NODE_ADD),
        ]

    def is_schedulable_after_pod_deleted(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue only when the deleted pod was bound or nominated and held a host port ``pod`` wants."""
        deleted, _ = as_objects(Pod, old_obj, None)
        if deleted is None:
            return QueueingHint.QueueSkip
        if not deleted.node_name and not deleted.nominated_node_name:
            return QueueingHint.QueueSkip
        if not deleted.host_ports:
            return QueueingHint.QueueSkip
        in_use = HostPortInfo()
        for p in deleted.host_ports:
            in_use.add(p)
        if fits_ports(pod.host_ports, in_use):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue
