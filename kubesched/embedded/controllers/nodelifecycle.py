"""The node lifecycle controller: notices nodes whose kubelet stopped posting heartbeats, marks
them ``Unknown`` and taints them, as ``pkg/controller/nodelifecycle/node_lifecycle_controller.go``
does (``monitorNodeHealth``, ``tryUpdateNodeHealth``, ``doNoScheduleTaintingPass``,
``doNoExecuteTaintingPass``).

Every :data:`NODE_MONITOR_PERIOD` seconds (5 s, ``--node-monitor-period``) each node's health is
probed: the probe time moves to now whenever its ``Ready`` condition's ``lastHeartbeatTime`` or its
Lease's (``kube-node-lease/<node>``) ``renewTime`` changed since the last look. A node whose probe
time is older than :data:`NODE_MONITOR_GRACE_PERIOD` (50 s, ``--node-monitor-grace-period``,
40 s before v1.32) -- :data:`NODE_STARTUP_GRACE_PERIOD` (60 s, ``--node-startup-grace-period``)
while it never posted ``Ready`` -- gets
its ``Ready``, ``MemoryPressure``, ``DiskPressure`` and ``PIDPressure`` conditions set to
``Unknown`` (reason ``NodeStatusUnknown``, ``Kubelet stopped posting node status.``; a node that
never posted ``Ready`` gets ``Ready`` ``Unknown`` with ``NodeStatusNeverUpdated``, ``Kubelet never
posted node status.``).

Taints follow the ``Ready`` condition: ``Unknown`` -> ``node.kubernetes.io/unreachable`` with
effects ``NoSchedule`` and ``NoExecute`` (``timeAdded`` set); ``False`` ->
``node.kubernetes.io/not-ready`` likewise; ``True`` -> both removed. The pods on a node tainted
``NoExecute`` are then evicted by the taint eviction controller
(:mod:`kubesched.embedded.controllers.tainteviction`).

The defaults are kube-controller-manager's (``pkg/controller/nodelifecycle/config/v1alpha1/
defaults.go: RecommendedDefaultNodeLifecycleControllerConfiguration``, the flags registered by
``cmd/kube-controller-manager/app/options/nodelifecyclecontroller.go: AddFlags``).

Differences from upstream: no zone states or eviction rate limiting (every node is tainted as soon
as it is found unhealthy, as upstream does for the first node of a healthy zone); the probe runs on
the cluster clock (``serve --speed`` shortens every period alike).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.timestamps import rfc3339
from kubesched.clock import Clock, Timer
from kubesched.embedded.controllers.controller_utils import mapping_field
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import KubeschedError, NotFoundError

__all__ = [
    "NODE_MONITOR_GRACE_PERIOD",
    "NODE_MONITOR_PERIOD",
    "NODE_STARTUP_GRACE_PERIOD",
    "NodeLifecycleController",
    "TAINT_NOT_READY",
    "TAINT_UNREACHABLE",
]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: ``--node-monitor-period`` default (s)
NODE_MONITOR_PERIOD = 5.0
#: ``--node-monitor-grace-period`` default (s): 50 s since v1.32, 40 s before
#: (``nodelifecycle/config/v1alpha1/defaults.go: RecommendedDefaultNodeLifecycleControllerConfiguration``)
NODE_MONITOR_GRACE_PERIOD = 50.0
#: ``--node-startup-grace-period`` default (s)
NODE_STARTUP_GRACE_PERIOD = 60.0
TAINT_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_NOT_READY = "node.kubernetes.io/not-ready"
_LEASE_NAMESPACE = "kube-node-lease"
_CONDITIONS = ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")


@dataclass
class _Health:
    probe: float  # clock time of the last observed heartbeat
    heartbeat: str | None  # Ready.lastHeartbeatTime last seen
    renew: str | None  # Lease renewTime last seen


def _conditions(node: Mapping[str, Any]) -> dict[str, Obj]:
    status = node.get("status")
    conds = status.get("conditions") if isinstance(status, Mapping) else None
    return {c["type"]: dict(c) for c in conds or [] if isinstance(c, Mapping) and c.get("type")}


class NodeLifecycleController:
    """Monitors every node of ``cluster`` on ``clock`` (module docstring). :meth:`start` starts
    the periodic pass; :meth:`stop` ends it; :meth:`monitor` runs one pass."""

    def __init__(
        self,
        cluster: MemoryCluster,
        clock: Clock,
        *,
        grace_period: float = NODE_MONITOR_GRACE_PERIOD,
        startup_grace_period: float = NODE_STARTUP_GRACE_PERIOD,
        period: float = NODE_MONITOR_PERIOD,
    ) -> None:
        self.cluster = cluster
        self.clock = clock
        self.grace_period = grace_period
        self.startup_grace_period = startup_grace_period
        self.period = period
        self._health: dict[str, _Health] = {}
        self._timer: Timer | None = None
        self._closed = False

    def start(self) -> NodeLifecycleController:
        self._timer = self.clock.call_later(self.period, self._tick, daemon=True)
        return self

    def stop(self) -> None:
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()

    def _tick(self) -> None:
        if self._closed:
            return
        try:
            self.monitor()
        except Exception:  # noqa: BLE001 - one failed pass never stops the controller
            log.exception("node lifecycle controller: monitor pass failed")
        self._timer = self.clock.call_later(self.period, self._tick, daemon=True)

    def monitor(self) -> None:
        """One ``monitorNodeHealth`` pass over every node."""
        now = self.clock.now()
        leases = {
            lease["metadata"]["name"]: lease for lease in self.cluster.list("Lease", _LEASE_NAMESPACE).items
        }
        nodes = self.cluster.list("Node").items
        names = set()
        for node in nodes:
            name = node["metadata"]["name"]
            names.add(name)
            try:
                self._sync(node, leases.get(name), now)
            except NotFoundError:
                continue
            except KubeschedError as e:
                log.info("node lifecycle controller: node %s: %s", name, e)
        for gone in set(self._health) - names:
            del self._health[gone]

    def _sync(self, node: Obj, lease: Obj | None, now: float) -> None:
        name = node["metadata"]["name"]
        conds = _conditions(node)
        ready = conds.get("Ready")
        heartbeat = ready.get("lastHeartbeatTime") if ready else None
        renew = (lease.get("spec") or {}).get("renewTime") if lease else None
        health = self._health.get(name)
        if health is None:
            health = self._health[name] = _Health(now, heartbeat, renew)
        elif heartbeat != health.heartbeat or renew != health.renew:
            health.probe, health.heartbeat, health.renew = now, heartbeat, renew
        grace = self.grace_period if ready is not None else self.startup_grace_period
        if now > health.probe + grace:
            node = self._mark_unknown(node, conds, now)
        self._taint(node, now)

    def _mark_unknown(self, node: Obj, conds: dict[str, Obj], now: float) -> Obj:
        """``tryUpdateNodeHealth``: the node's conditions to ``Unknown`` (those not already)."""
        stamp = rfc3339(now)
        patch: list[Obj] = []
        if "Ready" not in conds:
            patch.append(
                {
                    "type": "Ready",
                    "status": "Unknown",
                    "reason": "NodeStatusNeverUpdated",
                    "message": "Kubelet never posted node status.",
                    "lastHeartbeatTime": None,
                    "lastTransitionTime": stamp,
                }
            )
        for ctype in _CONDITIONS:
            cond = conds.get(ctype)
            if cond is None or cond.get("status") == "Unknown":
                continue
            patch.append(
                {
                    **cond,
                    "status": "Unknown",
                    "reason": "NodeStatusUnknown",
                    "message": "Kubelet stopped posting node status.",
                    "lastTransitionTime": stamp,
                }
            )
        if not patch:
            return node
        log.info(
            "node %s: kubelet stopped posting node status; conditions set to Unknown",
            node["metadata"]["name"],
        )
        return self.cluster.patch_status("Node", None, node["metadata"]["name"], {"conditions": patch})

    def _taint(self, node: Obj, now: float) -> None:
        """``doNoScheduleTaintingPass`` + ``doNoExecuteTaintingPass`` for one node."""
        ready = _conditions(node).get("Ready")
        status = (ready or {}).get("status")
        want_key = (
            TAINT_UNREACHABLE if status == "Unknown" else TAINT_NOT_READY if status == "False" else None
        )
        spec = mapping_field(node, "spec")
        taints = [t for t in spec.get("taints") or [] if isinstance(t, Mapping)]
        ours = (TAINT_UNREACHABLE, TAINT_NOT_READY)
        kept = [t for t in taints if t.get("key") not in ours or t.get("key") == want_key]
        if want_key is not None:
            for effect in ("NoSchedule", "NoExecute"):
                if not any(t.get("key") == want_key and t.get("effect") == effect for t in kept):
                    taint: Obj = {"key": want_key, "effect": effect}
                    if effect == "NoExecute":
                        taint["timeAdded"] = rfc3339(now)
                    kept.append(taint)
        if kept == taints:
            return
        self.cluster.update({**node, "spec": {**spec, "taints": kept}})
