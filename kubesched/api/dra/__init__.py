"""``resource.k8s.io/v1``: the Dynamic Resource Allocation kinds (DeviceClass, ResourceClaim,
ResourceClaimTemplate, ResourceSlice) as parsed, read-only views, and the DRA CEL environment
(:mod:`kubesched.api.dra.cel`)."""

from kubesched.api.dra.device_class import DeviceClass
from kubesched.api.dra.resource_claim import (
    AllocationResult,
    DeviceConstraint,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
    ResourceClaimTemplate,
)
from kubesched.api.dra.resource_slice import Device, DeviceAttribute, ResourceSlice

__all__ = [
    "AllocationResult",
    "Device",
    "DeviceAttribute",
    "DeviceClass",
    "DeviceConstraint",
    "DeviceRequest",
    "DeviceRequestAllocationResult",
    "DeviceSubRequest",
    "ExactDeviceRequest",
    "ResourceClaim",
    "ResourceClaimConsumerReference",
    "ResourceClaimSpec",
    "ResourceClaimTemplate",
    "ResourceSlice",
]
