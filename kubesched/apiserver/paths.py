"""Group/version/resource table of the served API and the discovery documents built from it.

Each :class:`Resource` maps a REST resource (``pods`` in group ``""`` version ``v1``) to the kind
the embedded store keeps (``Pod``). The discovery documents follow what kube-apiserver serves at
``/api``, ``/api/v1``, ``/apis`` and ``/apis/<group>/<version>``
(``staging/src/k8s.io/apiserver/pkg/endpoints/discovery``): ``APIVersions``, ``APIGroupList`` and
``APIResourceList`` with verbs, ``namespaced``, ``shortNames`` and ``categories`` as upstream
registers them (``pkg/registry/*/rest``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "RESOURCES",
    "Resource",
    "SUBRESOURCES",
    "api_group_list",
    "api_resource_list",
    "api_versions",
    "find_resource",
    "group_versions",
]

Obj = dict[str, Any]

_RW = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True, slots=True)
class Resource:
    """One served REST resource.

    ``group`` is ``""`` for the core group; ``store_kind`` is the kind the embedded store keys it
    by (``Event`` for both ``v1`` and ``events.k8s.io/v1`` events); ``status`` tells whether a
    ``<name>/status`` subresource exists.
    """

    group: str
    version: str
    name: str
    singular: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    status: bool = False
    categories: tuple[str, ...] = ()
    store_kind: str = ""
    scale: bool = False

    @property
    def group_version(self) -> str:
        """``v1`` or ``<group>/<version>`` (the objects' ``apiVersion``)."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def kind_in_store(self) -> str:
        """Kind used with the ``ClusterClient`` (``store_kind`` or ``kind``)."""
        return self.store_kind or self.kind

    def prefix(self) -> str:
        """URL prefix of the group version (``/api/v1`` or ``/apis/<group>/<version>``)."""
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"


RESOURCES: tuple[Resource, ...] = (
    Resource("", "v1", "pods", "pod", "Pod", True, ("po",), True, ("all",)),
    Resource("", "v1", "nodes", "node", "Node", False, ("no",), True),
    Resource("", "v1", "namespaces", "namespace", "Namespace", False, ("ns",), True),
    Resource("", "v1", "persistentvolumes", "persistentvolume", "PersistentVolume", False, ("pv",), True),
    Resource("", "v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", True,
             ("pvc",), True),
    Resource("", "v1", "services", "service", "Service", True, ("svc",), True, ("all",)),
    Resource("", "v1", "replicationcontrollers", "replicationcontroller", "ReplicationController", True,
             ("rc",), True, ("all",)),
    Resource("", "v1", "events", "event", "Event", True, ("ev",)),
    Resource("", "v1", "configmaps", "configmap", "ConfigMap", True, ("cm",)),
    Resource("apps", "v1", "replicasets", "replicaset", "ReplicaSet", True, ("rs",), True, ("all",), scale=True),
    Resource("apps", "v1", "statefulsets", "statefulset", "StatefulSet", True, ("sts",), True, ("all",),
             scale=True),
    Resource("apps", "v1", "deployments", "deployment", "Deployment", True, ("deploy",), True, ("all",),
             scale=True),
    Resource("apps", "v1", "daemonsets", "daemonset", "DaemonSet", True, ("ds",), True, ("all",)),
    Resource("batch", "v1", "jobs", "job", "Job", True, (), True, ("all",)),
    Resource("policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", True,
             ("pdb",), True),
    Resource("storage.k8s.io", "v1", "storageclasses", "storageclass", "StorageClass", False, ("sc",)),
    Resource("storage.k8s.io", "v1", "csinodes", "csinode", "CSINode", False),
    Resource("storage.k8s.io", "v1", "csidrivers", "csidriver", "CSIDriver", False),
    Resource("storage.k8s.io", "v1", "csistoragecapacities", "csistoragecapacity", "CSIStorageCapacity", True),
    Resource("events.k8s.io", "v1", "events", "event", "Event", True, ("ev",)),
    Resource("coordination.k8s.io", "v1", "leases", "lease", "Lease", True),
    Resource("scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", "PriorityClass", False, ("pc",)),
)

#: Subresources served besides ``status``: (parent resource, subresource) -> (kind, verbs).
SUBRESOURCES: Mapping[tuple[str, str], tuple[str, tuple[str, ...]]] = {
    ("pods", "binding"): ("Binding", ("create",)),
}

_BY_PATH: dict[tuple[str, str, str], Resource] = {(r.group, r.version, r.name): r for r in RESOURCES}


def find_resource(group: str, version: str, name: str) -> Resource | None:
    """The served resource ``name`` of ``group``/``version`` (``""`` for core), or None."""
    return _BY_PATH.get((group, version, name))


def group_versions() -> list[tuple[str, str]]:
    """Served (group, version) pairs in registration order, core first."""
    out: list[tuple[str, str]] = []
    for r in RESOURCES:
        if (r.group, r.version) not in out:
            out.append((r.group, r.version))
    return out


def api_versions(server_address: str) -> Obj:
    """``GET /api``: the core group's ``APIVersions``."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group_doc(group: str, versions: list[str]) -> Obj:
    gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": gvs, "preferredVersion": gvs[0]}


def api_group_list() -> Obj:
    """``GET /apis``: ``APIGroupList`` of the named groups."""
    groups: dict[str, list[str]] = {}
    for group, version in group_versions():
        if group:
            groups.setdefault(group, []).append(version)
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group_doc(g, vs) for g, vs in groups.items()],
    }


def api_group(group: str) -> Obj | None:
    """``GET /apis/<group>``: one ``APIGroup``, or None when not served."""
    versions = [v for g, v in group_versions() if g == group and g]
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_doc(group, versions)}


def api_resource_list(group: str, version: str) -> Obj | None:
    """``GET /api/v1`` or ``/apis/<group>/<version>``: ``APIResourceList`` (resources and their
    subresources with verbs), or None when the group version is not served."""
    resources: list[Obj] = []
    for r in RESOURCES:
        if (r.group, r.version) != (group, version):
            continue
        entry: Obj = {
            "name": r.name,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": list(_RW),
        }
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        resources.append(entry)
        if r.status:
            resources.append(
                {"name": f"{r.name}/status", "singularName": "", "namespaced": r.namespaced, "kind": r.kind,
                 "verbs": ["get", "patch", "update"]}
            )
        if r.scale:
            resources.append(
                {"name": f"{r.name}/scale", "singularName": "", "namespaced": r.namespaced, "group": "autoscaling",
                 "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]}
            )
        for (parent, sub), (kind, verbs) in SUBRESOURCES.items():
            if parent == r.name and not group:
                resources.append(
                    {"name": f"{parent}/{sub}", "singularName": "", "namespaced": r.namespaced, "kind": kind,
                     "verbs": list(verbs)}
                )
    if not resources:
        return None
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}
