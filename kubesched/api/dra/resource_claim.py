"""``ResourceClaim`` and ``ResourceClaimTemplate`` (``resource.k8s.io/v1``).

A claim's ``spec.devices.requests`` ask for devices, each either ``exactly`` (one device class,
selectors, ``allocationMode`` ``ExactCount`` with ``count`` or ``All``, ``adminAccess``) or
``firstAvailable`` (an ordered list of sub-requests, DRAPrioritizedList); ``constraints``
(``matchAttribute``) tie the devices of several requests together. ``status.allocation`` is the
scheduler's result: ``devices.results`` (``request``, ``driver``, ``pool``, ``device``,
``adminAccess``), ``devices.config`` and ``nodeSelector``; ``status.reservedFor`` lists the pods
that use the claim.

API defaulting a real API server applies is applied here (``pkg/apis/resource/v1/defaults.go``):
``allocationMode`` defaults to ``ExactCount`` and ``count`` to 1 for that mode.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.dra.common import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT_COUNT,
    ALLOCATION_RESULTS_MAX_SIZE,
    DEVICE_REQUESTS_MAX_SIZE,
    FIRST_AVAILABLE_MAX_SIZE,
    RESERVED_FOR_MAX_SIZE,
    items,
    mapping,
    meta,
    selectors,
    str_field,
)
from kubesched.api.node_selector import NodeSelector, parse_node_selector
from kubesched.api.shape import parse_checked
from kubesched.errors import ManifestError


@dataclass(frozen=True, slots=True)
class ExactDeviceRequest:
    """``ExactDeviceRequest``; ``count`` is 0 for ``All``; ``admin_access`` None when unset."""

    device_class_name: str
    selectors: tuple[str, ...]
    allocation_mode: str
    count: int
    admin_access: bool | None
    tolerations: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, slots=True)
class DeviceSubRequest:
    """``DeviceSubRequest`` of ``firstAvailable`` (never admin access)."""

    name: str
    device_class_name: str
    selectors: tuple[str, ...]
    allocation_mode: str
    count: int
    tolerations: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """``DeviceRequest``: exactly one of ``exactly`` and ``first_available`` is set."""

    name: str
    exactly: ExactDeviceRequest | None
    first_available: tuple[DeviceSubRequest, ...]


@dataclass(frozen=True, slots=True)
class DeviceConstraint:
    """``DeviceConstraint``: ``requests`` empty means all requests; ``match_attribute`` a fully
    qualified attribute name (``gpu.example.com/numa``)."""

    requests: tuple[str, ...]
    match_attribute: str | None
    distinct_attribute: str | None


@dataclass(frozen=True, slots=True)
class ResourceClaimSpec:
    """``ResourceClaimSpec.devices``; ``config`` holds the raw ``DeviceClaimConfiguration`` entries."""

    requests: tuple[DeviceRequest, ...]
    constraints: tuple[DeviceConstraint, ...]
    config: tuple[Mapping[str, Any], ...]

    def request_names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.requests)


@dataclass(frozen=True, slots=True)
class DeviceRequestAllocationResult:
    """One allocated device: ``request`` is ``<request>`` or ``<request>/<subrequest>``."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None


@dataclass(frozen=True, slots=True)
class AllocationResult:
    """``AllocationResult``; ``node_selector`` None means usable on every node."""

    results: tuple[DeviceRequestAllocationResult, ...]
    config: tuple[Mapping[str, Any], ...]
    node_selector: NodeSelector | None
    node_selector_raw: Mapping[str, Any] | None


@dataclass(frozen=True, slots=True)
class ResourceClaimConsumerReference:
    """``status.reservedFor[]``: ``resource`` is ``pods`` for pods (``api_group`` empty)."""

    api_group: str
    resource: str
    name: str
    uid: str


