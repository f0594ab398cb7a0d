"""SchedulingGates: keeps pods with ``spec.schedulingGates`` out of activeQ
(``pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.api.pod import Pod
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import EnqueueExtensions, PreEnqueuePlugin
from kubesched.framework.object_cast import as_objects
from kubesched.framework.status import Code, Status

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle


def _go_string_slice(items: tuple[str, ...] | list[str]) -> str:
    """``fmt.Sprintf("%v", []string{...})``: ``[a b c]``."""
    return "[" + " ".join(items) + "]"


class SchedulingGates(PreEnqueuePlugin, EnqueueExtensions):
    """PreEnqueue: UnschedulableAndUnresolvable ``waiting for scheduling gates: [g1 g2]`` while the
    pod has gates (names in spec order). Requeued only by an update of the same pod that removed
    its last gate. No args."""

    NAME = "SchedulingGates"
    Args = None

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """Gate ``pod`` while ``spec.schedulingGates`` is non-empty."""
        if not pod.scheduling_gates:
            return None
        return Status(
            Code.UnschedulableAndUnresolvable,
            f"waiting for scheduling gates: {_go_string_slice(pod.scheduling_gates)}",
        )

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``Pod/UpdatePodSchedulingGatesEliminated`` with :meth:`is_schedulable_after_gates_eliminated`."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.UpdatePodSchedulingGatesEliminated),
                self.is_schedulable_after_gates_eliminated,
            )
        ]

    def is_schedulable_after_gates_eliminated(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """Queue only when the updated pod is ``pod`` itself (same UID) and it has no gates left."""
        _, modified = as_objects(Pod, old_obj, new_obj)
        if modified is None or modified.uid != pod.uid:
            return QueueingHint.QueueSkip
        if modified.scheduling_gates:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue
