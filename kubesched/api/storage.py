"""Read-only, parsed views of storage objects: PersistentVolumeClaim, PersistentVolume,
StorageClass and CSINode (only the fields the scheduler's volume plugins read).

Plugins receive these kinds as Kubernetes JSON dicts from ``handle.objects``; the ``from_obj``
constructors parse once (quantities to integer bytes, node affinity and selectors compiled).
Helpers follow ``k8s.io/component-helpers/storage/volume`` (``GetPersistentVolumeClaimClass``,
``GetPersistentVolumeClass``, ``IsVolumeBoundToClaim``, ``CheckNodeAffinity``,
``CheckAccessModes``, ``CheckVolumeModeMismatches``) and ``k8s.io/component-helpers/storage/ephemeral``.

Defaults a real API server / PV controller would have applied and that hand-written manifests
may lack (documented deviations, all no-ops for objects read from a live cluster):

* ``StorageClass.volumeBindingMode`` missing -> ``Immediate`` (API defaulting);
* ``PersistentVolume.status.phase`` missing -> ``Available`` (what the PV controller sets);
* ``volumeMode`` missing -> ``Filesystem`` (API defaulting);
* a PVC counts as fully bound when ``spec.volumeName`` is set and either the
  ``pv.kubernetes.io/bind-completed`` annotation is present (upstream's only test) or
  ``status.phase`` is ``Bound`` (which the PV controller never sets without the annotation).

Errors: malformed quantities/selectors raise :class:`kubesched.errors.ManifestError` naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.labels import LabelSelector, parse_label_selector
from kubesched.api.node_selector import NodeSelector, parse_node_selector
from kubesched.api.quantity import QuantityError, value
from kubesched.api.shape import check_shape, parse_checked
from kubesched.errors import ManifestError

ANN_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
"""Beta annotation that overrides ``spec.storageClassName`` on PVs and PVCs."""
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
"""PVC annotation the scheduler sets to ask for provisioning on a node."""
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
"""PVC annotation set by the PV controller once the binding is complete."""
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
"""Annotation marking a binding made by a controller (not pre-bound by the user)."""
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
"""StorageClass provisioner meaning "no dynamic provisioning" (local volumes)."""

BINDING_IMMEDIATE = "Immediate"
BINDING_WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

READ_WRITE_ONCE_POD = "ReadWriteOncePod"
VOLUME_AVAILABLE = "Available"
CLAIM_LOST = "Lost"


def not_found(resource: str, name: str) -> str:
    """The lister's NotFound text, e.g. ``persistentvolumeclaim "data" not found`` (singular resource,
    group-qualified for non-core kinds such as ``storageclass.storage.k8s.io``)."""
    return f'{resource} "{name}" not found'


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, Mapping) else {}


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    s = obj.get("spec")
    return s if isinstance(s, Mapping) else {}


def _storage(raw: Any, path: str) -> int | None:
    if not isinstance(raw, Mapping) or raw.get("storage") is None:
        return None
    try:
        return value(raw["storage"])
    except QuantityError as e:
        raise ManifestError(f"{path}.storage", str(e)) from None


def _class_of(obj: Mapping[str, Any]) -> str:
    ann = _meta(obj).get("annotations") or {}
    if ANN_STORAGE_CLASS in ann:
        return str(ann[ANN_STORAGE_CLASS])
    return str(_spec(obj).get("storageClassName") or "")


def _rv_int(rv: str) -> int | None:
    try:
        return int(rv)
    except ValueError:
        return None


def newer_version(candidate: str, base: str) -> bool:
    """True if resourceVersion ``candidate`` is strictly newer than ``base`` (integers compared
    numerically; otherwise any difference counts as newer). Used by the assume caches."""
    a, b = _rv_int(candidate), _rv_int(base)
    if a is not None and b is not None:
        return a > b
    return candidate != base


@dataclass(frozen=True, slots=True)
class ClaimRef:
    """``PersistentVolume.spec.claimRef``: the claim a PV is (pre-)bound to (``uid`` may be empty)."""

    namespace: str
    name: str
    uid: str


class PersistentVolumeClaim:
    """Parsed PVC. ``request`` is ``spec.resources.requests.storage`` in bytes (``None`` when absent)."""

    __slots__ = (
        "raw",
        "namespace",
        "name",
        "uid",
        "key",
        "resource_version",
        "annotations",
        "storage_class",
        "volume_name",
        "access_modes",
        "request",
        "volume_mode",
        "selector",
        "phase",
        "deleting",
        "controller_uid",
        "vac_name",
    )

    raw: Mapping[str, Any]
    namespace: str
    name: str
    uid: str
    key: str
    resource_version: str
    annotations: Mapping[str, str]
    storage_class: str
    volume_name: str
    access_modes: tuple[str, ...]
    request: int | None
    volume_mode: str
    selector: LabelSelector | None
    phase: str
    deleting: bool
    controller_uid: str
    vac_name: str

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> PersistentVolumeClaim:
        """Parse a PVC dict; raises :class:`ManifestError` for a bad quantity or selector
        and for a field of the wrong type."""
        return parse_checked("PersistentVolumeClaim", obj, cls._parse)

    @classmethod
    def _parse(cls, obj: Mapping[str, Any]) -> PersistentVolumeClaim:
        c = cls.__new__(cls)
        meta, spec = _meta(obj), _spec(obj)
        status = obj.get("status") or {}
        c.raw = obj
        c.namespace = str(meta.get("namespace") or "default")
        c.name = str(meta.get("name") or "")
        c.key = f"{c.namespace}/{c.name}"
        c.uid = str(meta.get("uid") or "")
        c.resource_version = str(meta.get("resourceVersion") or "")
        c.annotations = {str(k): str(v) for k, v in (meta.get("annotations") or {}).items()}
        c.storage_class = _class_of(obj)
        c.volume_name = str(spec.get("volumeName") or "")
        c.access_modes = tuple(str(m) for m in spec.get("accessModes") or [])
        res = spec.get("resources") or {}
        c.request = _storage(
            res.get("requests") if isinstance(res, Mapping) else None, "spec.resources.requests"
        )
        c.volume_mode = str(spec.get("volumeMode") or "Filesystem")
        c.selector = parse_label_selector(spec.get("selector"), "spec.selector")
        c.phase = str(status.get("phase") or "") if isinstance(status, Mapping) else ""
        c.deleting = meta.get("deletionTimestamp") is not None
        c.controller_uid = ""
        for o in meta.get("ownerReferences") or []:
            if isinstance(o, Mapping) and o.get("controller"):
                c.controller_uid = str(o.get("uid") or "")
                break
        c.vac_name = str(spec.get("volumeAttributesClassName") or "")
        return c

    @property
    def fully_bound(self) -> bool:
        """``isPVCFullyBound``: a volume name and a completed binding (see module docstring)."""
        return bool(self.volume_name) and (ANN_BIND_COMPLETED in self.annotations or self.phase == "Bound")

    def __repr__(self) -> str:
        return f"PersistentVolumeClaim({self.key})"


class PersistentVolume:
    """Parsed PV. ``capacity`` is ``spec.capacity.storage`` in bytes (0 when absent)."""

    __slots__ = (
        "raw",
        "name",
        "uid",
        "resource_version",
        "labels",
        "annotations",
        "storage_class",
        "capacity",
        "access_modes",
        "volume_mode",
        "claim_ref",
        "phase",
        "node_affinity",
        "csi_driver",
        "csi_handle",
        "deleting",
        "vac_name",
    )

    raw: Mapping[str, Any]
    name: str
    uid: str
    resource_version: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    storage_class: str
    capacity: int
    access_modes: tuple[str, ...]
    volume_mode: str
    claim_ref: ClaimRef | None
    phase: str
    node_affinity: NodeSelector | None
    csi_driver: str
    csi_handle: str
    deleting: bool
    vac_name: str

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> PersistentVolume:
        """Parse a PV dict; raises :class:`ManifestError` for a bad quantity or node
        affinity and for a field of the wrong type."""
        return parse_checked("PersistentVolume", obj, cls._parse)

    @classmethod
    def _parse(cls, obj: Mapping[str, Any]) -> PersistentVolume:
        v = cls.__new__(cls)
        meta, spec = _meta(obj), _spec(obj)
        status = obj.get("status") or {}
        v.raw = obj
        v.name = str(meta.get("name") or "")
        v.uid = str(meta.get("uid") or "")
        v.resource_version = str(meta.get("resourceVersion") or "")
        v.labels = {str(k): str(x) for k, x in (meta.get("labels") or {}).items()}
        v.annotations = {str(k): str(x) for k, x in (meta.get("annotations") or {}).items()}
        v.storage_class = _class_of(obj)
        v.capacity = _storage(spec.get("capacity"), "spec.capacity") or 0
        v.access_modes = tuple(str(m) for m in spec.get("accessModes") or [])
        v.volume_mode = str(spec.get("volumeMode") or "Filesystem")
        cr = spec.get("claimRef")
        v.claim_ref = (
            ClaimRef(str(cr.get("namespace") or ""), str(cr.get("name") or ""), str(cr.get("uid") or ""))
            if isinstance(cr, Mapping)
            else None
        )
        v.phase = (
            str(status.get("phase") or VOLUME_AVAILABLE) if isinstance(status, Mapping) else VOLUME_AVAILABLE
        )
        na = spec.get("nodeAffinity")
        v.node_affinity = (
            parse_node_selector(na.get("required"), "spec.nodeAffinity.required")
            if isinstance(na, Mapping)
            else None
        )
        csi = spec.get("csi")
        v.csi_driver = str(csi.get("driver") or "") if isinstance(csi, Mapping) else ""
        v.csi_handle = str(csi.get("volumeHandle") or "") if isinstance(csi, Mapping) else ""
        v.deleting = meta.get("deletionTimestamp") is not None
        v.vac_name = str(spec.get("volumeAttributesClassName") or "")
        return v

    def bound_to(self, claim: PersistentVolumeClaim) -> bool:
        """``IsVolumeBoundToClaim``: claimRef names the claim (and its UID, when the ref has one)."""
        r = self.claim_ref
        if r is None or r.name != claim.name or r.namespace != claim.namespace:
            return False
        return not r.uid or r.uid == claim.uid

    def node_affinity_matches(self, node_labels: Mapping[str, str]) -> bool:
        """``CheckNodeAffinity``: the required terms against a node that has only ``node_labels``
        (upstream builds a Node with labels only, so ``matchFields`` on ``metadata.name`` never match)."""
        if self.node_affinity is None:
            return True
        return self.node_affinity.matches(node_labels, "")

    def local_node_names(self) -> set[str] | None:
        """``GetLocalPersistentVolumeNodeNames``: per term, the intersection of the values of
        ``kubernetes.io/hostname In`` expressions; union over terms; ``None`` when empty."""
        if self.node_affinity is None:
            return None
        result: set[str] = set()
        for term in self.node_affinity.terms:
            nodes: set[str] | None = None
            for r in term.match_expressions:
                if r.key == "kubernetes.io/hostname" and r.operator == "In":
                    nodes = set(r.values) if nodes is None else nodes & set(r.values)
            result |= nodes or set()
        return result or None

    def __repr__(self) -> str:
        return f"PersistentVolume({self.name})"


def access_modes_fit(claim: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """``CheckAccessModes``: every mode the claim asks for is offered by the PV."""
    offered = set(pv.access_modes)
    return all(m in offered for m in claim.access_modes)


@dataclass(frozen=True, slots=True)
class StorageClass:
    """Parsed StorageClass. ``allowed_topologies`` is a tuple of terms, each a tuple of
    ``(label key, allowed values)`` requirements."""

    name: str
    provisioner: str
    binding_mode: str
    allowed_topologies: tuple[tuple[tuple[str, frozenset[str]], ...], ...]

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> StorageClass:
        """Parse a StorageClass dict (``volumeBindingMode`` defaults to ``Immediate``); raises
        :class:`ManifestError` for a field of the wrong type."""
        return parse_checked("StorageClass", obj, cls._parse)

    @classmethod
    def _parse(cls, obj: Mapping[str, Any]) -> StorageClass:
        terms = []
        for t in obj.get("allowedTopologies") or []:
            if not isinstance(t, Mapping):
                continue
            reqs = tuple(
                (str(e.get("key") or ""), frozenset(str(x) for x in e.get("values") or []))
                for e in t.get("matchLabelExpressions") or []
                if isinstance(e, Mapping)
            )
            terms.append(reqs)
        return cls(
            str(_meta(obj).get("name") or ""),
            str(obj.get("provisioner") or ""),
            str(obj.get("volumeBindingMode") or BINDING_IMMEDIATE),
            tuple(terms),
        )

    def topology_matches(self, node_labels: Mapping[str, str]) -> bool:
        """``MatchTopologySelectorTerms``: no terms match everything; otherwise any term whose
        requirements all hold (label present with an allowed value)."""
        if not self.allowed_topologies:
            return True
        for term in self.allowed_topologies:
            if all(k in node_labels and node_labels[k] in vals for k, vals in term):
                return True
        return False


def csi_node_limits(obj: Mapping[str, Any] | None) -> dict[str, int]:
    """``getVolumeLimits``: CSI driver name -> ``spec.drivers[].allocatable.count`` (drivers without a
    count are absent, so unlimited). ``None`` (no CSINode) gives ``{}``. Raises
    :class:`ManifestError` for a field of the wrong type."""
    out: dict[str, int] = {}
    if not obj:
        return out
    check_shape(obj, "CSINode")
    for d in _spec(obj).get("drivers") or []:
        if not isinstance(d, Mapping):
            continue
        alloc = d.get("allocatable")
        if isinstance(alloc, Mapping) and isinstance(alloc.get("count"), int):
            out[str(d.get("name") or "")] = int(alloc["count"])
    return out


def ephemeral_claim_name(pod_name: str, volume_name: str) -> str:
    """``ephemeral.VolumeClaimName``: ``<pod name>-<volume name>``."""
    return f"{pod_name}-{volume_name}"


def pod_claims(pod_name: str, volumes: tuple[Mapping[str, Any], ...]) -> list[tuple[str, bool]]:
    """The PVCs a pod's volumes use, in volume order: ``(claim name, is generic ephemeral)``."""
    out: list[tuple[str, bool]] = []
    for v in volumes:
        pvc = v.get("persistentVolumeClaim")
        if isinstance(pvc, Mapping):
            out.append((str(pvc.get("claimName") or ""), False))
        elif isinstance(v.get("ephemeral"), Mapping):
            out.append((ephemeral_claim_name(pod_name, str(v.get("name") or "")), True))
    return out


def ephemeral_owner_error(
    pod_namespace: str, pod_name: str, pod_uid: str, claim: PersistentVolumeClaim
) -> str | None:
    """``ephemeral.VolumeIsForPod``: the error text when the claim is not controlled by the pod, else ``None``."""
    if claim.controller_uid and claim.controller_uid == pod_uid:
        return None
    return (
        f"PVC {claim.namespace}/{claim.name} was not created for pod {pod_namespace}/{pod_name} "
        "(pod is not owner)"
    )


__all__ = [
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_SELECTED_NODE",
    "ANN_STORAGE_CLASS",
    "BINDING_IMMEDIATE",
    "BINDING_WAIT_FOR_FIRST_CONSUMER",
    "CLAIM_LOST",
    "NOT_SUPPORTED_PROVISIONER",
    "READ_WRITE_ONCE_POD",
    "VOLUME_AVAILABLE",
    "ClaimRef",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "access_modes_fit",
    "csi_node_limits",
    "ephemeral_claim_name",
    "ephemeral_owner_error",
    "newer_version",
    "not_found",
    "pod_claims",
]