def _quantity_fields(r: Mapping[str, Any], path: str, what: str) -> tuple[str, int]:
    mode = str_field(r, "allocationMode") or ALLOCATION_MODE_EXACT_COUNT
    if mode not in (ALLOCATION_MODE_EXACT_COUNT, ALLOCATION_MODE_ALL):
        raise ManifestError(
            f"{path}.allocationMode",
            f'Unsupported value: "{mode}": supported values: '
            f'"{ALLOCATION_MODE_ALL}", "{ALLOCATION_MODE_EXACT_COUNT}"',
        )
    count = r.get("count")
    if mode == ALLOCATION_MODE_ALL:
        if count not in (None, 0):
            raise ManifestError(
                f"{path}.count", f"Invalid value: {count}: must not be specified when allocationMode is 'All'"
            )
        return mode, 0
    if count is None:
        count = 1
    if not isinstance(count, int) or isinstance(count, bool):
        raise ManifestError(f"{path}.count", "must be an integer")
    if count <= 0:
        raise ManifestError(f"{path}.count", f"Invalid value: {count}: must be greater than zero")
    return mode, count


def _class_name(r: Mapping[str, Any], path: str) -> str:
    name = str_field(r, "deviceClassName")
    if not name:
        raise ManifestError(f"{path}.deviceClassName", "Required value")
    return name


def _tolerations(raw: Any, path: str) -> tuple[Mapping[str, Any], ...]:
    return tuple(mapping(t, f"{path}[{i}]") for i, t in enumerate(items(raw, path)))


def _request(raw: Any, path: str) -> DeviceRequest:
    r = mapping(raw, path, required=True)
    name = str_field(r, "name")
    if not name:
        raise ManifestError(f"{path}.name", "Required value")
    exactly_raw, first_raw = r.get("exactly"), r.get("firstAvailable")
    if exactly_raw is not None and first_raw:
        raise ManifestError(
            path,
            "Invalid value: exactly one of `exactly` or `firstAvailable` is required, "
            "but multiple fields are set",
        )
    if exactly_raw is None and not first_raw:
        raise ManifestError(path, "Required value: exactly one of `exactly` or `firstAvailable` is required")
    if exactly_raw is not None:
        p = f"{path}.exactly"
        e = mapping(exactly_raw, p, required=True)
        mode, count = _quantity_fields(e, p, "request")
        admin = e.get("adminAccess")
        if admin is not None and not isinstance(admin, bool):
            raise ManifestError(f"{p}.adminAccess", "must be a boolean")
        return DeviceRequest(
            name,
            ExactDeviceRequest(
                _class_name(e, p),
                selectors(e.get("selectors"), f"{p}.selectors"),
                mode,
                count,
                admin,
                _tolerations(e.get("tolerations"), f"{p}.tolerations"),
            ),
            (),
        )
    subs = []
    seen: set[str] = set()
    for i, s in enumerate(items(first_raw, f"{path}.firstAvailable", FIRST_AVAILABLE_MAX_SIZE)):
        p = f"{path}.firstAvailable[{i}]"
        s = mapping(s, p, required=True)
        sname = str_field(s, "name")
        if not sname:
            raise ManifestError(f"{p}.name", "Required value")
        if sname in seen:
            raise ManifestError(f"{p}.name", f'Duplicate value: "{sname}"')
        seen.add(sname)
        mode, count = _quantity_fields(s, p, "subrequest")
        subs.append(
            DeviceSubRequest(
                sname,
                _class_name(s, p),
                selectors(s.get("selectors"), f"{p}.selectors"),
                mode,
                count,
                _tolerations(s.get("tolerations"), f"{p}.tolerations"),
            )
        )
    return DeviceRequest(name, None, tuple(subs))


