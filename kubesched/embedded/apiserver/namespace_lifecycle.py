"""The ``NamespaceLifecycle`` admission plugin: new content only in namespaces that exist and are not
being deleted, and ``default``, ``kube-system`` and ``kube-public`` never deleted.

Follows ``staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go``
(``Admit``, ``Register``): a create of a namespaced object (a subresource create such as
``pods/binding`` too) in a namespace that does not exist is refused with the namespace lookup's
404 (``namespaces "team-a" not found``), in a namespace whose ``status.phase`` is ``Terminating``
with 403 (``pods "web" is forbidden: unable to create new content in namespace team-a because it
is being terminated``, cause ``NamespaceTerminating``); deleting one of
:data:`IMMORTAL_NAMESPACES` is refused with 403 (``namespaces "default" is forbidden: this
namespace may not be deleted``). Cluster-scoped objects, Namespaces themselves and deletions of
other objects are always admitted.

The namespace is read from the store, which is always current, so upstream's wait for its
informer cache (``missingNamespaceWait``) and the live lookup after a namespace deletion
(``forceLiveLookupCache``) have nothing to do here. Not modelled: updates of objects in a
namespace that no longer exists (upstream answers them with the same 404); the embedded cluster
holds no such objects, as its namespace controller empties a namespace before deleting it and
``serve`` creates the namespaces of the objects it is loaded with. ``localsubjectaccessreviews``,
which upstream admits anywhere, are not served.
"""

from __future__ import annotations

from typing import Any

from kubesched.embedded.apiserver.status import ApiError
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import NotFoundError

__all__ = ["IMMORTAL_NAMESPACES", "admit_namespace_deletion", "admit_namespaced_create", "new_object_name"]

#: Namespaces NamespaceLifecycle never lets go (``immortalNamespaces`` of ``Register``:
#: ``metav1.NamespaceDefault``, ``NamespaceSystem``, ``NamespacePublic``; ``kube-node-lease`` may
#: be deleted).
IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})


def new_object_name(obj: dict[str, Any]) -> str:
    """The name a forbidden create is reported under (``admission.NewForbidden``'s
    ``extractResourceName``): ``metadata.name``, else ``metadata.generateName`` (no name is
    generated before admission), else ``Unknown``."""
    meta = obj.get("metadata") or {}
    return str(meta.get("name") or meta.get("generateName") or "Unknown")


def admit_namespaced_create(
    cluster: MemoryCluster, namespace: str, plural: str, group: str, name: str
) -> None:
    """Admit the create of an object named ``name`` of resource ``plural`` in API ``group`` (``""``
    for the core group) in ``namespace``, or raise ApiError:

    * 404 NotFound ``namespaces "team-a" not found`` (details ``{name: team-a, kind: namespaces}``)
      when the Namespace does not exist;
    * 403 Forbidden ``deployments.apps "web" is forbidden: unable to create new content in
      namespace team-a because it is being terminated`` (details name, group, kind and the cause
      ``NamespaceTerminating`` on ``metadata.namespace``) when its ``status.phase`` is
      ``Terminating``."""
    try:
        ns = cluster.get("Namespace", None, namespace)
    except NotFoundError:
        raise ApiError(
            404, f'namespaces "{namespace}" not found', "NotFound", {"name": namespace, "kind": "namespaces"}
        ) from None
    status = ns.get("status")
    if not isinstance(status, dict) or status.get("phase") != "Terminating":
        return
    resource = f"{plural}.{group}" if group else plural
    details: dict[str, Any] = {"name": name, "kind": plural}
    if group:
        details["group"] = group
    details["causes"] = [
        {
            "reason": "NamespaceTerminating",
            "message": f"namespace {namespace} is being terminated",
            "field": "metadata.namespace",
        }
    ]
    raise ApiError(
        403,
        f'{resource} "{name}" is forbidden: unable to create new content in namespace {namespace} '
        "because it is being terminated",
        "Forbidden",
        details,
    )


def admit_namespace_deletion(name: str) -> None:
    """Refuse deleting one of :data:`IMMORTAL_NAMESPACES`: ApiError 403 ``namespaces "default" is
    forbidden: this namespace may not be deleted``."""
    if name in IMMORTAL_NAMESPACES:
        raise ApiError(
            403,
            f'namespaces "{name}" is forbidden: this namespace may not be deleted',
            "Forbidden",
            {"name": name, "kind": "namespaces"},
        )
