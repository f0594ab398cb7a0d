"""``ClusterClient``: the only door between kubesched and a cluster.

Both the embedded store (:mod:`kubesched.embedded.store`) and the real API
server backend implement this protocol. Objects are plain Kubernetes JSON dicts
(what ``kubectl get -o json`` shows), identified by ``kind`` plus
``(namespace, name)``; cluster-scoped kinds (:func:`kubesched.api.kinds.is_cluster_scoped`) use
namespace ``""``/None.

Ownership: dicts returned by a client (and passed to watch handlers) are shared
with the store and with every other reader. Callers must not mutate them; to
change an object build a new dict (e.g. ``{**pod, "spec": {**pod["spec"], ...}}``
or ``copy.deepcopy``) and write it back with ``update``/``patch_status``.

Errors (from :mod:`kubesched.errors`) mirror the API server's status reasons:
``NotFoundError`` (404), ``ConflictError`` (409, including ``AlreadyExistsError``),
``GoneError`` (410, watch from a compacted resourceVersion).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, runtime_checkable

if TYPE_CHECKING:
    from kubesched.client.throttled_log import ThrottledLog

__all__ = [
    "ClusterClient",
    "GroupVersionResource",
    "ListResult",
    "Subscription",
    "WatchEvent",
    "WatchEventType",
]

Obj = dict[str, Any]

WatchEventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]


class GroupVersionResource(NamedTuple):
    """A resource by its API path (upstream ``schema.GroupVersionResource``), e.g.
    ``GroupVersionResource("apps.kruise.io", "v1alpha1", "imagepulljobs")``; ``group`` ``""`` is
    the core group."""

    group: str
    version: str
    resource: str

    def __str__(self) -> str:
        return (
            f"{self.resource}.{self.group}/{self.version}"
            if self.group
            else f"{self.resource}/{self.version}"
        )


class WatchEvent(NamedTuple):
    """One watch notification (upstream ``watch.Event``).

    ``object`` is the object after the change (for DELETED: its last state,
    carrying the deletion's resourceVersion). ``old_object`` is the previous
    stored state for MODIFIED and DELETED when the backend knows it (the
    embedded store always does), else None.
    """

    type: WatchEventType
    kind: str
    object: Obj
    old_object: Obj | None = None


class ListResult(NamedTuple):
    """Result of ``list``: the items (sorted by namespace/name, like etcd keys) and the
    collection resourceVersion to start a watch from."""

    items: list[Obj]
    resource_version: str


class Subscription(Protocol):
    """A running watch; ``stop()`` ends it (idempotent; no handler call starts after it returns
    on the stopping thread)."""

    def stop(self) -> None: ...


WatchHandler = Callable[[WatchEvent], None]


@runtime_checkable
class ResumableSubscription(Protocol):
    """A watch that resumes by itself after errors (``KubeClusterClient``'s): ``failing`` while its
    last attempt failed; ``server_changed`` when it ended because the server's history went
    backwards or the server went away (every kind must then be re-listed, not just this one)."""

    failing: bool
    server_changed: bool

    def stop(self) -> None: ...


@runtime_checkable
class ResumableWatchClient(Protocol):
    """A client whose watches outlive errors and whose handler calls are serialised
    (``KubeClusterClient``; the embedded store is neither and is driven synchronously).

    ``watch_resumable(kind, resource_version, handler, on_gone)`` is ``watch`` that calls
    ``on_gone()`` (outside ``dispatch_lock``) when the informer must re-list; ``dispatch_lock`` is
    held around every handler call; ``retry_log`` rate-limits the retry warnings."""

    dispatch_lock: AbstractContextManager[Any]
    retry_log: ThrottledLog

    def watch_resumable(
        self,
        kind: str,
        resource_version: str | None,
        handler: WatchHandler,
        on_gone: Callable[[], None] | None,
    ) -> ResumableSubscription: ...


class ClusterClient(Protocol):
    """Synchronous access to Kubernetes objects (a small subset of client-go's ``Interface``)."""

    def list(
        self,
        kind: str,
        namespace: str | None = None,
        label_selector: str | Mapping[str, str] | None = None,
    ) -> ListResult:
        """All objects of ``kind`` (optionally one namespace / matching a label selector, either
        the string syntax ``a=b,c!=d,e in (x,y),!f`` or a ``matchLabels`` mapping).

        Upstream: ``GET /api/v1/pods`` (``client-go ...Pods(ns).List``), the informer's initial list.
        """
        ...

    def watch(self, kind: str, resource_version: str | None, handler: WatchHandler) -> Subscription:
        """Deliver changes of ``kind`` to ``handler``.

        ``resource_version`` None/"" or "0": first an ADDED event for every existing object, then
        changes (upstream "get state and start at most recent"). Otherwise every change after that
        version. Raises GoneError (HTTP 410, ``too old resource version: R (O)``) if changes after
        it are no longer retained. Upstream: ``GET /api/v1/pods?watch=1&resourceVersion=R``
        (``ListWatch`` in client-go reflectors).
        """
        ...

    def get(self, kind: str, namespace: str | None, name: str) -> Obj:
        """The stored object. Raises NotFoundError (``pods "web-1" not found``).
        Upstream: ``GET /api/v1/namespaces/{ns}/pods/{name}``."""
        ...

    def create(self, obj: Obj) -> Obj:
        """Store a new object and return the stored copy (resourceVersion, uid, creationTimestamp
        filled). Raises AlreadyExistsError (``pods "web-1" already exists``).
        Upstream: ``POST /api/v1/namespaces/{ns}/pods``."""
        ...

    def update(self, obj: Obj) -> Obj:
        """Replace an object. If ``metadata.resourceVersion`` is set it must equal the stored one,
        else ConflictError (``Operation cannot be fulfilled on pods "web-1": the object has been
        modified; please apply your changes to the latest version and try again``). Like the API
        server, ``status`` of kinds with a status subresource is kept (use ``patch_status``).
        Raises NotFoundError. Upstream: ``PUT /api/v1/namespaces/{ns}/pods/{name}``."""
        ...

    def patch_status(self, kind: str, namespace: str | None, name: str, patch: Obj) -> Obj:
        """Merge ``patch`` into the object's ``status`` (JSON merge patch: nested mappings merge,
        ``None`` deletes a key, lists replace) except ``conditions``, merged by ``type`` as the
        strategic merge patch does (``patchMergeKey: type``). Returns the stored object.
        Upstream: ``PATCH /api/v1/namespaces/{ns}/pods/{name}/status``
        (``util.PatchPodStatus`` in ``pkg/scheduler/util/utils.go``)."""
        ...

    def delete(self, kind: str, namespace: str | None, name: str, *, grace: bool = False) -> None:
        """Delete an object. With ``grace=True`` a bound, non-terminated Pod only gets
        ``metadata.deletionTimestamp`` (now + ``spec.terminationGracePeriodSeconds``, default 30)
        and stays until deleted again without grace (the kubelet's job); other objects go at once.
        Raises NotFoundError. Upstream: ``DELETE /api/v1/namespaces/{ns}/pods/{name}``."""
        ...

    def bind(self, namespace: str, name: str, uid: str, node_name: str) -> None:
        """Assign a pod to a node: sets ``spec.nodeName`` and the condition ``PodScheduled=True``.

        Raises NotFoundError (``pods "web-1" not found``) and ConflictError:
        ``Operation cannot be fulfilled on pods/binding "web-1": pod web-1 is already assigned to
        node "n1"`` (also for a pod being deleted or with scheduling gates), and for a uid that is
        not the pod's ``Operation cannot be fulfilled on pods "web-1": Precondition failed: UID in
        precondition: <uid>, UID in object meta: <pod uid>``.
        Upstream: ``POST /api/v1/namespaces/{ns}/pods/{name}/binding``
        (``BindingREST.Create`` in ``pkg/registry/core/pod/storage/storage.go``).
        """
        ...

    def create_event(self, event: Obj) -> None:
        """Record an ``events.k8s.io/v1`` Event. Upstream: ``POST /apis/events.k8s.io/v1/namespaces/
        {ns}/events`` (the scheduler's event broadcaster; failures are only logged there)."""
        ...

    # ---- resources by group/version/resource (custom resources; upstream's dynamic client) --------

    def serves_resource(self, gvr: GroupVersionResource) -> bool:
        """Whether the server serves ``gvr`` (discovery: ``GET /apis/{group}/{version}`` lists it;
        False when the group/version is not served). Upstream: ``discovery.ServerResourcesForGroupVersion``."""
        ...

    def list_resource(
        self,
        gvr: GroupVersionResource,
        namespace: str | None = None,
        label_selector: str | Mapping[str, str] | None = None,
    ) -> builtins.list[Obj]:
        """The objects of ``gvr`` (one namespace, or all; optionally matching a label selector), sorted
        by namespace/name. Raises NotFoundError (``the server could not find the requested resource``)
        when ``gvr`` is not served. Upstream: ``dynamic.Interface.Resource(gvr).Namespace(ns).List``."""
        ...

    def create_resource(self, gvr: GroupVersionResource, obj: Obj) -> Obj:
        """Store a new object of ``gvr`` in ``metadata.namespace`` and return the stored copy
        (``metadata.generateName`` honoured). Raises NotFoundError when ``gvr`` is not served,
        AlreadyExistsError. Upstream: ``dynamic.Interface.Resource(gvr).Namespace(ns).Create``."""
        ...

    def delete_resource(self, gvr: GroupVersionResource, namespace: str | None, name: str) -> None:
        """Delete one object of ``gvr``. Raises NotFoundError (object or resource missing).
        Upstream: ``dynamic.Interface.Resource(gvr).Namespace(ns).Delete``."""
        ...