def parse_claim_spec(raw: Any, path: str) -> ResourceClaimSpec:
    """Parse a ``ResourceClaimSpec`` at ``path`` (``spec`` of a claim, ``spec.spec`` of a template)."""
    spec = mapping(raw, path)
    devices = mapping(spec.get("devices"), f"{path}.devices")
    reqs = tuple(
        _request(r, f"{path}.devices.requests[{i}]")
        for i, r in enumerate(
            items(devices.get("requests"), f"{path}.devices.requests", DEVICE_REQUESTS_MAX_SIZE)
        )
    )
    names: set[str] = set()
    valid_refs: set[str] = set()
    for i, r in enumerate(reqs):
        if r.name in names:
            raise ManifestError(f"{path}.devices.requests[{i}].name", f'Duplicate value: "{r.name}"')
        names.add(r.name)
        valid_refs.add(r.name)
        valid_refs.update(f"{r.name}/{s.name}" for s in r.first_available)
    constraints = []
    for i, c in enumerate(
        items(devices.get("constraints"), f"{path}.devices.constraints", DEVICE_REQUESTS_MAX_SIZE)
    ):
        p = f"{path}.devices.constraints[{i}]"
        c = mapping(c, p, required=True)
        req_names = tuple(str(x) for x in items(c.get("requests"), f"{p}.requests"))
        for j, n in enumerate(req_names):
            if n not in valid_refs:
                raise ManifestError(
                    f"{p}.requests[{j}]",
                    f'Invalid value: "{n}": must be the name of a request '
                    "in the claim or the name of a request and a subrequest "
                    "separated by '/'",
                )
        match = c.get("matchAttribute")
        distinct = c.get("distinctAttribute")
        if match is not None:
            match = str(match)
            if "/" not in match:
                raise ManifestError(
                    f"{p}.matchAttribute",
                    f'Invalid value: "{match}": a fully qualified name '
                    "must be a domain and a name separated by a slash",
                )
        constraints.append(DeviceConstraint(req_names, match, None if distinct is None else str(distinct)))
    config = tuple(
        mapping(x, f"{path}.devices.config[{i}]")
        for i, x in enumerate(
            items(devices.get("config"), f"{path}.devices.config", DEVICE_REQUESTS_MAX_SIZE)
        )
    )
    return ResourceClaimSpec(reqs, tuple(constraints), config)


def _allocation(raw: Any, path: str) -> AllocationResult | None:
    if raw is None:
        return None
    a = mapping(raw, path)
    devices = mapping(a.get("devices"), f"{path}.devices")
    results = []
    for i, r in enumerate(
        items(devices.get("results"), f"{path}.devices.results", ALLOCATION_RESULTS_MAX_SIZE)
    ):
        p = f"{path}.devices.results[{i}]"
        r = mapping(r, p, required=True)
        vals = []
        for f in ("request", "driver", "pool", "device"):
            v = str_field(r, f)
            if not v:
                raise ManifestError(f"{p}.{f}", "Required value")
            vals.append(v)
        admin = r.get("adminAccess")
        results.append(
            DeviceRequestAllocationResult(
                vals[0], vals[1], vals[2], vals[3], None if admin is None else bool(admin)
            )
        )
    config = tuple(
        mapping(x, f"{path}.devices.config[{i}]")
        for i, x in enumerate(items(devices.get("config"), f"{path}.devices.config"))
    )
    ns_raw = a.get("nodeSelector")
    return AllocationResult(
        tuple(results),
        config,
        parse_node_selector(ns_raw, f"{path}.nodeSelector"),
        mapping(ns_raw, f"{path}.nodeSelector") if ns_raw is not None else None,
    )


