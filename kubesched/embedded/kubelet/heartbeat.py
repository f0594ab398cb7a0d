"""Node heartbeats of the embedded kubelets (``kubesched serve --kubelet``): each running kubelet
keeps its Node ``Ready`` and renews its Lease in ``kube-node-lease``, as the kubelet's node status
manager and node lease controller do.

* When a kubelet starts (its Node is seen), it posts the node conditions ``MemoryPressure``,
  ``DiskPressure`` and ``PIDPressure`` ``False`` and ``Ready`` ``True`` (reasons
  ``KubeletHasSufficientMemory``, ``KubeletHasNoDiskPressure``, ``KubeletHasSufficientPID``,
  ``KubeletReady``; ``pkg/kubelet/nodestatus/setters.go``) and creates its Lease
  ``kube-node-lease/<node>`` (``holderIdentity`` the node name, ``leaseDurationSeconds`` 40, owned
  by the Node; ``pkg/kubelet/nodelease``, ``staging/src/k8s.io/component-helpers/apimachinery/lease``).
* Every :data:`RENEW_SECONDS` (10 s: a quarter of the lease duration) the Lease's ``renewTime`` is
  renewed; every :data:`STATUS_REPORT_SECONDS` (5 min, ``nodeStatusReportFrequency``) the
  conditions' ``lastHeartbeatTime`` is posted again.
* A node annotated ``kubesched.io/kubelet-stopped`` (:data:`STOPPED_ANNOTATION`, any value) has its
  kubelet stopped: no Lease renewals and no status posts, so the node lifecycle controller marks it
  ``Unknown`` and taints it ``node.kubernetes.io/unreachable`` after its grace period. Removing the
  annotation starts the kubelet again: it posts ``Ready`` ``True`` and renews its Lease at once.
  (``kubectl annotate node n1 kubesched.io/kubelet-stopped=true`` /
  ``kubectl annotate node n1 kubesched.io/kubelet-stopped-``.)

Times are the cluster clock's (sped up by ``serve --speed``). Writes happen on the clock's timer
thread; store watch handlers only schedule work.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubesched.api.timestamps import rfc3339, rfc3339_micro
from kubesched.client.client import WatchEvent
from kubesched.clock import Clock, Timer
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import AlreadyExistsError, KubeschedError, NotFoundError

__all__ = [
    "LEASE_DURATION_SECONDS",
    "NODE_LEASE_NAMESPACE",
    "NodeHeartbeats",
    "RENEW_SECONDS",
    "STATUS_REPORT_SECONDS",
    "STOPPED_ANNOTATION",
    "ready_conditions",
]

log = logging.getLogger(__name__)

#: node annotation that stops (present) or starts (removed) the node's kubelet
STOPPED_ANNOTATION = "kubesched.io/kubelet-stopped"
#: namespace of the node Leases (``v1.NamespaceNodeLease``)
NODE_LEASE_NAMESPACE = "kube-node-lease"
#: kubelet ``nodeLeaseDurationSeconds`` default (s)
LEASE_DURATION_SECONDS = 40
#: Lease renew interval: ``nodeLeaseDurationSeconds * 0.25`` (``nodelease.NewController``) (s)
RENEW_SECONDS = LEASE_DURATION_SECONDS * 0.25
#: kubelet ``nodeStatusReportFrequency`` default (s)
STATUS_REPORT_SECONDS = 300.0

_CONDITIONS = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)


def ready_conditions(node: Mapping[str, Any], now: float) -> list[dict[str, Any]]:
    """The conditions a healthy kubelet posts at ``now`` (epoch seconds): each keeps its
    ``lastTransitionTime`` when its status is unchanged."""
    status = node.get("status")
    current = {
        c.get("type"): c
        for c in (status.get("conditions") or [] if isinstance(status, Mapping) else [])
        if isinstance(c, Mapping)
    }
    stamp = rfc3339(now)
    out = []
    for ctype, value, reason, message in _CONDITIONS:
        before = current.get(ctype) or {}
        transition = before.get("lastTransitionTime") if before.get("status") == value else None
        out.append(
            {
                "type": ctype,
                "status": value,
                "lastHeartbeatTime": stamp,
                "lastTransitionTime": transition or stamp,
                "reason": reason,
                "message": message,
            }
        )
    return out


class NodeHeartbeats:
    """The heartbeats of every node's kubelet in ``cluster`` (module docstring). :meth:`start`
    watches nodes and starts the renew loop; :meth:`stop` ends both."""

    def __init__(self, cluster: MemoryCluster, clock: Clock) -> None:
        self.cluster = cluster
        self.clock = clock
        self._running: dict[str, float] = {}  # node -> clock time of its last status post
        self._stopped: set[str] = set()
        self._timer: Timer | None = None
        self._subs: list[Any] = []
        self._closed = False

    def start(self) -> NodeHeartbeats:
        self._subs.append(self.cluster.watch("Node", None, self._enqueue))
        self._timer = self.clock.call_later(RENEW_SECONDS, self._tick, daemon=True)
        return self

    def stop(self) -> None:
        self._closed = True
        for sub in self._subs:
            sub.stop()
        self._subs.clear()
        if self._timer is not None:
            self._timer.cancel()

    def running(self) -> list[str]:
        """Names of the nodes whose kubelet runs."""
        return sorted(self._running)

    def _enqueue(self, ev: WatchEvent) -> None:
        self.clock.call_later(0.0, lambda: self._handle(ev))

    def _handle(self, ev: WatchEvent) -> None:
        meta = ev.object.get("metadata") or {}
        name = str(meta.get("name"))
        if ev.type == "DELETED":
            self._running.pop(name, None)
            self._stopped.discard(name)
            return
        stopped = STOPPED_ANNOTATION in (meta.get("annotations") or {})
        if stopped:
            if self._running.pop(name, None) is not None or name not in self._stopped:
                log.info("kubelet of node %s stopped", name)
            self._stopped.add(name)
        elif name not in self._running:
            self._stopped.discard(name)
            self._beat(name, post_status=True)

    def _tick(self) -> None:
        if self._closed:
            return
        now = self.clock.now()
        for name in list(self._running):
            self._beat(name, post_status=now - self._running[name] >= STATUS_REPORT_SECONDS)
        self._timer = self.clock.call_later(RENEW_SECONDS, self._tick, daemon=True)

    def _beat(self, name: str, *, post_status: bool) -> None:
        now = self.clock.now()
        try:
            if post_status:
                node = self.cluster.get("Node", None, name)
                self.cluster.patch_status("Node", None, name, {"conditions": ready_conditions(node, now)})
                self._running[name] = now
            self._renew_lease(name, now)
        except NotFoundError:
            self._running.pop(name, None)
        except KubeschedError as e:
            log.info("kubelet: node %s heartbeat not written: %s", name, e)

    def _renew_lease(self, name: str, now: float) -> None:
        try:
            lease = self.cluster.get("Lease", NODE_LEASE_NAMESPACE, name)
        except NotFoundError:
            node = self.cluster.get("Node", None, name)
            try:
                self.cluster.create(
                    {
                        "apiVersion": "coordination.k8s.io/v1",
                        "kind": "Lease",
                        "metadata": {
                            "name": name,
                            "namespace": NODE_LEASE_NAMESPACE,
                            "ownerReferences": [
                                {
                                    "apiVersion": "v1",
                                    "kind": "Node",
                                    "name": name,
                                    "uid": node["metadata"].get("uid"),
                                }
                            ],
                        },
                        "spec": {
                            "holderIdentity": name,
                            "leaseDurationSeconds": LEASE_DURATION_SECONDS,
                            "renewTime": rfc3339_micro(now),
                        },
                    }
                )
            except AlreadyExistsError:
                pass
            return
        spec: dict[str, Any] = lease["spec"] if isinstance(lease.get("spec"), dict) else {}
        self.cluster.update(
            {
                **lease,
                "spec": {
                    **spec,
                    "holderIdentity": name,
                    "leaseDurationSeconds": LEASE_DURATION_SECONDS,
                    "renewTime": rfc3339_micro(now),
                },
            }
        )
