"""The Kind registry: one row per Kubernetes kind kubesched reads, writes, serves or loads.

Every per-kind fact lives here and nowhere else: the group, version and resource names the API
server registers them under (``pkg/registry/*/rest/storage_*.go``: plural, singular, short names,
categories, namespaced, subresources), the official client model that checks a manifest's field
types, the typed parser the scheduler uses, the order objects are snapshotted and loaded in,
whether ``simulate`` loads the kind, whether the scheduler watches it, and the cluster-event
resource its changes are reported as (``pkg/scheduler/framework/types.go``: ``EventResource``).

The API client (``kubesched.client``: paths, error messages, cluster scope), the embedded store
(``kubesched.embedded.store``: cluster scope, status subresources, snapshot order), ``serve``'s
discovery and routing (``kubesched.embedded.apiserver.paths``), manifest loading
(``kubesched.embedded.manifests``), ``kubesched snapshot`` (``kubesched.client.live_snapshot``),
shape checks (``kubesched.api.shape``) and the scheduler's informers (``kubesched.scheduler``)
all read this registry at call time, so a kind added with :func:`register` (or for a while with
:func:`extra_kinds`) is picked up by all of them.

Adding a kind: one :class:`Kind` row in :data:`BUILTIN_KINDS` (in the order it loads: what it
refers to first), plus, when the scheduler parses it, a typed parser named by ``parser``, and when
the API server validates fields the scheduler reads, a check named by ``validate``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BUILTIN_KINDS",
    "Kind",
    "SUBRESOURCE_KINDS",
    "all_kinds",
    "api_version",
    "extra_kinds",
    "find",
    "generation",
    "has_subresource",
    "is_cluster_scoped",
    "lookup",
    "loadable_kinds",
    "model",
    "on_change",
    "parser",
    "register",
    "resource_name",
    "served_kinds",
    "snapshot_order",
    "validator",
    "watched_kinds",
]

#: Subresource -> (kind of its body, or ``""`` for the parent's kind; verbs), as registered
#: upstream (``pods/binding``: ``Binding``, create; ``<r>/status``: get, patch, update;
#: ``<r>/scale``: ``autoscaling/v1`` ``Scale``, get, patch, update; ``namespaces/finalize``: update).
SUBRESOURCE_KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "status": ("", ("get", "patch", "update")),
    "binding": ("Binding", ("create",)),
    "scale": ("Scale", ("get", "patch", "update")),
    "finalize": ("", ("update",)),
}


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind as the API server registers it.

    ``group`` is ``""`` for the core group. ``plural``/``singular``/``short_names``/``categories``
    are discovery's names (``pods``, ``pod``, ``po``, ``all``). ``subresources`` are keys of
    :data:`SUBRESOURCE_KINDS`. ``model`` is the official client's model class name
    (``kubernetes.client.models``, e.g. ``V1Pod``) that checks a manifest's field types; None (or
    a model the installed client lacks) checks ``metadata`` only. ``parser`` is the typed parser
    (a callable taking the object dict) or a reference to it, ``"module:attribute"``
    (``"kubesched.api.pod:Pod.from_manifest"``), resolved on first use so that this low module
    imports none of them. ``validate`` (a reference as ``parser``) checks a loaded object as the
    API server validates it on create (``kubesched.api.load_checks``; None: the parser, when there
    is one, is the check). The row order is the snapshot order
    (the embedded store's ``snapshot_objects``; ``kubesched snapshot`` reads the loadable kinds in
    it). ``loadable`` says whether ``simulate`` (and ``serve``/``bench``) load the kind from
    manifests, ``watched`` whether the scheduler's informers
    watch it (started in row order: nodes before pods), ``event_resource`` the
    ``EventResource`` its changes are reported as to the scheduling queue (None: no cluster event).
    ``store_kind`` is the kind the store keys objects by when it differs (core ``v1`` Events are
    kept as ``events.k8s.io/v1`` Events); such alias rows are served but never the kind's
    canonical row.
    """

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    model: str | None = None
    parser: str | Callable[[Any], Any] | None = None
    validate: str | Callable[[Any], Any] | None = None
    loadable: bool = False
    watched: bool = False
    event_resource: str | None = None
    store_kind: str = ""

    @property
    def group_version(self) -> str:
        """``v1`` or ``<group>/<version>`` (the objects' ``apiVersion``)."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def kind_in_store(self) -> str:
        """The kind used with a ``ClusterClient`` (``store_kind`` or ``kind``)."""
        return self.store_kind or self.kind

    @property
    def resource(self) -> str:
        """Group-qualified plural as API error messages print it (``schema.GroupResource.String()``:
        ``pods``, ``storageclasses.storage.k8s.io``)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def has_status(self) -> bool:
        """Whether ``<plural>/status`` is a subresource (a PUT of the object keeps its status)."""
        return "status" in self.subresources

    def prefix(self) -> str:
        """URL prefix of the group version (``/api/v1`` or ``/apis/<group>/<version>``)."""
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"