class ResourceClaim:
    """Parsed ResourceClaim (namespaced). ``key`` is ``namespace/name``; ``allocation`` None when
    not allocated; ``reserved_for`` the consumers in ``status.reservedFor``; ``deleting`` when
    ``metadata.deletionTimestamp`` is set; ``owner_pod_uid`` the uid of the controlling Pod owner
    (claims generated from templates), ``""`` otherwise."""

    __slots__ = (
        "raw",
        "namespace",
        "name",
        "uid",
        "key",
        "resource_version",
        "annotations",
        "spec",
        "allocation",
        "reserved_for",
        "deleting",
        "owner_pod_uid",
        "finalizers",
    )

    raw: Mapping[str, Any]
    namespace: str
    name: str
    uid: str
    key: str
    resource_version: str
    annotations: Mapping[str, str]
    spec: ResourceClaimSpec
    allocation: AllocationResult | None
    reserved_for: tuple[ResourceClaimConsumerReference, ...]
    deleting: bool
    owner_pod_uid: str
    finalizers: tuple[str, ...]

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> ResourceClaim:
        """Parse a ResourceClaim dict; raises :class:`~kubesched.errors.ManifestError` with the field
        path (``spec.devices.requests[0].exactly.deviceClassName: Required value``)."""
        return parse_checked("ResourceClaim", obj, cls._parse)

    @classmethod
    def _parse(cls, obj: Mapping[str, Any]) -> ResourceClaim:
        c = cls.__new__(cls)
        m = meta(obj)
        c.raw = obj
        c.namespace = str(m.get("namespace") or "default")
        c.name = str(m["name"])
        c.key = f"{c.namespace}/{c.name}"
        c.uid = str_field(m, "uid")
        c.resource_version = str_field(m, "resourceVersion")
        c.annotations = {
            str(k): str(v) for k, v in mapping(m.get("annotations"), "metadata.annotations").items()
        }
        c.deleting = m.get("deletionTimestamp") is not None
        c.finalizers = tuple(str(f) for f in items(m.get("finalizers"), "metadata.finalizers"))
        c.owner_pod_uid = ""
        for o in items(m.get("ownerReferences"), "metadata.ownerReferences"):
            if isinstance(o, Mapping) and o.get("controller") and o.get("kind") == "Pod":
                c.owner_pod_uid = str(o.get("uid") or "")
                break
        c.spec = parse_claim_spec(obj.get("spec"), "spec")
        status = mapping(obj.get("status"), "status")
        c.allocation = _allocation(status.get("allocation"), "status.allocation")
        reserved = []
        for i, r in enumerate(items(status.get("reservedFor"), "status.reservedFor", RESERVED_FOR_MAX_SIZE)):
            r = mapping(r, f"status.reservedFor[{i}]", required=True)
            reserved.append(
                ResourceClaimConsumerReference(
                    str_field(r, "apiGroup"),
                    str_field(r, "resource"),
                    str_field(r, "name"),
                    str_field(r, "uid"),
                )
            )
        c.reserved_for = tuple(reserved)
        return c

    def is_reserved_for(self, uid: str) -> bool:
        """``resourceclaim.IsReservedForPod``: a ``pods`` consumer with this uid."""
        return any(r.uid == uid and r.resource == "pods" and not r.api_group for r in self.reserved_for)

    def __repr__(self) -> str:
        return f"ResourceClaim({self.key})"


class ResourceClaimTemplate:
    """Parsed ResourceClaimTemplate: ``spec`` is the claim spec (``spec.spec``); ``claim_metadata``
    the raw ``spec.metadata`` (labels/annotations copied into generated claims)."""

    __slots__ = ("raw", "namespace", "name", "uid", "key", "resource_version", "spec", "claim_metadata")

    raw: Mapping[str, Any]
    namespace: str
    name: str
    uid: str
    key: str
    resource_version: str
    spec: ResourceClaimSpec
    claim_metadata: Mapping[str, Any]

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> ResourceClaimTemplate:
        """Parse a ResourceClaimTemplate dict; raises :class:`~kubesched.errors.ManifestError`
        (``spec.spec.devices.requests[0].name: Required value``)."""
        return parse_checked("ResourceClaimTemplate", obj, cls._parse)

    @classmethod
    def _parse(cls, obj: Mapping[str, Any]) -> ResourceClaimTemplate:
        t = cls.__new__(cls)
        m = meta(obj)
        t.raw = obj
        t.namespace = str(m.get("namespace") or "default")
        t.name = str(m["name"])
        t.key = f"{t.namespace}/{t.name}"
        t.uid = str_field(m, "uid")
        t.resource_version = str_field(m, "resourceVersion")
        spec = mapping(obj.get("spec"), "spec", required=True)
        t.claim_metadata = mapping(spec.get("metadata"), "spec.metadata")
        t.spec = parse_claim_spec(spec.get("spec"), "spec.spec")
        return t

    def __repr__(self) -> str:
        return f"ResourceClaimTemplate({self.key})"
