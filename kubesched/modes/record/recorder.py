"""``kubesched record``: watch a cluster and write what a replay needs to a recording.

What is recorded (through the project's informers: list, then watch, re-list after ``410 Gone``):

* **Nodes**, with ``status.images`` (the kubelet's image cache), allocatable, labels and taints. A
  node update that changes nothing but heartbeat times (``lastHeartbeatTime`` of its conditions,
  ``resourceVersion``) is not written: kubelets send one every 10 s per node.
* **Pods**: every add, update (binding, ``PodScheduled``, container states) and delete.
* **Workload owners**: the Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs and
  ReplicationControllers the client can watch (what pods' ``ownerReferences`` name).
* **Image Events** of the kubelet about pods: ``Pulling``, ``Pulled`` (with the pull duration and
  ``Image size``: ``pkg/kubelet/images/image_manager.go``, ``EnsureImageExists``) and ``Failed``.

Never recorded: Secrets and ConfigMaps (not watched), ``metadata.managedFields``, the
``kubectl.kubernetes.io/last-applied-configuration`` annotation, and containers' ``env`` and
``envFrom`` (inline values may be credentials); a replay needs none of them. With a namespace,
namespaced objects of other namespaces are dropped (the watches themselves are cluster-wide, so
the recorder needs cluster-wide read access: ``deploy/record``).

The log format is :mod:`kubesched.modes.record.log`. No upstream counterpart.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api import kinds
from kubesched.client.client import ClusterClient
from kubesched.client.informers import InformerSet, ResourceEventHandlerFuncs
from kubesched.modes.record.log import FORMAT_VERSION, RecordWriter

__all__ = ["Recorder", "recorded_kinds", "IMAGE_EVENT_REASONS", "OWNER_KINDS", "sanitize"]

log = logging.getLogger(__name__)

#: kubelet Event reasons about images that are recorded
IMAGE_EVENT_REASONS = frozenset({"Pulling", "Pulled", "Failed"})
#: workload kinds that own pods, recorded when the client serves them
OWNER_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController")
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")

Obj = Mapping[str, Any]


def recorded_kinds() -> list[str]:
    """The kinds a recording holds, in list order (Nodes first, Events last): the owner kinds the
    Kind registry (:mod:`kubesched.api.kinds`) knows."""
    return ["Node", *[k for k in OWNER_KINDS if kinds.api_version(k) is not None], "Pod", "Event"]


def _strip_container(c: Obj) -> dict[str, Any]:
    return {k: v for k, v in c.items() if k not in ("env", "envFrom")}


def sanitize(kind: str, obj: Obj) -> dict[str, Any]:
    """A copy of ``obj`` without what is never recorded (see the module docstring); the input is
    not modified."""
    out = dict(obj)
    meta = dict(out.get("metadata") or {})
    meta.pop("managedFields", None)
    annotations = meta.get("annotations")
    if isinstance(annotations, Mapping) and _LAST_APPLIED in annotations:
        meta["annotations"] = {k: v for k, v in annotations.items() if k != _LAST_APPLIED}
    out["metadata"] = meta
    spec = out.get("spec")
    if kind == "Pod" and isinstance(spec, Mapping):
        out["spec"] = _strip_pod_spec(spec)
    elif isinstance(spec, Mapping) and isinstance(spec.get("template"), Mapping):
        template = dict(spec["template"])
        if isinstance(template.get("spec"), Mapping):
            template["spec"] = _strip_pod_spec(template["spec"])
        out["spec"] = {**spec, "template": template}
    return out


def _strip_pod_spec(spec: Obj) -> dict[str, Any]:
    new = dict(spec)
    for key in _CONTAINER_LISTS:
        if isinstance(new.get(key), list):
            new[key] = [_strip_container(c) if isinstance(c, Mapping) else c for c in new[key]]
    return new


def _node_fingerprint(node: Obj) -> Any:
    """The node without what changes at every heartbeat (for skipping heartbeat-only updates)."""
    meta = {
        k: v for k, v in (node.get("metadata") or {}).items() if k not in ("resourceVersion", "managedFields")
    }
    status = dict(node.get("status") or {})
    status["conditions"] = [
        {k: v for k, v in c.items() if k != "lastHeartbeatTime"}
        for c in status.get("conditions") or []
        if isinstance(c, Mapping)
    ]
    return meta, node.get("spec"), status


def _is_image_event(ev: Obj) -> bool:
    regarding = ev.get("regarding") or ev.get("involvedObject") or {}
    return str(ev.get("reason") or "") in IMAGE_EVENT_REASONS and regarding.get("kind") == "Pod"


class Recorder:
    """Records ``client``'s cluster into ``writer`` (see the module docstring).

    ``start()`` writes the session record, lists every kind (Nodes first) and starts the watches;
    ``stop()`` stops them and closes the writer. ``counts`` holds records written per kind.
    ``namespace`` (None: all) keeps namespaced objects of that namespace only. ``clock`` gives
    epoch seconds (the records' ``t``)."""

    def __init__(
        self,
        client: ClusterClient,
        writer: RecordWriter,
        *,
        namespace: str | None = None,
        clock: Callable[[], float] = time.time,
        source: str = "",
    ) -> None:
        self.client = client
        self.writer = writer
        self.namespace = namespace
        self.clock = clock
        self.source = source
        self.kinds = recorded_kinds()
        self.informers = InformerSet(client, self.kinds)
        self.counts: dict[str, int] = {k: 0 for k in self.kinds}
        self._nodes: dict[str, Any] = {}
        self._lock = threading.Lock()
        for kind in self.kinds:
            self.informers.informer(kind).add_handlers(self._handlers(kind))

    def _handlers(self, kind: str) -> ResourceEventHandlerFuncs:
        def on_add(obj: dict[str, Any]) -> None:
            self._record("add", kind, obj)

        def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
            self._record("update", kind, new)

        def on_delete(obj: dict[str, Any]) -> None:
            self._record("delete", kind, obj)

        return ResourceEventHandlerFuncs(on_add=on_add, on_update=on_update, on_delete=on_delete)

    def _keep(self, op: str, kind: str, obj: Obj) -> bool:
        meta = obj.get("metadata") or {}
        if (
            not kinds.is_cluster_scoped(kind)
            and self.namespace is not None
            and meta.get("namespace") != self.namespace
        ):
            return False
        if kind == "Event":
            return _is_image_event(obj)
        if kind == "Node":
            name = str(meta.get("name"))
            with self._lock:
                if op == "delete":
                    self._nodes.pop(name, None)
                    return True
                fp = _node_fingerprint(obj)
                if op == "update" and self._nodes.get(name) == fp:
                    return False
                self._nodes[name] = fp
        return True

    def _record(self, op: str, kind: str, obj: Obj) -> None:
        if not self._keep(op, kind, obj):
            return
        self.writer.append(
            {"op": op, "t": round(self.clock(), 6), "kind": kind, "object": sanitize(kind, obj)}
        )
        with self._lock:
            self.counts[kind] += 1

    def start(self) -> None:
        """Write the session record, list every kind and start watching (returns once listed)."""
        self.writer.append(
            {
                "op": "session",
                "t": round(self.clock(), 6),
                "version": FORMAT_VERSION,
                "kinds": self.kinds,
                "namespace": self.namespace,
                "source": self.source,
            }
        )
        self.informers.start(order=self.kinds)
        self.writer.append({"op": "synced", "t": round(self.clock(), 6), "kinds": self.kinds})
        self.writer.flush()

    def stop(self) -> None:
        """Stop the watches, flush and close the log (idempotent)."""
        self.informers.stop()
        self.writer.close()

    def run(self, *, duration: float | None, flush_seconds: float, stop: threading.Event) -> None:
        """Start, then flush every ``flush_seconds`` until ``duration`` seconds have passed (None:
        until ``stop`` is set), then stop."""
        self.start()
        deadline = None if duration is None else time.monotonic() + duration
        try:
            while not stop.is_set():
                wait = flush_seconds if deadline is None else min(flush_seconds, deadline - time.monotonic())
                if wait <= 0 or stop.wait(wait):
                    break
                self.writer.flush()
                if deadline is not None and time.monotonic() >= deadline:
                    break
        finally:
            self.stop()