_VOLUME = "storage.k8s.io/"
_DRA = "resource.k8s.io/"

#: The built-in rows, in load order (what an object refers to comes before it; pods last).
BUILTIN_KINDS: tuple[Kind, ...] = (
    Kind(
        "",
        "v1",
        "Namespace",
        "namespaces",
        "namespace",
        False,
        ("ns",),
        ("status", "finalize"),
        model="V1Namespace",
        watched=True,
        loadable=True,
    ),
    Kind(
        "",
        "v1",
        "Node",
        "nodes",
        "node",
        False,
        ("no",),
        ("status",),
        model="V1Node",
        parser="kubesched.api.node:Node.from_manifest",
        watched=True,
        event_resource="Node",
        loadable=True,
    ),
    Kind(
        "scheduling.k8s.io",
        "v1",
        "PriorityClass",
        "priorityclasses",
        "priorityclass",
        False,
        ("pc",),
        model="V1PriorityClass",
        validate="kubesched.api.load_checks:check_priority_class",
        loadable=True,
    ),
    Kind(
        "storage.k8s.io",
        "v1",
        "StorageClass",
        "storageclasses",
        "storageclass",
        False,
        ("sc",),
        model="V1StorageClass",
        parser="kubesched.api.storage:StorageClass.from_obj",
        validate="kubesched.api.load_checks:check_storage_class",
        watched=True,
        event_resource=_VOLUME + "StorageClass",
        loadable=True,
    ),
    Kind(
        "storage.k8s.io",
        "v1",
        "CSIDriver",
        "csidrivers",
        "csidriver",
        False,
        model="V1CSIDriver",
        watched=True,
        event_resource=_VOLUME + "CSIDriver",
        loadable=True,
    ),
    Kind(
        "storage.k8s.io",
        "v1",
        "CSINode",
        "csinodes",
        "csinode",
        False,
        model="V1CSINode",
        validate="kubesched.api.storage:csi_node_limits",
        watched=True,
        event_resource=_VOLUME + "CSINode",
        loadable=True,
    ),
    Kind(
        "storage.k8s.io",
        "v1",
        "CSIStorageCapacity",
        "csistoragecapacities",
        "csistoragecapacity",
        True,
        model="V1CSIStorageCapacity",
        validate="kubesched.api.load_checks:check_csi_storage_capacity",
        watched=True,
        event_resource=_VOLUME + "CSIStorageCapacity",
        loadable=True,
    ),
    Kind(
        "resource.k8s.io",
        "v1",
        "DeviceClass",
        "deviceclasses",
        "deviceclass",
        False,
        model="V1DeviceClass",
        parser="kubesched.api.dra:DeviceClass.from_obj",
        watched=True,
        event_resource=_DRA + "DeviceClass",
        loadable=True,
    ),
    Kind(
        "resource.k8s.io",
        "v1",
        "ResourceSlice",
        "resourceslices",
        "resourceslice",
        False,
        model="V1ResourceSlice",
        parser="kubesched.api.dra:ResourceSlice.from_obj",
        watched=True,
        event_resource=_DRA + "ResourceSlice",
        loadable=True,
    ),
    Kind(
        "",
        "v1",
        "PersistentVolume",
        "persistentvolumes",
        "persistentvolume",
        False,
        ("pv",),
        ("status",),
        model="V1PersistentVolume",
        parser="kubesched.api.storage:PersistentVolume.from_obj",
        watched=True,
        event_resource="PersistentVolume",
        loadable=True,
    ),
    Kind(
        "",
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        "persistentvolumeclaim",
        True,
        ("pvc",),
        ("status",),
        model="V1PersistentVolumeClaim",
        parser="kubesched.api.storage:PersistentVolumeClaim.from_obj",
        watched=True,
        event_resource="PersistentVolumeClaim",
        loadable=True,
    ),
    Kind(
        "resource.k8s.io",
        "v1",
        "ResourceClaimTemplate",
        "resourceclaimtemplates",
        "resourceclaimtemplate",
        True,
        model="V1ResourceClaimTemplate",
        parser="kubesched.api.dra:ResourceClaimTemplate.from_obj",
        loadable=True,
    ),
    Kind(
        "resource.k8s.io",
        "v1",
        "ResourceClaim",
        "resourceclaims",
        "resourceclaim",
        True,
        (),
        ("status",),
        model="ResourceV1ResourceClaim",
        parser="kubesched.api.dra:ResourceClaim.from_obj",
        watched=True,
        event_resource=_DRA + "ResourceClaim",
        loadable=True,
    ),
    Kind(
        "",
        "v1",
        "Service",
        "services",
        "service",
        True,
        ("svc",),
        ("status",),
        ("all",),
        model="V1Service",
        validate="kubesched.api.load_checks:check_map_selector",
        watched=True,
        loadable=True,
    ),
    Kind(
        "",
        "v1",
        "ReplicationController",
        "replicationcontrollers",
        "replicationcontroller",
        True,
        ("rc",),
        ("status",),
        ("all",),
        model="V1ReplicationController",
        validate="kubesched.api.load_checks:check_replication_controller",
        watched=True,
        loadable=True,
    ),
    Kind(
        "apps",
        "v1",
        "Deployment",
        "deployments",
        "deployment",
        True,
        ("deploy",),
        ("status", "scale"),
        ("all",),
        model="V1Deployment",
        validate="kubesched.api.load_checks:check_workload",
        loadable=True,
    ),
    Kind(
        "apps",
        "v1",
        "ReplicaSet",
        "replicasets",
        "replicaset",
        True,
        ("rs",),
        ("status", "scale"),
        ("all",),
        model="V1ReplicaSet",
        validate="kubesched.api.load_checks:check_workload",
        watched=True,
        loadable=True,
    ),
    Kind(
        "apps",
        "v1",
        "StatefulSet",
        "statefulsets",
        "statefulset",
        True,
        ("sts",),
        ("status", "scale"),
        ("all",),
        model="V1StatefulSet",
        validate="kubesched.api.load_checks:check_workload",
        watched=True,
        loadable=True,
    ),
    Kind(
        "apps",
        "v1",
        "DaemonSet",
        "daemonsets",
        "daemonset",
        True,
        ("ds",),
        ("status",),
        ("all",),
        model="V1DaemonSet",
        validate="kubesched.api.load_checks:check_daemon_set",
        loadable=True,
    ),
    Kind(
        "apps",
        "v1",
        "ControllerRevision",
        "controllerrevisions",
        "controllerrevision",
        True,
        model="V1ControllerRevision",
        loadable=True,
    ),
    Kind(
        "batch",
        "v1",
        "Job",
        "jobs",
        "job",
        True,
        (),
        ("status",),
        ("all",),
        model="V1Job",
        validate="kubesched.api.load_checks:check_job",
        loadable=True,
    ),
    Kind(
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        "poddisruptionbudget",
        True,
        ("pdb",),
        ("status",),
        model="V1PodDisruptionBudget",
        validate="kubesched.api.load_checks:check_pdb",
        watched=True,
        loadable=True,
    ),
    Kind(
        "",
        "v1",
        "Pod",
        "pods",
        "pod",
        True,
        ("po",),
        ("status", "binding"),
        ("all",),
        model="V1Pod",
        parser="kubesched.api.pod:Pod.from_manifest",
        validate="kubesched.api.load_checks:check_pod",
        watched=True,
        event_resource="Pod",
        loadable=True,
    ),
    Kind("", "v1", "ConfigMap", "configmaps", "configmap", True, ("cm",)),
    Kind("", "v1", "LimitRange", "limitranges", "limitrange", True, ("limits",), model="V1LimitRange"),
    Kind("events.k8s.io", "v1", "Event", "events", "event", True, ("ev",)),
    Kind("", "v1", "Event", "events", "event", True, ("ev",), store_kind="Event"),
    Kind("coordination.k8s.io", "v1", "Lease", "leases", "lease", True),
)


