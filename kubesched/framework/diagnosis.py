"""``NodeToStatus``, ``Diagnosis`` and ``FitError`` (``pkg/scheduler/framework/types.go``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from kubesched.framework.status import Code, Status

NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"


class NodeToStatus:
    """Statuses of rejected nodes plus an ``absent_nodes_status`` for every node not listed
    (default ``UnschedulableAndUnresolvable`` with no reasons)."""

    __slots__ = ("statuses", "absent_nodes_status")

    def __init__(self, statuses: dict[str, Status] | None = None, absent: Status | None = None) -> None:
        self.statuses: dict[str, Status] = statuses if statuses is not None else {}
        self.absent_nodes_status = absent if absent is not None else Status(Code.UnschedulableAndUnresolvable)

    def get(self, node_name: str) -> Status:
        """The status of ``node_name`` (the absent status when not listed)."""
        return self.statuses.get(node_name, self.absent_nodes_status)

    def set(self, node_name: str, status: Status) -> None:
        """Record a node's status."""
        self.statuses[node_name] = status

    def __len__(self) -> int:
        return len(self.statuses)

    def nodes_for_status_code(self, all_nodes: Iterable[str], code: Code) -> list[str]:
        """Listed nodes with ``code`` plus, if the absent status has ``code``, every unlisted node
        of ``all_nodes`` (in ``all_nodes`` order for the latter)."""
        out = [n for n, s in self.statuses.items() if s.code == code]
        if self.absent_nodes_status.code == code:
            out.extend(n for n in all_nodes if n not in self.statuses)
        return out


@dataclass
class Diagnosis:
    """Why a pod did not fit: node statuses, the rejecting plugins and PreFilter/PostFilter messages."""

    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    def add_plugin_status(self, s: Status) -> None:
        """Record the plugin of a rejected status (and of a Pending one in ``pending_plugins``)."""
        if not s.plugin:
            return
        if s.is_rejected():
            self.unschedulable_plugins.add(s.plugin)
            if s.code == Code.Pending:
                self.pending_plugins.add(s.plugin)


class FitError(Exception):
    """No node fits the pod (``framework.FitError``); ``str()`` is the exact upstream message, e.g.
    ``0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated taint(s).``"""

    def __init__(self, pod_key: str, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        self.pod_key = pod_key
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        super().__init__(pod_key)

    def __str__(self) -> str:
        # computed on demand: the PostFilter message is added after the error is raised
        return self.message()

    def message(self) -> str:
        """Build the upstream ``FitError.Error()`` text (``pkg/scheduler/schedule_one.go``
        ``handleSchedulingFailure`` and ``FitError.Error``)."""
        d = self.diagnosis
        msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            msg += reasons_histogram(d.node_to_status, self.num_all_nodes)
        if d.post_filter_msg:
            msg += " " + d.post_filter_msg
        return msg


def reasons_histogram(node_to_status: NodeToStatus, num_all_nodes: int) -> str:
    """`` 2 Insufficient cpu, 3 node(s) ...`` followed by ``.``; empty when there are no reasons."""
    hist: Counter[str] = Counter()
    for st in node_to_status.statuses.values():
        for r in st.reasons:
            hist[r] += 1
    missing = num_all_nodes - len(node_to_status.statuses)
    if missing > 0:
        for r in node_to_status.absent_nodes_status.reasons:
            hist[r] += missing
    parts = sorted(f"{count} {reason}" for reason, count in hist.items())
    return " " + ", ".join(parts) + "." if parts else ""
