"""Pieces shared by the ``resource.k8s.io/v1`` kinds: metadata, CEL device selectors, limits.

Limits are upstream's constants from ``k8s.io/api/resource/v1/types.go``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.errors import ManifestError

GROUP = "resource.k8s.io"
API_VERSION = "resource.k8s.io/v1"

#: ``AllocationResultsMaxSize``: devices in one claim's allocation
ALLOCATION_RESULTS_MAX_SIZE = 32
#: ``ResourceSliceMaxDevices``
RESOURCE_SLICE_MAX_DEVICES = 128
#: ``ResourceSliceMaxAttributesAndCapacitiesPerDevice``
MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE = 32
#: ``DeviceRequestsMaxSize`` (also constraints, config and selectors)
DEVICE_REQUESTS_MAX_SIZE = 32
#: ``FirstAvailableDeviceRequestMaxSize``
FIRST_AVAILABLE_MAX_SIZE = 8
#: ``ResourceClaimReservedForMaxSize``
RESERVED_FOR_MAX_SIZE = 256
#: ``CELSelectorExpressionMaxCost``: the runtime cost limit of one selector
CEL_SELECTOR_EXPRESSION_MAX_COST = 1_000_000
#: ``CELSelectorExpressionMaxLength`` in bytes
CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024

ALLOCATION_MODE_EXACT_COUNT = "ExactCount"
ALLOCATION_MODE_ALL = "All"


def meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``metadata`` (empty mapping when absent); raises when ``metadata.name`` is missing."""
    m = obj.get("metadata")
    if not isinstance(m, Mapping):
        raise ManifestError("metadata", "required")
    if not m.get("name"):
        raise ManifestError("metadata.name", "required")
    return m


def mapping(raw: Any, path: str, *, required: bool = False) -> Mapping[str, Any]:
    """``raw`` as a mapping (``{}`` for null unless ``required``)."""
    if raw is None:
        if required:
            raise ManifestError(path, "Required value")
        return {}
    if not isinstance(raw, Mapping):
        raise ManifestError(path, "must be an object")
    return raw


def items(raw: Any, path: str, max_size: int | None = None) -> list[Any]:
    """``raw`` as a list (``[]`` for null), at most ``max_size`` entries (``Too many: N: must have
    at most M items``, as ``field.TooMany``)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ManifestError(path, "must be a list")
    if max_size is not None and len(raw) > max_size:
        raise ManifestError(path, f"Too many: {len(raw)}: must have at most {max_size} items")
    return raw


def selectors(raw: Any, path: str) -> tuple[str, ...]:
    """``selectors[].cel.expression`` (``DeviceSelector``): the CEL expressions, in order. A
    selector without ``cel`` is refused (the only selector type of v1)."""
    out = []
    for i, s in enumerate(items(raw, path, DEVICE_REQUESTS_MAX_SIZE)):
        p = f"{path}[{i}]"
        s = mapping(s, p, required=True)
        cel = mapping(s.get("cel"), f"{p}.cel", required=True)
        expr = cel.get("expression")
        if not isinstance(expr, str) or not expr:
            raise ManifestError(f"{p}.cel.expression", "Required value")
        if len(expr.encode()) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
            raise ManifestError(
                f"{p}.cel.expression",
                f"Too long: may not be more than {CEL_SELECTOR_EXPRESSION_MAX_LENGTH} bytes",
            )
        out.append(expr)
    return tuple(out)


def str_field(raw: Mapping[str, Any], key: str) -> str:
    v = raw.get(key)
    return "" if v is None else str(v)
