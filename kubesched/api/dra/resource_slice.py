"""``ResourceSlice`` (``resource.k8s.io/v1``): devices a DRA driver publishes for one pool.

A slice belongs to pool ``spec.pool.name`` of driver ``spec.driver``; the pool's devices are
spread over ``spec.pool.resourceSliceCount`` slices of the same ``spec.pool.generation`` (only the
newest generation counts, see the allocator). Exactly one of ``spec.nodeName`` (node-local
devices), ``spec.nodeSelector``, ``spec.allNodes`` and ``spec.perDeviceNodeSelection`` says where
the devices are reachable.

Not modelled beyond parsing (their features are off by default in v1.35 and refused when enabled):
``sharedCounters`` / ``consumesCounters`` (DRAPartitionableDevices), device ``taints``
(DRADeviceTaints), ``bindingConditions`` (DRADeviceBindingConditions), ``allowMultipleAllocations``
and device ``capacity[].requestPolicy`` (DRAConsumableCapacity). The allocator skips a device that
needs one of them, as upstream's does with the feature off.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kubesched.api.dra.common import (
    MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE,
    RESOURCE_SLICE_MAX_DEVICES,
    items,
    mapping,
    meta,
    str_field,
)
from kubesched.api.node_selector import NodeSelector, parse_node_selector
from kubesched.api.quantity import QuantityError, parse_quantity
from kubesched.api.shape import parse_checked
from kubesched.errors import ManifestError

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


def is_semver(text: str) -> bool:
    """``text`` is a strict semantic version 2.0.0 (``1.2.3``, ``1.0.0-rc.1+build``)."""
    return _SEMVER.match(text) is not None


@dataclass(frozen=True, slots=True)
class DeviceAttribute:
    """``DeviceAttribute``: exactly one of ``int``/``bool``/``string``/``version``; ``kind`` names it
    and ``value`` holds it (``version`` as its string, semver 2.0.0)."""

    kind: str
    value: int | bool | str


@dataclass(frozen=True, slots=True)
class Device:
    """``Device`` of a slice. ``attributes`` and ``capacity`` are keyed by the qualified name as
    written (``model`` or ``gpu.example.com/model``); ``capacity`` values are exact quantities
    (``capacity[name].value``) with their original text in ``capacity_text``.

    ``node_name``/``node_selector``/``all_nodes`` are the per-device node selection of a slice with
    ``perDeviceNodeSelection`` (DRAPartitionableDevices). ``needs_off_feature`` names the first
    field that only a feature off by default makes usable (``consumesCounters``, ``taints``,
    ``bindingConditions``, ``allowMultipleAllocations``), ``""`` when none is set."""

    name: str
    attributes: Mapping[str, DeviceAttribute]
    capacity: Mapping[str, Fraction]
    capacity_text: Mapping[str, str]
    node_name: str
    node_selector: NodeSelector | None
    all_nodes: bool
    needs_off_feature: str


def _attribute(raw: Any, path: str) -> DeviceAttribute:
    a = mapping(raw, path, required=True)
    found = [(k, a[k]) for k in ("int", "bool", "string", "version") if a.get(k) is not None]
    if len(found) != 1:
        raise ManifestError(
            path,
            "Invalid value: exactly one value must be specified"
            if found
            else "Required value: exactly one value must be specified",
        )
    kind, v = found[0]
    if kind == "int" and (not isinstance(v, int) or isinstance(v, bool)):
        raise ManifestError(f"{path}.int", "must be an integer")
    if kind == "bool" and not isinstance(v, bool):
        raise ManifestError(f"{path}.bool", "must be a boolean")
    if kind in ("string", "version"):
        v = str(v)
        if len(v) > 64:
            raise ManifestError(f"{path}.{kind}", "Too long: may not be more than 64 bytes")
        if kind == "version" and not is_semver(v):
            raise ManifestError(
                f"{path}.version",
                f'Invalid value: "{v}": must be a string compatible with semver.org spec 2.0.0',
            )
    return DeviceAttribute(kind, v)


def _device(raw: Any, path: str) -> Device:
    d = mapping(raw, path, required=True)
    name = str_field(d, "name")
    if not name:
        raise ManifestError(f"{path}.name", "Required value")
    attrs = mapping(d.get("attributes"), f"{path}.attributes")
    caps = mapping(d.get("capacity"), f"{path}.capacity")
    if len(attrs) + len(caps) > MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE:
        raise ManifestError(
            path,
            f"Too many: {len(attrs) + len(caps)}: must have at most "
            f"{MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE} attributes and capacities",
        )
    attributes = {str(k): _attribute(v, f"{path}.attributes[{k}]") for k, v in attrs.items()}
    capacity: dict[str, Fraction] = {}
    capacity_text: dict[str, str] = {}
    for k, v in caps.items():
        cp = f"{path}.capacity[{k}]"
        c = mapping(v, cp, required=True)
        if c.get("value") is None:
            raise ManifestError(f"{cp}.value", "Required value")
        try:
            capacity[str(k)] = parse_quantity(c["value"])
        except QuantityError as e:
            raise ManifestError(f"{cp}.value", str(e)) from None
        capacity_text[str(k)] = str(c["value"])
    off = ""
    for field_name in ("consumesCounters", "taints", "bindingConditions"):
        if d.get(field_name):
            off = field_name
            break
    if not off and d.get("allowMultipleAllocations"):
        off = "allowMultipleAllocations"
    node_selector = parse_node_selector(d.get("nodeSelector"), f"{path}.nodeSelector")
    return Device(
        name,
        attributes,
        capacity,
        capacity_text,
        str_field(d, "nodeName"),
        node_selector,
        bool(d.get("allNodes")),
        off,
    )


class ResourceSlice:
    """Parsed ResourceSlice (cluster-scoped).

    ``pool_generation`` and ``resource_slice_count`` are integers (count >= 1); ``node_selector``
    is parsed (``spec.nodeSelector``, one term at most as validation requires); ``devices`` keep
    their order (it is the allocator's search order)."""

    __slots__ = (
        "raw",
        "name",
        "uid",
        "resource_version",
        "driver",
        "pool",
        "pool_generation",
        "resource_slice_count",
        "node_name",
        "node_selector",
        "all_nodes",
        "per_device_node_selection",
        "shared_counters",
        "devices",
        "cel_inputs",
    )

    raw: Mapping[str, Any]
    name: str
    uid: str
    resource_version: str
    driver: str
    pool: str
    pool_generation: int
    resource_slice_count: int
    node_name: str
    node_selector: NodeSelector | None
    all_nodes: bool
    per_device_node_selection: bool
    shared_counters: bool
    devices: tuple[Device, ...]
    #: the devices' CEL inputs (``kubesched.api.dra.cel.DeviceInput``), built on first use by the allocator
    cel_inputs: list[Any] | None

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> ResourceSlice:
        """Parse a ResourceSlice dict; raises :class:`~kubesched.errors.ManifestError` with the
        field path (``spec.devices[1].attributes[model]: Required value: exactly one value must be
        specified``)."""
        return parse_checked("ResourceSlice", obj, cls._parse)

    @classmethod
    def _parse(cls, obj: Mapping[str, Any]) -> ResourceSlice:
        s = cls.__new__(cls)
        m = meta(obj)
        spec = mapping(obj.get("spec"), "spec", required=True)
        s.raw = obj
        s.name = str(m["name"])
        s.uid = str_field(m, "uid")
        s.resource_version = str_field(m, "resourceVersion")
        s.driver = str_field(spec, "driver")
        if not s.driver:
            raise ManifestError("spec.driver", "Required value")
        pool = mapping(spec.get("pool"), "spec.pool", required=True)
        s.pool = str_field(pool, "name")
        if not s.pool:
            raise ManifestError("spec.pool.name", "Required value")
        gen = pool.get("generation") or 0
        if not isinstance(gen, int) or isinstance(gen, bool) or gen < 0:
            raise ManifestError("spec.pool.generation", "must be greater than or equal to 0")
        count = pool.get("resourceSliceCount")
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise ManifestError(
                "spec.pool.resourceSliceCount",
                "must be greater than zero" if count is not None else "Required value",
            )
        s.pool_generation = gen
        s.resource_slice_count = count
        s.node_name = str_field(spec, "nodeName")
        s.node_selector = parse_node_selector(spec.get("nodeSelector"), "spec.nodeSelector")
        if s.node_selector is not None and len(s.node_selector.terms) != 1:
            raise ManifestError(
                "spec.nodeSelector.nodeSelectorTerms",
                "Required value: must have exactly one node selector term",
            )
        s.all_nodes = bool(spec.get("allNodes"))
        s.per_device_node_selection = bool(spec.get("perDeviceNodeSelection"))
        set_fields = [
            f
            for f, on in (
                ("`nodeName`", bool(s.node_name)),
                ("`nodeSelector`", s.node_selector is not None),
                ("`allNodes`", s.all_nodes),
                ("`perDeviceNodeSelection`", s.per_device_node_selection),
            )
            if on
        ]
        s.shared_counters = bool(spec.get("sharedCounters"))
        if len(set_fields) > 1:
            raise ManifestError(
                "spec",
                "Invalid value: {" + ", ".join(set_fields) + "}: exactly one of "
                "`nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, "
                "but multiple fields are set",
            )
        if not set_fields and not s.shared_counters:
            raise ManifestError(
                "spec",
                "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                "`perDeviceNodeSelection` is required",
            )
        devs = items(spec.get("devices"), "spec.devices", RESOURCE_SLICE_MAX_DEVICES)
        s.devices = tuple(_device(d, f"spec.devices[{i}]") for i, d in enumerate(devs))
        s.cel_inputs = None
        seen: set[str] = set()
        for i, d in enumerate(s.devices):
            if d.name in seen:
                raise ManifestError(f"spec.devices[{i}].name", f'Duplicate value: "{d.name}"')
            seen.add(d.name)
        return s

    def __repr__(self) -> str:
        return f"ResourceSlice({self.name})"
