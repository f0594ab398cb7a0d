"""Parsing resource URLs into what they address.

The shapes follow kube-apiserver's REST paths (``staging/src/k8s.io/apiserver/pkg/endpoints/
installer.go``), below ``/api/v1`` or ``/apis/<group>/<version>``:

``<resource>``, ``<resource>/<name>``, ``<resource>/<name>/<subresource>`` (cluster-scoped or
all-namespaces lists), ``namespaces/<ns>/<resource>[/<name>[/<subresource>]]`` and the legacy
``watch/<...>`` prefix. ``namespaces/<name>/status`` and ``namespaces/<name>/finalize`` address the
Namespace itself, as upstream.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubesched.api.kinds import Kind
from kubesched.embedded.apiserver.paths import find_resource, served_subresources
from kubesched.embedded.apiserver.status import ApiError

__all__ = ["Target", "parse_target"]


@dataclass(frozen=True, slots=True)
class Target:
    """What a resource URL addresses. ``namespace`` None: all namespaces or cluster-scoped;
    ``name`` None: the collection; ``subresource`` e.g. ``status``/``binding``; ``legacy_watch``
    for ``/watch/`` paths. ``resource_name`` is the URL's plural (``bindings`` has no row)."""

    resource: Kind | None
    resource_name: str
    namespace: str | None
    name: str | None
    subresource: str | None
    legacy_watch: bool = False


def _not_found(path: str) -> ApiError:
    return ApiError(404, "the server could not find the requested resource", "NotFound")


def parse_target(group: str, version: str, tail: str, full_path: str) -> Target:
    """Parse the part of the path after the group version. Raises ApiError 404 for unknown
    resources or shapes (``the server could not find the requested resource``)."""
    parts = [p for p in tail.split("/") if p]
    legacy_watch = False
    if parts and parts[0] == "watch":
        legacy_watch = True
        parts = parts[1:]
    namespace: str | None = None
    if (
        len(parts) >= 3
        and parts[0] == "namespaces"
        and not (len(parts) == 3 and parts[2] in ("status", "finalize"))
    ):
        namespace = parts[1]
        parts = parts[2:]
    if not parts or len(parts) > 3:
        raise _not_found(full_path)
    name = parts[1] if len(parts) >= 2 else None
    sub = parts[2] if len(parts) == 3 else None
    resource = find_resource(group, version, parts[0])
    if resource is None:
        if group == "" and parts[0] == "bindings" and namespace is not None and name is None:
            return Target(None, "bindings", namespace, None, None)
        raise _not_found(full_path)
    if namespace is not None and not resource.namespaced:
        raise _not_found(full_path)
    if sub is not None:
        if sub not in served_subresources(resource):
            raise _not_found(full_path)
    return Target(resource, resource.plural, namespace, name, sub, legacy_watch)
