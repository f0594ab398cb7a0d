"""``DeviceClass`` (``resource.k8s.io/v1``): a cluster-scoped set of CEL selectors (and opaque
driver config) that a device request names with ``deviceClassName``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.dra.common import DEVICE_REQUESTS_MAX_SIZE, items, mapping, meta, selectors, str_field
from kubesched.api.shape import parse_checked


class DeviceClass:
    """Parsed DeviceClass: ``selectors`` are the CEL expressions of ``spec.selectors`` (all must
    match a device), ``config`` the raw ``spec.config`` entries (``DeviceClassConfiguration``,
    copied into allocation results), ``extended_resource_name`` ``spec.extendedResourceName``
    (only read with the DRAExtendedResource feature, off by default)."""

    __slots__ = ("raw", "name", "uid", "resource_version", "selectors", "config", "extended_resource_name")

    raw: Mapping[str, Any]
    name: str
    uid: str
    resource_version: str
    selectors: tuple[str, ...]
    config: tuple[Mapping[str, Any], ...]
    extended_resource_name: str

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> DeviceClass:
        """Parse a DeviceClass dict; raises :class:`~kubesched.errors.ManifestError` with the
        field path (``spec.selectors[0].cel.expression: Required value``)."""
        return parse_checked("DeviceClass", obj, cls._parse)

    @classmethod
    def _parse(cls, obj: Mapping[str, Any]) -> DeviceClass:
        c = cls.__new__(cls)
        m = meta(obj)
        spec = mapping(obj.get("spec"), "spec")
        c.raw = obj
        c.name = str(m["name"])
        c.uid = str_field(m, "uid")
        c.resource_version = str_field(m, "resourceVersion")
        c.selectors = selectors(spec.get("selectors"), "spec.selectors")
        c.config = tuple(
            mapping(x, f"spec.config[{i}]")
            for i, x in enumerate(items(spec.get("config"), "spec.config", DEVICE_REQUESTS_MAX_SIZE))
        )
        c.extended_resource_name = str_field(spec, "extendedResourceName")
        return c

    def __repr__(self) -> str:
        return f"DeviceClass({self.name})"