_listeners: list[Callable[[], None]] = []


class _Registry:
    """The rows and their indexes; rebuilt on every change (changes are rare: start-up, tests)."""

    def __init__(self, rows: Iterable[Kind]) -> None:
        self.generation = 0
        self._set(tuple(rows))

    def _set(self, rows: tuple[Kind, ...]) -> None:
        by_path: dict[tuple[str, str, str], Kind] = {}
        by_kind: dict[str, Kind] = {}
        for row in rows:
            key = (row.group, row.version, row.plural)
            if key in by_path:
                raise ValueError(
                    f"kind {row.kind}: resource {row.plural} of {row.group_version} is registered twice"
                )
            by_path[key] = row
            if not row.store_kind:
                if row.kind in by_kind:
                    raise ValueError(
                        f"kind {row.kind} is registered twice (as {by_kind[row.kind].group_version} "
                        f"and {row.group_version})"
                    )
                by_kind[row.kind] = row
        self.rows = rows
        self.by_path = by_path
        self.by_kind = by_kind
        self.cluster_scoped = frozenset(k for k, r in by_kind.items() if not r.namespaced)
        self.loadable = frozenset(k for k, r in by_kind.items() if r.loadable)
        self.order = tuple(r.kind for r in rows if not r.store_kind)
        self.watched = tuple(r.kind for r in rows if r.watched and not r.store_kind)
        self.generation += 1
        for listener in _listeners:
            listener()


