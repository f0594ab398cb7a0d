"""Finishing graceful pod deletions in a cluster without kubelets.

In a real cluster the API server only marks a bound pod as being deleted (``deletionTimestamp``
= now + grace period); the kubelet stops its containers and then deletes the pod for good
(``DeleteOptions{GracePeriodSeconds: 0}``, ``pkg/kubelet/status/status_manager.go``). The embedded
cluster has no kubelet, so such a pod would stay ``Terminating`` forever: ``kubectl delete pod``
waits forever, and a preemptor waits forever for its victims to go.

:class:`DeletionFinalizer` plays the kubelet's part for every node: it deletes a pod for good once
its ``deletionTimestamp`` has passed (its grace period is over, as for containers that ignore
SIGTERM). ``kubesched serve --finalize-deletions`` (the default) runs one.
"""

from __future__ import annotations

import heapq
import logging
import threading
from typing import Any

from kubesched.api.timestamps import parse_rfc3339
from kubesched.client.client import Subscription, WatchEvent
from kubesched.clock import Clock
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import NotFoundError

__all__ = ["DeletionFinalizer"]

log = logging.getLogger(__name__)

#: Longest wait between two checks of the clock (seconds), so a clock that is not the wall clock
#: (or a timestamp rounded to the second) is still followed closely.
MAX_WAIT = 1.0


class DeletionFinalizer:
    """Deletes (for good) every pod of ``cluster`` whose ``metadata.deletionTimestamp`` is at or
    before ``clock.now()``, from a daemon thread, typically within a second of that time.

    :meth:`start` watches pods (existing ones included); :meth:`stop` ends the watch and the
    thread. ``finalized`` counts the pods deleted.
    """

    def __init__(self, cluster: MemoryCluster, clock: Clock) -> None:
        self.cluster = cluster
        self.clock = clock
        self.finalized = 0
        self._due: list[tuple[float, str, str, str]] = []  # (epoch seconds, namespace, name, uid)
        self._cond = threading.Condition()
        self._stopped = False
        self._sub: Subscription | None = None
        self._thread = threading.Thread(target=self._loop, name="deletion-finalizer", daemon=True)

    def start(self) -> DeletionFinalizer:
        """Watch pods and start the thread."""
        self._sub = self.cluster.watch("Pod", None, self._on_event)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching and end the thread (idempotent)."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        if self._sub is not None:
            self._sub.stop()
            self._sub = None
        if self._thread.is_alive():
            self._thread.join(5)

    def _on_event(self, ev: WatchEvent) -> None:
        """Store watch handler (runs under the store's lock: only queues)."""
        if ev.type == "DELETED":
            return
        meta: Any = ev.object.get("metadata") or {}
        ts = meta.get("deletionTimestamp")
        if not ts:
            return
        try:
            due = parse_rfc3339(str(ts))
        except ValueError:
            return
        with self._cond:
            heapq.heappush(
                self._due,
                (
                    due,
                    str(meta.get("namespace") or ""),
                    str(meta.get("name") or ""),
                    str(meta.get("uid") or ""),
                ),
            )
            self._cond.notify_all()

    def _loop(self) -> None:
        while True:
            with self._cond:
                if self._stopped:
                    return
                now = self.clock.now()
                ready = []
                while self._due and self._due[0][0] <= now:
                    ready.append(heapq.heappop(self._due))
                if not ready:
                    wait = MAX_WAIT if not self._due else min(MAX_WAIT, max(0.0, self._due[0][0] - now))
                    self._cond.wait(wait)
                    continue
            for _, namespace, name, uid in ready:
                self._finalize(namespace, name, uid)

    def _finalize(self, namespace: str, name: str, uid: str) -> None:
        try:
            pod = self.cluster.get("Pod", namespace, name)
        except NotFoundError:
            return
        meta = pod.get("metadata") or {}
        ts = meta.get("deletionTimestamp")
        if str(meta.get("uid") or "") != uid or not ts:
            return
        try:
            if parse_rfc3339(str(ts)) > self.clock.now():
                return  # moved (cannot move later, but be safe): the newer event queued it again
        except ValueError:
            return
        try:
            self.cluster.delete("Pod", namespace, name, grace=False)
        except NotFoundError:
            return
        self.finalized += 1
        log.info("finalized the deletion of pod %s/%s (grace period over, no kubelet)", namespace, name)
