"""The taint eviction controller: deletes pods from nodes with ``NoExecute`` taints they do not
tolerate, or tolerate only for a while, as ``pkg/controller/tainteviction/taint_eviction.go``
does (``processPodOnNode``, ``getMinTolerationTime``, ``deletePodHandler``).

For a pod bound to a node with ``NoExecute`` taints:

* a taint no toleration of the pod tolerates: the pod is deleted at once;
* every taint tolerated: the pod is deleted ``min(tolerationSeconds)`` of the tolerations used
  after the controller saw the taints (a toleration without ``tolerationSeconds`` tolerates for
  ever; a negative or zero value deletes at once); a pod already scheduled for deletion keeps the
  earlier time;
* the taints gone (or the pod's tolerations widened): the scheduled deletion is cancelled.

A deletion first adds the pod condition ``DisruptionTarget`` ``True`` (reason
``DeletionByTaintManager``, ``Taint manager: deleting due to NoExecute taint``), then deletes the
pod gracefully (its kubelet, or the cluster's deletion finalizer, removes it). Pods with the
``DefaultTolerationSeconds`` tolerations (300 s for ``node.kubernetes.io/not-ready`` and
``node.kubernetes.io/unreachable``) therefore leave an unreachable node 5 minutes after it is
tainted. Not modelled: the ``TaintManagerEviction`` Events.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubesched.api.taints import NO_EXECUTE, Taint, Toleration, parse_taints, parse_tolerations
from kubesched.api.timestamps import rfc3339
from kubesched.client.client import Subscription, WatchEvent
from kubesched.clock import Clock, Timer
from kubesched.embedded.controllers.controller_utils import mapping_field
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import KubeschedError, ManifestError, NotFoundError

__all__ = ["TaintEvictionController", "min_toleration_seconds"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]


def min_toleration_seconds(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]) -> float | None:
    """Seconds until a pod with ``tolerations`` must leave a node with ``NoExecute`` ``taints``:
    0 when a taint is not tolerated, None (never) when no toleration used has
    ``tolerationSeconds``, else the smallest ``tolerationSeconds`` (negative counts as 0)
    (``getMatchingTolerations`` + ``getMinTolerationTime``)."""
    used: list[Toleration] = []
    for taint in taints:
        matching = [t for t in tolerations if t.tolerates(taint)]
        if not matching:
            return 0.0
        used.extend(matching)
    seconds = [t.toleration_seconds for t in used if t.toleration_seconds is not None]
    if not seconds:
        return None
    return float(max(0, min(seconds)))


class TaintEvictionController:
    """Evicts pods of ``cluster`` from ``NoExecute``-tainted nodes on ``clock`` (module
    docstring). :meth:`start` watches nodes and pods (existing ones included); :meth:`stop` ends
    the watches and cancels the scheduled deletions."""

    def __init__(self, cluster: MemoryCluster, clock: Clock) -> None:
        self.cluster = cluster
        self.clock = clock
        self._timers: dict[str, tuple[float, Timer]] = {}  # pod uid -> (deletion time, timer)
        #: node name -> its NoExecute taints, kept from the node watch (``taintedNodes``)
        self._node_taints: dict[str, tuple[Taint, ...]] = {}
        self._subs: list[Subscription] = []
        self.evicted = 0

    def start(self) -> TaintEvictionController:
        self._subs = [
            self.cluster.watch("Node", None, self._on_event),
            self.cluster.watch("Pod", None, self._on_event),
        ]
        return self

    def stop(self) -> None:
        for sub in self._subs:
            sub.stop()
        self._subs = []
        for _, timer in self._timers.values():
            timer.cancel()
        self._timers.clear()

    def _on_event(self, ev: WatchEvent) -> None:
        try:
            if ev.kind == "Node":
                name = str((ev.object.get("metadata") or {}).get("name"))
                if ev.type == "DELETED":
                    self._node_taints.pop(name, None)
                    return
                taints = self._node_taints[name] = self._no_execute(ev.object)
                if ev.old_object is None or self._no_execute(ev.old_object) != taints:
                    self._node_changed(ev.object, taints)
            elif ev.type == "DELETED":
                self._cancel(str((ev.object.get("metadata") or {}).get("uid")))
            else:
                self._pod_changed(ev.object)
        except (KubeschedError, ValueError) as e:
            log.warning("taint eviction controller: %s: %s", ev.kind, e)

    def _no_execute(self, node: Mapping[str, Any]) -> tuple[Taint, ...]:
        spec = mapping_field(node, "spec")
        try:
            taints = parse_taints(spec.get("taints"), "spec.taints")
        except ManifestError:
            return ()
        return tuple(t for t in taints if t.effect == NO_EXECUTE)

    def _node_changed(self, node: Obj, taints: tuple[Taint, ...]) -> None:
        name = node["metadata"]["name"]
        for pod in self.cluster.list("Pod").items:
            if (pod.get("spec") or {}).get("nodeName") == name:
                self._process(pod, taints)

    def _pod_changed(self, pod: Obj) -> None:
        node_name = (pod.get("spec") or {}).get("nodeName")
        if not node_name:
            return
        taints = self._node_taints.get(str(node_name))
        if taints is None:
            return  # a node not (or no longer) in the store
        self._process(pod, taints)

    def _process(self, pod: Obj, taints: tuple[Taint, ...]) -> None:
        """``processPodOnNode``."""
        meta = pod.get("metadata") or {}
        uid = str(meta.get("uid"))
        if meta.get("deletionTimestamp") or not taints:
            self._cancel(uid)
            return
        try:
            tolerations = parse_tolerations((pod.get("spec") or {}).get("tolerations"), "spec.tolerations")
        except ManifestError:
            tolerations = ()
        seconds = min_toleration_seconds(taints, tolerations)
        if seconds is None:
            self._cancel(uid)
            return
        now = self.clock.now()
        when = now + seconds
        scheduled = self._timers.get(uid)
        if scheduled is not None:
            if scheduled[0] <= when:
                return
            scheduled[1].cancel()
        namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name"))
        if seconds <= 0:
            self._timers.pop(uid, None)
            self._evict(namespace, name, uid)
            return
        timer = self.clock.call_at(when, lambda: self._fire(namespace, name, uid), daemon=True)
        self._timers[uid] = (when, timer)

    def _cancel(self, uid: str) -> None:
        scheduled = self._timers.pop(uid, None)
        if scheduled is not None:
            scheduled[1].cancel()

    def _fire(self, namespace: str, name: str, uid: str) -> None:
        self._timers.pop(uid, None)
        try:
            self._evict(namespace, name, uid)
        except KubeschedError as e:
            log.info("taint eviction controller: pod %s/%s not evicted: %s", namespace, name, e)

    def _evict(self, namespace: str, name: str, uid: str) -> None:
        """``deletePodHandler``: the ``DisruptionTarget`` condition, then a graceful delete."""
        try:
            pod = self.cluster.get("Pod", namespace, name)
        except NotFoundError:
            return
        if (pod.get("metadata") or {}).get("uid") != uid or (pod.get("metadata") or {}).get(
            "deletionTimestamp"
        ):
            return
        log.info("taint eviction controller: deleting pod %s/%s (NoExecute taint)", namespace, name)
        self.cluster.patch_status(
            "Pod",
            namespace,
            name,
            {
                "conditions": [
                    {
                        "type": "DisruptionTarget",
                        "status": "True",
                        "reason": "DeletionByTaintManager",
                        "message": "Taint manager: deleting due to NoExecute taint",
                        "lastTransitionTime": rfc3339(self.clock.now()),
                    }
                ]
            },
        )
        self.cluster.delete("Pod", namespace, name, grace=True)
        self.evicted += 1
