"""``kubesched load``: drive a trace against a live API server.

Each pod of the :class:`~kubesched.trace.workload.Workload` is created at its arrival time divided
by ``speed`` (wall seconds after the start), in namespace ``prefix + its namespace`` (created when
missing), with the label ``kubesched.io/load: <run id>`` on it and on every namespace created, so
``kubectl delete ns,pods -A -l kubesched.io/load`` finds whatever a crash left. A pod with a run
time gets the annotation ``kubesched.io/run-seconds`` (``kubesched serve --kubelet``'s kubelets
then end its containers exactly that many cluster seconds after they started) and is deleted when
it has ``Succeeded`` or, on a real cluster, ``run time / speed`` wall seconds after the driver saw
its containers start. A pod without a run time runs until the end.

The run ends when every pod has been created and every pod with a run time is gone (its deletion
seen on the watch, graceful termination included), or
``timeout`` wall seconds after the last arrival, or on :meth:`LoadDriver.stop` (Ctrl-C); then
:meth:`LoadDriver.cleanup`, unless ``keep``, deletes the pods still there and the namespaces the
driver created. The pods' last states (kept from the driver's own watch, so deleted pods are reported too), the nodes and the
kubelet Events about those pods (also kept from the driver's own watch: an API server keeps Events
for a while only, kube-apiserver's ``--event-ttl`` 1 h, ``kubesched serve`` its newest 10,000,
and a long or busy load outlives them; merged with the Events still listed at the end) then give
``kubesched startup``'s report
(:mod:`kubesched.modes.startup.analysis`). No upstream counterpart (``clusterloader2`` is the
nearest).
"""

from __future__ import annotations

import copy
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.client.client import ClusterClient
from kubesched.client.informers import Informer, ResourceEventHandlerFuncs
from kubesched.embedded.kubelet.live import RUN_SECONDS_ANNOTATION, run_seconds_text
from kubesched.errors import AlreadyExistsError, ConflictError, NotFoundError
from kubesched.modes.startup.analysis import StartupData
from kubesched.trace.workload import Workload, WorkloadPod

__all__ = ["LoadDriver", "LoadOptions", "LOAD_LABEL"]

log = logging.getLogger(__name__)

#: label on every object the driver creates (value: the run id)
LOAD_LABEL = "kubesched.io/load"


@dataclass(frozen=True)
class LoadOptions:
    """``speed`` (trace seconds per wall second, > 0), ``namespace_prefix``, ``scheduler_name``
    (None: keep the pods' own), ``keep`` (leave what was created), ``timeout`` (wall seconds after
    the last arrival), ``run_id`` (the label value; default a random 8-hex id)."""

    speed: float = 1.0
    namespace_prefix: str = "load-"
    scheduler_name: str | None = None
    keep: bool = False
    timeout: float = 600.0
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])


@dataclass
class _Tracked:
    wp: WorkloadPod
    namespace: str
    uid: str = ""
    last: dict[str, Any] | None = None
    seen_started: float | None = None  # wall time the driver saw its containers start
    delete_at: float | None = None
    deleted: bool = False  # the driver asked the API server to delete it (gone once the watch sees it go)
    gone: bool = False


def _started(pod: Mapping[str, Any]) -> bool:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return bool(statuses) and all(
        ((cs.get("state") or {}).get("running") or (cs.get("state") or {}).get("terminated"))
        for cs in statuses
    )


