"""Informer event handlers feeding the cache and the queue (``pkg/scheduler/eventhandlers.go``:
``addAllEventHandlers``, which wires ``sched.Cache``, ``sched.SchedulingQueue`` and
``sched.Profiles``; :class:`EventHandlers` takes exactly those, plus the malformed-pod bookkeeping).

Pods are parsed once per resourceVersion. A malformed pod is never scheduled: its error is
recorded in ``invalid_pods`` (``"namespace/name" -> message``) and logged; a pending pod
of one of our profiles gets one Warning event ``FailedScheduling`` and ``PodScheduled=False`` with
reason ``SchedulerError``, both naming the field. A malformed *bound* pod still counts on its node
for what can be read of it (:func:`kubesched.api.pod_partial.readable_pod`; a node whose pod's
requests cannot be read is full for new pods) and gets one Warning event ``InvalidPod``. Every
other pod is unaffected.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from kubesched.api import kinds
from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.api.pod_partial import ReadablePod, readable_pod
from kubesched.client.informers import InformerSet
from kubesched.client.informers import ResourceEventHandlerFuncs as InformerHandlers
from kubesched.errors import ManifestError
from kubesched.framework.events import (
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    NODE_DELETE,
    ActionType,
    ClusterEvent,
    EventResource,
)
from kubesched.queue.pod_events import pod_scheduling_properties_change

if TYPE_CHECKING:
    from kubesched.framework.results import NominatingInfo
    from kubesched.framework.runtime import Framework


class HandlerQueue(Protocol):
    """What the handlers use of the scheduling queue
    (:class:`~kubesched.queue.scheduling_queue.PriorityQueue`): pending pods in and out, and the
    cluster events that move unschedulable pods."""

    def add(self, pod: Pod) -> None: ...

    def update(self, old_pod: Pod | None, new_pod: Pod) -> None: ...

    def delete(self, pod: Pod) -> None: ...

    def assigned_pod_added(self, pod: Pod) -> None: ...

    def assigned_pod_updated(self, old_pod: Pod | None, new_pod: Pod, event: ClusterEvent) -> None: ...

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old_obj: Any = None,
        new_obj: Any = None,
        pre_check: Callable[[Pod], bool] | None = None,
    ) -> None: ...


class HandlerCache(Protocol):
    """What the handlers use of the scheduler cache (:class:`~kubesched.cache.cache.Cache`): bound
    pods and nodes."""

    def add_pod(self, pod: Pod) -> None: ...

    def update_pod(self, old: Pod, new: Pod) -> None: ...

    def remove_pod(self, pod: Pod) -> None: ...

    def add_node(self, node: Node) -> object: ...

    def update_node(self, old: Node, new: Node) -> object: ...

    def remove_node(self, node: Node) -> None: ...


#: ``patch_failed_status(pod, reason, message, nominating)``: ``PodScheduled=False`` for a pod that
#: cannot be scheduled (``Scheduler.patch_failed_status``)
FailedStatusPatch = Callable[[Pod, str, str, "NominatingInfo | None"], None]


log = logging.getLogger(__name__)

#: kinds with handlers of their own in :meth:`EventHandlers.register`; every other watched kind
#: with an event resource (:mod:`kubesched.api.kinds`) gets ``<Resource>Add/Update/Delete`` moves
_OWN_HANDLERS = frozenset({"Pod", "Node"})


def node_update_events(old: Node, new: Node) -> list[ClusterEvent]:
    """Derived node update events (upstream ``nodeSchedulingPropertiesChange``)."""
    out = []
    if old.allocatable != new.allocatable:
        out.append(ClusterEvent(EventResource.Node, ActionType.UpdateNodeAllocatable))
    if old.labels != new.labels:
        out.append(ClusterEvent(EventResource.Node, ActionType.UpdateNodeLabel))
    if old.taints != new.taints or (old.unschedulable and not new.unschedulable):
        out.append(ClusterEvent(EventResource.Node, ActionType.UpdateNodeTaint))
    if [(c.get("type"), c.get("status")) for c in old.conditions] != [
        (c.get("type"), c.get("status")) for c in new.conditions
    ]:
        out.append(ClusterEvent(EventResource.Node, ActionType.UpdateNodeCondition))
    if old.annotations != new.annotations:
        out.append(ClusterEvent(EventResource.Node, ActionType.UpdateNodeAnnotation))
    return out


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    return meta if isinstance(meta, Mapping) else {}


def _key(obj: Mapping[str, Any]) -> str:
    meta = _meta(obj)
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def _cache_key(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") if type(obj) is dict else _meta(obj)
    if type(meta) is not dict:
        meta = _meta(obj)
    return str(meta.get("uid") or _key(obj)), str(meta.get("resourceVersion") or "")


def _guarded(kind: str, fn: Callable[..., None]) -> Callable[..., None]:
    """``fn`` with any failure logged naming the object, so one bad object never stops the watch."""

    def call(*objs: Any) -> None:
        try:
            fn(*objs)
        except Exception:  # noqa: BLE001 - the informer must keep delivering every other object
            log.exception("%s %s: event handler %s failed", kind, _key(objs[-1]), fn.__name__)

    return call


class EventHandlers:
    """Wires informers to the scheduler's cache and queue.

    ``cache`` and ``queue`` receive bound and pending pods; ``profiles`` (scheduler name ->
    framework) decide which pending pods are ours and record their Events; ``invalid_pods`` is the
    ``"namespace/name" -> message`` map of malformed pods (shared with the scheduler; a new map by
    default); ``patch_failed_status`` writes ``PodScheduled=False`` for a malformed pending pod
    (None: only the Event)."""

    def __init__(
        self,
        cache: HandlerCache,
        queue: HandlerQueue,
        profiles: Mapping[str, Framework],
        *,
        invalid_pods: dict[str, str] | None = None,
        patch_failed_status: FailedStatusPatch | None = None,
    ) -> None:
        self.cache = cache
        self.queue = queue
        self.profiles = profiles
        self.invalid_pods: dict[str, str] = invalid_pods if invalid_pods is not None else {}
        self._patch_failed_status = patch_failed_status
        self._pods: dict[tuple[str, str], Pod] = {}
        self._malformed: set[tuple[str, str]] = set()
        self._reported_bound: dict[str, str] = {}
        self._nodes: dict[str, Node] = {}
        #: pods parsed by the caller from the manifests it loaded, by ``namespace/name`` (:meth:`prime`)
        self._primed: dict[str, Pod] = {}

    # ---- parsing --------------------------------------------------------------------------------

    def parsed_pod(self, obj: Mapping[str, Any]) -> Pod | None:
        """The parsed Pod for ``obj`` (cached per uid+resourceVersion). A malformed pod is reported
        (see module docstring) and gives None when pending, or what can be read of it when bound.
        A pending pod of another scheduler (``spec.schedulerName`` of no profile) is neither parsed
        nor reported: None, as upstream's unscheduled-pod informer filters it out
        (``pkg/scheduler/eventhandlers.go``: ``responsibleForPod``)."""
        ck = _cache_key(obj)
        p = self._pods.get(ck)
        if p is not None:
            return p
        if ck in self._malformed or not self._maybe_ours(obj):
            return None
        if self._primed:
            hint = self._primed.pop(_key(obj), None)
            if hint is not None:
                p = hint.stored_as(obj)
                if p is not None:
                    self._pods[ck] = p
                    return p
        try:
            p = Pod.from_manifest(obj)
        except ManifestError as e:
            return self._malformed_pod(obj, ck, e)
        self._pods[ck] = p
        return p

    def _maybe_ours(self, obj: Mapping[str, Any]) -> bool:
        """False for a pending pod whose ``spec.schedulerName`` (default ``default-scheduler``)
        names none of our profiles; True for a bound pod (the cache counts every bound pod) and
        for an object whose spec cannot be read (it is parsed, and reported, as before)."""
        spec = obj.get("spec") if isinstance(obj, Mapping) else None
        if not isinstance(spec, Mapping) or spec.get("nodeName"):
            return True
        name = spec.get("schedulerName") or "default-scheduler"
        return not isinstance(name, str) or name in self.profiles

    def prime(self, pods: Iterable[Pod]) -> None:
        """Pods the caller already parsed from the manifests it loaded into the cluster (a
        simulation checks its input first): the first object seen of each ``namespace/name`` is
        read through :meth:`Pod.stored_as` instead of being parsed again when it is the stored
        copy of that manifest (else it is parsed as usual). Each primed pod is used at most once."""
        for p in pods:
            self._primed[p.key] = p

    def _malformed_pod(self, obj: Mapping[str, Any], ck: tuple[str, str], err: ManifestError) -> Pod | None:
        key = _key(obj)
        msg = str(err.located(f"Pod {key}"))
        if self.invalid_pods.get(key) != msg:
            self.invalid_pods[key] = msg
            log.error("%s", msg)
        if not isinstance(obj, Mapping) or not _meta(obj).get("name"):
            self._malformed.add(ck)
            return None
        readable = readable_pod(obj)
        try:
            self._report(readable, err)
        except Exception as e:  # noqa: BLE001 - reporting never stops the informer
            log.error("could not report malformed pod %s: %s", key, e)
        if readable.pod.node_name:
            self._pods[ck] = readable.pod
            return readable.pod
        self._malformed.add(ck)
        return None

    def _report(self, readable: ReadablePod, err: ManifestError) -> None:
        """One Event (and, for a pending pod, the PodScheduled condition) naming the field."""
        pod = readable.pod
        msg = str(err)
        fwk = self.profiles.get(pod.scheduler_name)
        if pod.node_name:
            if pod.is_terminal or self._reported_bound.get(pod.uid) == msg:
                return
            self._reported_bound[pod.uid] = msg
            fwk = fwk or next(iter(self.profiles.values()), None)
            note = f"{msg}; counted on node {pod.node_name} for what can be read"
            if readable.requests_unreadable:
                note += (
                    "; its requests cannot be read, so the node is full for new pods until the pod changes"
                )
            log.error("bound pod %s: %s", pod.key, note)
            if fwk is not None and fwk.event_recorder is not None:
                fwk.event_recorder.eventf(pod, None, "Warning", "InvalidPod", "Caching", note)
            return
        if fwk is None or pod.is_terminal:
            return
        cond = next((c for c in pod.conditions if c.get("type") == "PodScheduled"), None)
        if cond is not None and cond.get("reason") == "SchedulerError" and cond.get("message") == msg:
            return  # already reported (this is the echo of our own status update)
        if fwk.event_recorder is not None:
            fwk.event_recorder.eventf(pod, None, "Warning", "FailedScheduling", "Scheduling", msg)
        if self._patch_failed_status is not None:
            self._patch_failed_status(pod, "SchedulerError", msg, None)

    def _remember(self, obj: Mapping[str, Any], pod: Pod) -> None:
        self._pods[_cache_key(obj)] = pod

    def _forget_parsed(self, obj: Mapping[str, Any]) -> None:
        ck = _cache_key(obj)
        self._pods.pop(ck, None)
        self._malformed.discard(ck)

    def parsed_node(self, obj: Mapping[str, Any]) -> Node | None:
        """The parsed Node (None if malformed; logged)."""
        meta = _meta(obj)
        name = str(meta.get("name"))
        rv = str(meta.get("resourceVersion") or "")
        n = self._nodes.get(name)
        if n is not None and n.resource_version == rv and n.raw is obj:
            return n
        try:
            n = Node.from_manifest(obj)
        except ManifestError as e:
            log.error("%s", e.located(f"Node {name}"))
            return None
        self._nodes[name] = n
        return n

    # ---- registration ---------------------------------------------------------------------------

    def register(self, informers: InformerSet) -> None:
        """Attach handlers to the Pod and Node informers, and queue moves to the informers of every
        other watched kind with an event resource (the storage kinds)."""
        informers.informer("Pod").add_handlers(
            InformerHandlers(
                _guarded("Pod", self.on_pod_add),
                _guarded("Pod", self.on_pod_update),
                _guarded("Pod", self.on_pod_delete),
            )
        )
        informers.informer("Node").add_handlers(
            InformerHandlers(
                _guarded("Node", self.on_node_add),
                _guarded("Node", self.on_node_update),
                _guarded("Node", self.on_node_delete),
            )
        )
        for kind in kinds.watched_kinds():
            row = kinds.lookup(kind)
            if kind not in _OWN_HANDLERS and row is not None and row.event_resource is not None:
                informers.informer(kind).add_handlers(self._storage_handlers(row.event_resource))

    def _storage_handlers(self, resource: str) -> InformerHandlers:
        """``<Resource>Add/Update/Delete`` moves for a storage kind."""

        def on_add(o: dict[str, Any]) -> None:
            self._move(ClusterEvent(resource, ActionType.Add), None, o)

        def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
            self._move(ClusterEvent(resource, ActionType.Update), old, new)

        def on_delete(o: dict[str, Any]) -> None:
            self._move(ClusterEvent(resource, ActionType.Delete), o, None)

        return InformerHandlers(on_add, on_update, on_delete)

    def _move(self, event: ClusterEvent, old: Any, new: Any) -> None:
        self.queue.move_all_to_active_or_backoff(event, old, new, None)

    # ---- pods -----------------------------------------------------------------------------------

    def _responsible(self, pod: Pod) -> bool:
        return pod.scheduler_name in self.profiles

    def on_pod_add(self, obj: dict[str, Any]) -> None:
        """Informer add: bound pods go to the cache, pending pods of our profiles to the queue."""
        pod = self.parsed_pod(obj)
        if pod is None or pod.is_terminal:
            return
        if pod.node_name:
            self.cache.add_pod(pod)
            self.queue.assigned_pod_added(pod)
        elif self._responsible(pod):
            self.queue.add(pod)

    def on_pod_update(self, old_obj: dict[str, Any], new_obj: dict[str, Any]) -> None:
        """Informer update: route by (old bound?, new bound?, terminal?)."""
        old = self.parsed_pod(old_obj)
        new = old.rebound(new_obj) if old is not None and not old.node_name else None
        if new is not None:
            self._remember(new_obj, new)
        else:
            new = self.parsed_pod(new_obj)
        self._forget_parsed(old_obj)
        if new is None:
            if old is not None and not old.node_name and self._responsible(old):
                self.queue.delete(old)
            return
        if old is None:
            self.on_pod_add(new_obj)
            return
        if old.node_name:
            if new.is_terminal:
                self._assigned_pod_gone(old)
                return
            self.cache.update_pod(old, new)
            for ev in pod_scheduling_properties_change(new, old):
                self.queue.assigned_pod_updated(
                    old, new, ClusterEvent(EventResource.AssignedPod, ev.action_type)
                )
            return
        if new.node_name:
            if self._responsible(old):
                self.queue.delete(old)
            if not new.is_terminal:
                self.cache.add_pod(new)
                self.queue.assigned_pod_added(new)
            return
        if not self._responsible(new):
            return
        if new.is_terminal:
            self.queue.delete(old)
            return
        self.queue.update(old, new)

    def on_pod_delete(self, obj: dict[str, Any]) -> None:
        """Informer delete: drop from the cache (bound) or the queue (pending)."""
        pod = self.parsed_pod(obj)
        self._forget_parsed(obj)
        self.invalid_pods.pop(_key(obj), None)
        self._reported_bound.pop(str(_meta(obj).get("uid") or _key(obj)), None)
        if pod is None:
            return
        if pod.node_name:
            if not pod.is_terminal:
                self._assigned_pod_gone(pod)
            return
        if self._responsible(pod):
            self.queue.delete(pod)
            fwk = self.profiles[pod.scheduler_name]
            if fwk.reject_waiting_pod(pod.uid):
                self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None, None)

    def _assigned_pod_gone(self, pod: Pod) -> None:
        try:
            self.cache.remove_pod(pod)
        except Exception as e:  # noqa: BLE001
            log.error("scheduler cache remove_pod failed for %s: %s", pod.key, e)
        self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None, None)

    # ---- nodes ----------------------------------------------------------------------------------

    def on_node_add(self, obj: dict[str, Any]) -> None:
        """Informer add: cache + ``NodeAdd``."""
        node = self.parsed_node(obj)
        if node is None:
            return
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(NODE_ADD, None, node, None)

    def on_node_update(self, old_obj: dict[str, Any], new_obj: dict[str, Any]) -> None:
        """Informer update: cache + each derived update event."""
        old = self._nodes.get(str(_meta(old_obj).get("name")))
        new = self.parsed_node(new_obj)
        if new is None:
            return
        if old is None or old is new:
            try:
                old = Node.from_manifest(old_obj)
            except ManifestError:
                self.on_node_add(new_obj)
                return
        self.cache.update_node(old, new)
        for ev in node_update_events(old, new):
            self.queue.move_all_to_active_or_backoff(ev, old, new, None)

    def on_node_delete(self, obj: dict[str, Any]) -> None:
        """Informer delete: cache + ``NodeDelete``."""
        name = str(_meta(obj).get("name"))
        node = self._nodes.pop(name, None)
        if node is None:
            try:
                node = Node.from_manifest(obj)
            except ManifestError:
                return
        self.cache.remove_node(node)
        self.queue.move_all_to_active_or_backoff(NODE_DELETE, node, None, None)
