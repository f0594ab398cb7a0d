"""The nominator (``pkg/scheduler/backend/queue/nominator.go``).

Remembers which node each preempting pod was nominated to: ``node -> {uid: PodInfo}`` (in
nomination order) and ``uid -> node``. Not thread-safe on its own: the
:class:`~kubesched.queue.scheduling_queue.PriorityQueue` calls it under its lock.
"""

from __future__ import annotations

from collections.abc import Callable

from kubesched.api.pod import Pod
from kubesched.framework.node_info import PodInfo
from kubesched.framework.results import NominatingInfo, NominatingMode

#: ``pod_lister(namespace/name) -> Pod | None``: the informer's current copy of a pod.
PodLister = Callable[[str], "Pod | None"]


class Nominator:
    """Nominated pods per node.

    ``pod_lister`` (optional) is consulted on add: a pod gone from the informer, or already
    bound there, is not nominated.
    """

    __slots__ = ("_pod_lister", "_by_node", "_node_of")

    def __init__(self, pod_lister: PodLister | None = None) -> None:
        self._pod_lister = pod_lister
        self._by_node: dict[str, dict[str, PodInfo]] = {}
        self._node_of: dict[str, str] = {}

    def add_nominated_pod(self, pod_info: PodInfo, nominating_info: NominatingInfo | None) -> None:
        """Nominate ``pod_info``: delete any existing entry; node = ``nominating_info`` name if
        its mode is Override, else the pod's ``status.nominatedNodeName``; empty -> nothing."""
        pod = pod_info.pod
        self._delete(pod.uid)
        if nominating_info is not None and nominating_info.mode == NominatingMode.Override:
            node = nominating_info.nominated_node_name
        else:
            node = pod.nominated_node_name
        if not node:
            return
        if self._pod_lister is not None:
            current = self._pod_lister(pod.key)
            if current is None or current.node_name:
                return
        self._node_of[pod.uid] = node
        self._by_node.setdefault(node, {})[pod.uid] = pod_info

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        """Forget the pod's nomination, if any."""
        self._delete(pod.uid)

    def update_nominated_pod(self, old_pod: Pod | None, new_pod_info: PodInfo) -> None:
        """Replace the stored pod; keeps the in-memory nomination when neither the old nor the
        new pod carries ``status.nominatedNodeName``."""
        info: NominatingInfo | None = None
        old_uid = old_pod.uid if old_pod is not None else new_pod_info.pod.uid
        old_nnn = old_pod.nominated_node_name if old_pod is not None else ""
        if not old_nnn and not new_pod_info.pod.nominated_node_name:
            node = self._node_of.get(old_uid)
            if node is not None:
                info = NominatingInfo(node, NominatingMode.Override)
        self._delete(old_uid)
        self.add_nominated_pod(new_pod_info, info)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """PodInfos nominated to ``node_name`` in nomination order (a new list)."""
        m = self._by_node.get(node_name)
        return list(m.values()) if m else []

    def nominated_node_names(self) -> list[str]:
        """Names of the nodes that have nominated pods (a new list)."""
        return list(self._by_node)

    def nominated_node(self, uid: str) -> str | None:
        """The node the pod with ``uid`` is nominated to, or ``None``."""
        return self._node_of.get(uid)

    def __len__(self) -> int:
        return len(self._node_of)

    def _delete(self, uid: str) -> None:
        node = self._node_of.pop(uid, None)
        if node is None:
            return
        m = self._by_node.get(node)
        if m is not None:
            m.pop(uid, None)
            if not m:
                del self._by_node[node]