class LoadDriver:
    """Drives ``workload`` against ``client`` (see the module docstring). ``clock`` and ``sleep``
    are the wall clock (seconds) and a sleep; ``on_progress(created, total, gone)`` is called after
    each step."""

    def __init__(
        self,
        client: ClusterClient,
        workload: Workload,
        options: LoadOptions,
        clock: Callable[[], float] = time.monotonic,
        on_progress: Callable[[int, int, int], None] | None = None,
    ) -> None:
        self.client = client
        self.workload = workload
        self.options = options
        self.clock = clock
        self.on_progress = on_progress
        self.pods: dict[str, _Tracked] = {}  # "namespace/name" (live) -> state
        self.created_namespaces: list[str] = []
        self.problems: list[str] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._informer = Informer(client, "Pod")
        self._informer.add_handlers(
            ResourceEventHandlerFuncs(
                on_add=self._seen, on_update=lambda old, new: self._seen(new), on_delete=self._deleted
            )
        )
        #: Events about the driver's pods, by the Event's namespace/name (the newest version)
        self.events: dict[str, dict[str, Any]] = {}
        self._event_informer = Informer(client, "Event")
        self._event_informer.add_handlers(
            ResourceEventHandlerFuncs(on_add=self._event, on_update=lambda old, new: self._event(new))
        )

    # ------------------------------------------------------------------ watch

    def _mine(self, obj: Mapping[str, Any]) -> _Tracked | None:
        meta = obj.get("metadata") or {}
        if (meta.get("labels") or {}).get(LOAD_LABEL) != self.options.run_id:
            return None
        return self.pods.get(f"{meta.get('namespace')}/{meta.get('name')}")

    def _event(self, obj: dict[str, Any]) -> None:
        about = obj.get("regarding") or obj.get("involvedObject") or {}
        if about.get("kind", "Pod") != "Pod":
            return
        with self._lock:
            if f"{about.get('namespace')}/{about.get('name')}" not in self.pods:
                return
            meta = obj.get("metadata") or {}
            self.events[f"{meta.get('namespace')}/{meta.get('name')}"] = obj

    def _seen(self, obj: dict[str, Any]) -> None:
        with self._lock:
            tr = self._mine(obj)
            if tr is None or tr.gone:
                return
            tr.last = obj
            if tr.seen_started is None and _started(obj):
                tr.seen_started = self.clock()
                if tr.wp.duration is not None:
                    tr.delete_at = tr.seen_started + tr.wp.duration / self.options.speed
            if (obj.get("status") or {}).get("phase") in (
                "Succeeded",
                "Failed",
            ) and tr.wp.duration is not None:
                tr.delete_at = min(tr.delete_at or self.clock(), self.clock())

    def _deleted(self, obj: dict[str, Any]) -> None:
        with self._lock:
            tr = self._mine(obj)
            if tr is not None:
                tr.last = obj
                tr.gone = True

    # ------------------------------------------------------------------ actions

    def _namespace(self, ns: str) -> str:
        live = f"{self.options.namespace_prefix}{ns}"
        if live in self.created_namespaces:
            return live
        try:
            self.client.create(
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {"name": live, "labels": {LOAD_LABEL: self.options.run_id}},
                }
            )
            self.created_namespaces.append(live)
        except AlreadyExistsError:
            pass
        return live

    def _manifest(self, wp: WorkloadPod, namespace: str) -> dict[str, Any]:
        obj = copy.deepcopy(dict(wp.manifest))
        meta = obj.setdefault("metadata", {})
        meta["name"], meta["namespace"] = wp.name, namespace
        meta["labels"] = {**(meta.get("labels") or {}), LOAD_LABEL: self.options.run_id}
        meta.pop("ownerReferences", None)  # the owners are not created
        for key in ("uid", "resourceVersion", "creationTimestamp"):
            meta.pop(key, None)
        if wp.duration is not None:
            meta["annotations"] = {
                **(meta.get("annotations") or {}),
                RUN_SECONDS_ANNOTATION: run_seconds_text(wp.duration),
            }
        spec = obj.setdefault("spec", {})
        if self.options.scheduler_name is not None:
            spec["schedulerName"] = self.options.scheduler_name
        obj.pop("status", None)
        return obj

    def _create(self, wp: WorkloadPod) -> None:
        ns = self._namespace(wp.namespace)
        tr = _Tracked(wp, ns)
        with self._lock:
            self.pods[f"{ns}/{wp.name}"] = tr
        try:
            created = self.client.create(self._manifest(wp, ns))
        except (AlreadyExistsError, ConflictError) as e:
            self.problems.append(f"Pod {ns}/{wp.name}: {e}")
            with self._lock:
                tr.gone = True
            return
        with self._lock:
            tr.uid = str((created.get("metadata") or {}).get("uid") or "")
            if tr.last is None:
                tr.last = created

    def _delete(self, tr: _Tracked) -> None:
        try:
            self.client.delete("Pod", tr.namespace, tr.wp.name)
        except NotFoundError:
            with self._lock:
                tr.gone = True
            return
        with self._lock:
            tr.deleted = True

    def _due_deletions(self, now: float) -> list[_Tracked]:
        with self._lock:
            return [
                tr
                for tr in self.pods.values()
                if not (tr.gone or tr.deleted) and tr.delete_at is not None and tr.delete_at <= now
            ]

    def _done(self) -> bool:
        with self._lock:
            return all(
                tr.gone or (tr.wp.duration is None and tr.seen_started is not None)
                for tr in self.pods.values()
            )

    def stop(self) -> None:
        """Stop early (Ctrl-C): no more pods are created; :meth:`run` cleans up and returns."""
        self._stop.set()

    def run(self) -> None:
        """Create, watch and delete as described in the module docstring, until done, timed out or
        stopped. Then read the report (:meth:`startup_data`) before :meth:`cleanup`: deleting the
        namespaces deletes their Events."""
        self._informer.start()
        self._event_informer.start()
        t0 = self.clock()
        pods = list(self.workload.pods)
        i = 0
        last_arrival = (pods[-1].arrival / self.options.speed) if pods else 0.0
        while not self._stop.is_set():
            now = self.clock() - t0
            while i < len(pods) and pods[i].arrival / self.options.speed <= now:
                self._create(pods[i])
                i += 1
            for tr in self._due_deletions(self.clock()):
                self._delete(tr)
            if self.on_progress is not None:
                self.on_progress(i, len(pods), sum(tr.gone for tr in self.pods.values()))
            if i == len(pods) and self._done():
                break
            if i == len(pods) and now > last_arrival + self.options.timeout:
                self.problems.append(f"timed out {self.options.timeout:g} s after the last arrival")
                break
            wake = [pods[i].arrival / self.options.speed + t0] if i < len(pods) else []
            with self._lock:
                wake += [
                    tr.delete_at
                    for tr in self.pods.values()
                    if not (tr.gone or tr.deleted) and tr.delete_at is not None
                ]
            delay = min([*wake, self.clock() + 0.2]) - self.clock()
            self._stop.wait(max(0.0, min(delay, 0.2)))

    def cleanup(self) -> None:
        """Unless ``keep``: delete the pods still there and the namespaces created; stop watching."""
        self._event_informer.stop()
        if self.options.keep:
            self._informer.stop()
            return
        with self._lock:
            left = [tr for tr in self.pods.values() if not tr.gone]
        for tr in left:
            self._delete(tr)
        self._informer.stop()
        for ns in self.created_namespaces:
            try:
                self.client.delete("Namespace", None, ns)
            except NotFoundError:
                pass

    def startup_data(self, nodes: list[Any], events: list[Any]) -> StartupData:
        """The pods' last states with ``nodes`` and the Events of the load's namespaces (those
        ``events`` listed now, and those the driver's watch kept that are no longer listed), for
        :func:`~kubesched.modes.startup.analysis.analyse`."""
        with self._lock:
            pods = [tr.last for tr in self.pods.values() if tr.last is not None]
            kept = dict(self.events)
        namespaces = {tr.namespace for tr in self.pods.values()}
        mine = [
            e
            for e in events
            if ((e.get("regarding") or e.get("involvedObject") or {}).get("namespace") in namespaces)
        ]
        for e in mine:
            meta = e.get("metadata") or {}
            kept.pop(f"{meta.get('namespace')}/{meta.get('name')}", None)
        mine += kept.values()
        return StartupData(pods, nodes, mine, source=f"kubesched load {self.options.run_id}")
