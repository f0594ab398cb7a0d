"""Read-only, parsed view of the scheduling-relevant parts of a Node manifest.

``allocatable`` maps resource name -> int (``cpu`` millicores, others base units) from
``status.allocatable``; when a hand-written node has no ``allocatable`` the ``capacity``
is used instead (a kubelet always reports allocatable; this only helps snapshots written
by hand). ``images`` lists ``status.images`` as ``(names, size_bytes)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.pod import _resource_list
from kubesched.api.shape import parse_checked
from kubesched.api.taints import Taint, parse_taints
from kubesched.errors import ManifestError

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
BETA_ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION_LABEL = "failure-domain.beta.kubernetes.io/region"
HOSTNAME_LABEL = "kubernetes.io/hostname"


@dataclass(frozen=True, slots=True)
class ContainerImage:
    """One ``status.images[]`` entry: every name (tag and digest forms) and the size in bytes."""

    names: tuple[str, ...]
    size_bytes: int


class Node:
    """Parsed view of a Node; ``raw`` is the manifest (never mutated)."""

    __slots__ = (
        "raw",
        "name",
        "uid",
        "labels",
        "annotations",
        "taints",
        "unschedulable",
        "allocatable",
        "capacity",
        "images",
        "resource_version",
        "conditions",
    )

    raw: dict[str, Any]
    name: str
    uid: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    taints: tuple[Taint, ...]
    unschedulable: bool
    allocatable: Mapping[str, int]
    capacity: Mapping[str, int]
    images: tuple[ContainerImage, ...]
    resource_version: str
    conditions: tuple[Mapping[str, Any], ...]

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> Node:
        """Parse a Node manifest; raises :class:`ManifestError` naming the field path (field types
        are checked first, :func:`kubesched.api.shape.check_shape`)."""
        return parse_checked("Node", obj, cls._parse)

    @classmethod
    def _parse(cls, obj: Mapping[str, Any]) -> Node:
        n = cls.__new__(cls)
        meta = obj.get("metadata")
        if not isinstance(meta, Mapping) or not meta.get("name"):
            raise ManifestError("metadata.name", "required")
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        if not isinstance(spec, Mapping):
            raise ManifestError("spec", "must be an object")
        if not isinstance(status, Mapping):
            raise ManifestError("status", "must be an object")
        n.raw = obj  # type: ignore[assignment]
        n.name = str(meta["name"])
        n.uid = str(meta.get("uid") or n.name)
        n.labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
        n.annotations = dict(meta.get("annotations") or {})
        n.resource_version = str(meta.get("resourceVersion") or "")
        n.taints = parse_taints(spec.get("taints"), "spec.taints")
        n.unschedulable = bool(spec.get("unschedulable"))
        n.capacity = _resource_list(status.get("capacity"), "status.capacity")
        if status.get("allocatable") is not None:
            n.allocatable = _resource_list(status.get("allocatable"), "status.allocatable")
        else:
            n.allocatable = dict(n.capacity)
        images = []
        for i, im in enumerate(status.get("images") or []):
            if not isinstance(im, Mapping):
                raise ManifestError(f"status.images[{i}]", "must be an object")
            size = im.get("sizeBytes") or 0
            if not isinstance(size, int) or size < 0:
                raise ManifestError(f"status.images[{i}].sizeBytes", "must be a non-negative integer")
            images.append(ContainerImage(tuple(str(x) for x in im.get("names") or []), size))
        n.images = tuple(images)
        n.conditions = tuple(c for c in status.get("conditions") or [] if isinstance(c, Mapping))
        return n

    def __repr__(self) -> str:
        return f"Node({self.name})"


def zone_key(labels: Mapping[str, str]) -> str:
    """``utilnode.GetZoneKey`` (``pkg/scheduler/backend/cache/node_tree.go``): ``region + ":\\x00:" + zone``
    or ``""`` when both are empty."""
    region = labels.get(BETA_REGION_LABEL) or labels.get(REGION_LABEL) or ""
    zone = labels.get(BETA_ZONE_LABEL) or labels.get(ZONE_LABEL) or ""
    if not region and not zone:
        return ""
    return region + ":\x00:" + zone
