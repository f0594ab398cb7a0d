"""API writes off the scheduling thread (``kubesched run``).

Upstream's scheduling cycle never waits on the network for anything but what it must know: the
binding cycle runs in its own goroutine, status patches (``util.PatchPodStatus`` in
``handleSchedulingFailure``) and victim deletions (``prepareCandidateAsync``) in goroutines of
their own, events in the broadcaster's. :class:`WriteBehindClient` gives the scheduler the same
shape over a synchronous :class:`~kubesched.client.client.ClusterClient`:

* a Pod's ``patch_status`` (the scheduler's ``PodScheduled=False`` and ``nominatedNodeName``
  patches) and ``delete`` are handed to an :class:`AsyncWriter` and return at once
  (``patch_status`` returns ``{}``: nothing reads that answer); the writes of one object run in
  order, on one worker (writes are routed by ``kind/namespace/name``), on a small pool of threads
  sharing the client's connection pool. Failures are logged (a victim already gone is not an
  error), as upstream logs them.
* ``patch_status`` of other kinds stays synchronous: DynamicResources' PreBind writes a claim's
  ``status.allocation`` and ``status.reservedFor`` and must have them stored, and keep the stored
  claim in its assume cache, before the pod is bound (upstream's ``UpdateStatus`` in
  ``bindClaim``); answered at once, the device would look free to the next cycle until the
  informer caught up, and the binding could reach the API server before the allocation.
* ``bind`` stays synchronous: it runs in the binding cycle, off the scheduling thread already,
  and the binding cycle needs its result.
* reads, watches, ``create``/``update`` (leader election, volume binding) go straight through.

A worker pool of threads rather than asyncio: the client stack is synchronous (urllib3), and
measured on ``kubesched bench --api`` the GIL-bound cost per request is what counts; a handful
of threads keeps a few requests in flight without a second event loop.
"""

from __future__ import annotations

import builtins
import logging
import queue
import threading
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.client.client import (
    ClusterClient,
    GroupVersionResource,
    ListResult,
    Subscription,
    WatchHandler,
)
from kubesched.errors import NotFoundError

__all__ = ["AsyncWriter", "WriteBehindClient"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]


class AsyncWriter:
    """``workers`` threads, each with a FIFO queue; :meth:`submit` routes by key so the writes
    of one object keep their order. :meth:`stop` drains the queues and joins the threads."""

    def __init__(self, workers: int = 4, max_queued: int = 10_000) -> None:
        self._queues: list[queue.Queue[tuple[str, Callable[[], Any]] | None]] = [
            queue.Queue(max_queued) for _ in range(max(1, workers))
        ]
        self._threads = [
            threading.Thread(target=self._work, args=(q,), name=f"api-writer-{i}", daemon=True)
            for i, q in enumerate(self._queues)
        ]
        self._pending = 0
        self._lock = threading.Condition()
        for t in self._threads:
            t.start()

    def submit(self, key: str, what: str, fn: Callable[[], Any]) -> None:
        """Run ``fn`` on the worker of ``key``; ``what`` names the write in failure logs. Blocks
        only when that worker's queue is full (back pressure)."""
        with self._lock:
            self._pending += 1
        self._queues[hash(key) % len(self._queues)].put((what, fn))

    def _work(self, q: queue.Queue[tuple[str, Callable[[], Any]] | None]) -> None:
        while True:
            item = q.get()
            if item is None:
                return
            what, fn = item
            try:
                fn()
            except NotFoundError:
                log.debug("%s: already gone", what)
            except Exception as e:  # noqa: BLE001 - a failed write is logged, never fatal
                log.warning("%s failed: %s", what, e)
            finally:
                with self._lock:
                    self._pending -= 1
                    if self._pending == 0:
                        self._lock.notify_all()

    def pending(self) -> int:
        """Writes queued or running."""
        with self._lock:
            return self._pending

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every submitted write finished; False on timeout."""
        with self._lock:
            return self._lock.wait_for(lambda: self._pending == 0, timeout)

    def stop(self, timeout: float = 10.0) -> None:
        """Finish the queued writes and stop the workers."""
        for q in self._queues:
            q.put(None)
        for t in self._threads:
            t.join(timeout)


class WriteBehindClient:
    """A :class:`~kubesched.client.client.ClusterClient` whose Pod ``patch_status`` and ``delete``
    go through ``writer`` (see the module docstring); everything else is ``inner``'s."""

    def __init__(self, inner: ClusterClient, writer: AsyncWriter) -> None:
        self.inner = inner
        self.writer = writer

    def list(
        self, kind: str, namespace: str | None = None, label_selector: str | Mapping[str, str] | None = None
    ) -> ListResult:
        """``inner.list``."""
        return self.inner.list(kind, namespace, label_selector)

    def watch(self, kind: str, resource_version: str | None, handler: WatchHandler) -> Subscription:
        """``inner.watch``."""
        return self.inner.watch(kind, resource_version, handler)

    def get(self, kind: str, namespace: str | None, name: str) -> Obj:
        """``inner.get``."""
        return self.inner.get(kind, namespace, name)

    def create(self, obj: Obj) -> Obj:
        """``inner.create``."""
        return self.inner.create(obj)

    def update(self, obj: Obj) -> Obj:
        """``inner.update``."""
        return self.inner.update(obj)

    def patch_status(self, kind: str, namespace: str | None, name: str, patch: Obj) -> Obj:
        """A Pod's: queue the status patch and return ``{}`` at once. Other kinds': ``inner``'s,
        synchronously (module docstring)."""
        inner = self.inner
        if kind != "Pod":
            return inner.patch_status(kind, namespace, name, patch)
        self.writer.submit(
            f"{kind}/{namespace}/{name}",
            f"patching status of {kind} {namespace}/{name}",
            lambda: inner.patch_status(kind, namespace, name, patch),
        )
        return {}

    def delete(self, kind: str, namespace: str | None, name: str, *, grace: bool = False) -> None:
        """Queue the deletion; returns at once (a missing object is logged at debug level)."""
        inner = self.inner
        self.writer.submit(
            f"{kind}/{namespace}/{name}",
            f"deleting {kind} {namespace}/{name}",
            lambda: inner.delete(kind, namespace, name, grace=grace),
        )

    def bind(self, namespace: str, name: str, uid: str, node_name: str) -> None:
        """``inner.bind`` (synchronous: the binding cycle needs the answer)."""
        self.inner.bind(namespace, name, uid, node_name)

    def create_event(self, event: Obj) -> None:
        """``inner.create_event`` (the scheduler's events go through the event broadcaster instead)."""
        self.inner.create_event(event)

    def serves_resource(self, gvr: GroupVersionResource) -> bool:
        """``inner.serves_resource``."""
        return self.inner.serves_resource(gvr)

    def list_resource(
        self,
        gvr: GroupVersionResource,
        namespace: str | None = None,
        label_selector: str | Mapping[str, str] | None = None,
    ) -> builtins.list[Obj]:
        """``inner.list_resource``."""
        return self.inner.list_resource(gvr, namespace, label_selector)

    def create_resource(self, gvr: GroupVersionResource, obj: Obj) -> Obj:
        """``inner.create_resource``."""
        return self.inner.create_resource(gvr, obj)

    def delete_resource(self, gvr: GroupVersionResource, namespace: str | None, name: str) -> None:
        """``inner.delete_resource`` (synchronous)."""
        self.inner.delete_resource(gvr, namespace, name)
