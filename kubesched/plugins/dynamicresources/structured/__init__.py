"""The structured-parameters allocator (``staging/src/k8s.io/dynamic-resource-allocation/structured``)."""

from kubesched.plugins.dynamicresources.structured.allocator import (
    AllocationError,
    Allocator,
    ClaimAllocation,
    DeviceID,
    FailedAllocationOnNode,
    Features,
    NodeOutcomes,
)
from kubesched.plugins.dynamicresources.structured.pools import Pool, SliceIndex, gather_pools, node_matches

__all__ = [
    "AllocationError",
    "Allocator",
    "ClaimAllocation",
    "DeviceID",
    "FailedAllocationOnNode",
    "Features",
    "NodeOutcomes",
    "Pool",
    "SliceIndex",
    "gather_pools",
    "node_matches",
]