_registry = _Registry(BUILTIN_KINDS)


def register(*rows: Kind) -> None:
    """Add ``rows`` to the registry, just before ``Pod`` in load order (pods may refer to them).
    Raises ValueError for a kind or a resource registered twice."""
    current = list(_registry.rows)
    at = next((i for i, r in enumerate(current) if r.kind == "Pod" and not r.store_kind), len(current))
    _registry._set((*current[:at], *rows, *current[at:]))


def _replace(rows: tuple[Kind, ...]) -> None:
    _registry._set(rows)


@contextmanager
def extra_kinds(*rows: Kind) -> Iterator[None]:
    """``with extra_kinds(row, ...):`` the registry has ``rows`` too (see :func:`register`), and
    is restored on exit (for tests and embedded experiments)."""
    before = _registry.rows
    register(*rows)
    try:
        yield
    finally:
        _replace(before)


def on_change(listener: Callable[[], None]) -> None:
    """Call ``listener()`` after every change of the registry (to clear caches derived from it)."""
    _listeners.append(listener)


def generation() -> int:
    """A number that changes whenever the registry does (for caches derived from it)."""
    return _registry.generation


def all_kinds() -> tuple[Kind, ...]:
    """Every row, in load order (alias rows included)."""
    return _registry.rows


def served_kinds() -> tuple[Kind, ...]:
    """The rows ``kubesched serve`` serves (every row), in discovery order: core group first."""
    rows = _registry.rows
    return tuple(r for r in rows if not r.group) + tuple(r for r in rows if r.group)


def lookup(kind: str) -> Kind | None:
    """The canonical row of ``kind`` (``Event`` -> ``events.k8s.io/v1``), or None."""
    return _registry.by_kind.get(kind)


def find(group: str, version: str, plural: str) -> Kind | None:
    """The row served as ``plural`` in ``group``/``version`` (``""`` for core), or None."""
    return _registry.by_path.get((group, version, plural))


def is_cluster_scoped(kind: str) -> bool:
    """True for a registered kind without a namespace (Node, PersistentVolume, StorageClass, ...)."""
    return kind in _registry.cluster_scoped


def api_version(kind: str) -> str | None:
    """The ``apiVersion`` of ``kind``'s objects (``v1``, ``storage.k8s.io/v1``), or None."""
    row = _registry.by_kind.get(kind)
    return row.group_version if row is not None else None


def has_subresource(kind: str, subresource: str) -> bool:
    """Whether ``kind`` has ``subresource`` (``status``, ``binding``, ``scale``)."""
    row = _registry.by_kind.get(kind)
    return row is not None and subresource in row.subresources


def resource_name(kind: str) -> str:
    """Group-qualified plural of ``kind`` as API error messages print it (``Pod`` -> ``pods``,
    ``StorageClass`` -> ``storageclasses.storage.k8s.io``); an unregistered kind gets the lower-case
    plural the API machinery would guess (``Foo`` -> ``foos``)."""
    row = _registry.by_kind.get(kind)
    if row is not None:
        return row.resource
    lower = kind.lower()
    return lower + ("es" if lower.endswith("s") else "s")


def loadable_kinds() -> frozenset[str]:
    """Kinds ``simulate`` loads from manifests (every other kind is skipped and counted)."""
    return _registry.loadable


def snapshot_order() -> tuple[str, ...]:
    """Every registered kind in load order (dependencies before dependants, pods last)."""
    return _registry.order


def watched_kinds() -> tuple[str, ...]:
    """Kinds the scheduler's informers watch, in start order (nodes before pods)."""
    return _registry.watched


def model(kind: str) -> str | None:
    """The official client model class name that checks ``kind``'s field types, or None."""
    row = _registry.by_kind.get(kind)
    return row.model if row is not None else None


def _resolve(ref: str | Callable[[Any], Any] | None) -> Callable[[Any], Any] | None:
    if ref is None or callable(ref):
        return ref
    module, _, attr = ref.partition(":")
    target: Any = importlib.import_module(module)
    for part in attr.split("."):
        target = getattr(target, part)
    return target  # type: ignore[no-any-return]


def parser(kind: str) -> Callable[[Any], Any] | None:
    """The typed parser of ``kind`` (``Pod`` -> ``Pod.from_manifest``), or None for kinds kept as
    plain objects. Raises ImportError/AttributeError when a row names one that does not exist."""
    row = _registry.by_kind.get(kind)
    return _resolve(row.parser) if row is not None else None


def validator(kind: str) -> Callable[[Any], Any] | None:
    """The check of a loaded ``kind`` object (``validate``; else the parser; None: field types
    only). Raises ImportError/AttributeError when a row names one that does not exist."""
    row = _registry.by_kind.get(kind)
    if row is None:
        return None
    return _resolve(row.validate) or _resolve(row.parser)
