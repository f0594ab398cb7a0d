"""The served API and the discovery documents, both derived from the Kind registry.

Each :class:`~kubesched.api.kinds.Kind` row maps a REST resource (``pods`` in group ``""`` version
``v1``) to the kind the embedded store keeps (``Pod``); every row is served. The discovery documents follow what kube-apiserver serves at
``/api``, ``/api/v1``, ``/apis`` and ``/apis/<group>/<version>``
(``staging/src/k8s.io/apiserver/pkg/endpoints/discovery``): ``APIVersions``, ``APIGroupList`` and
``APIResourceList`` with verbs, ``namespaced``, ``shortNames`` and ``categories`` as upstream
registers them (``pkg/registry/*/rest``).
"""

from __future__ import annotations

from typing import Any

from kubesched.api import kinds
from kubesched.api.kinds import Kind

__all__ = [
    "SERVED_SUBRESOURCES",
    "api_group",
    "api_group_list",
    "api_resource_list",
    "api_versions",
    "find_resource",
    "served_subresources",
    "group_versions",
]

Obj = dict[str, Any]

_RW = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")

#: Subresources the handlers serve (:data:`kubesched.api.kinds.SUBRESOURCE_KINDS` names); a kind's
#: other subresources are neither routed nor listed in discovery.
SERVED_SUBRESOURCES: frozenset[str] = frozenset({"status", "binding", "finalize"})


def find_resource(group: str, version: str, name: str) -> Kind | None:
    """The served resource ``name`` of ``group``/``version`` (``""`` for core), or None."""
    return kinds.find(group, version, name)


def served_subresources(resource: Kind) -> tuple[str, ...]:
    """The subresources of ``resource`` the handlers serve, in the row's order."""
    return tuple(s for s in resource.subresources if s in SERVED_SUBRESOURCES)


def group_versions() -> list[tuple[str, str]]:
    """Served (group, version) pairs in registration order, core first."""
    out: list[tuple[str, str]] = []
    for r in kinds.served_kinds():
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
    for r in kinds.served_kinds():
        if (r.group, r.version) != (group, version):
            continue
        entry: Obj = {
            "name": r.plural,
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
        for sub in served_subresources(r):
            body_kind, verbs = kinds.SUBRESOURCE_KINDS[sub]
            resources.append(
                {"name": f"{r.plural}/{sub}", "singularName": "", "namespaced": r.namespaced,
                 "kind": body_kind or r.kind, "verbs": list(verbs)}
            )
    if not resources:
        return None
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}
