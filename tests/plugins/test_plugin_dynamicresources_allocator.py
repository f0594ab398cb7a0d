"""The structured allocator against upstream's allocator test table
(``structured/internal/allocatortesting/allocator_testing.go``: ``TestAllocator``), the cases within
v1.35's default features, with their exact expected allocations and error texts; plus hypothesis
properties (no device allocated twice without admin access; the allocation found is the first one
upstream's search order reaches)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import pytest
from dra_support import (
    ALL_NODES,
    CLASS_A,
    CLASS_B,
    DRIVER_A,
    DRIVER_B,
    NODE1,
    NODE2,
    REGION1,
    REGION2,
    allocation,
    claim,
    device,
    device_class,
    first_available,
    label_selector,
    local_selector,
    node,
    one_device,
    opaque,
    request,
    result,
    slice_,
    sub_request,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.dra import DeviceClass, ResourceClaim, ResourceSlice
from kubesched.api.dra.cel import CelCache
from kubesched.api.node import Node
from kubesched.plugins.dynamicresources.structured import (
    AllocationError,
    Allocator,
    DeviceID,
    FailedAllocationOnNode,
    Features,
    SliceIndex,
)

DEFAULT_FEATURES = Features()
REQ0, REQ1, REQ2 = "req-0", "req-1", "req-2"
POOL1, POOL2, POOL3, POOL4 = "pool-1", "pool-2", "pool-3", "pool-4"


def allocate(
    claims: Sequence[ResourceClaim],
    classes: Sequence[DeviceClass],
    slices: Sequence[ResourceSlice],
    n: Node | None,
    allocated: Sequence[DeviceID] = (),
    features: Features = DEFAULT_FEATURES,
) -> Any:
    by_name = {c.name: c for c in classes}

    def get_class(name: str) -> DeviceClass:
        if name not in by_name:
            raise KeyError(f'deviceclass.resource.k8s.io "{name}" not found')
        return by_name[name]

    a = Allocator(features, set(allocated), get_class, SliceIndex(slices), CelCache())
    out = a.allocate(n, claims)
    return None if out is None else [c.allocation for c in out]


N1 = node(NODE1, REGION1)
MEM_1GI = f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("1Gi")) >= 0'
MEM_2GI = f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("2Gi")) >= 0'
INT_ATTR, VERSION_ATTR = f"{DRIVER_A}/numa", f"{DRIVER_A}/driverVersion"
STRING_ATTR, BOOL_ATTR = f"{DRIVER_A}/stringAttribute", f"{DRIVER_A}/boolAttribute"


def attrs(**kw: Any) -> dict[str, Any]:
    return {
        k: (
            {"version": v[1:]}
            if isinstance(v, str) and v.startswith("v")
            else {"string": v}
            if isinstance(v, str)
            else {"bool": v}
            if isinstance(v, bool)
            else {"int": v}
        )
        for k, v in kw.items()
    }


CA, CB = device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)

CASES: dict[str, tuple[Any, ...]] = {
    # name: (claims, classes, slices, node, allocated, features, expected results or an error text)
    "simple": (
        [claim("claim-0", request(REQ0, CLASS_A))],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        (),
        Features(),
        [allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1"))],
    ),
    "other-node": (
        [claim("claim-0", request(REQ0, CLASS_A))],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_B), one_device("slice-2", NODE2, POOL2, DRIVER_A)],
        node(NODE2, REGION2),
        (),
        Features(),
        [allocation(local_selector(NODE2), result(REQ0, DRIVER_A, POOL2, "device-1"))],
    ),
    "small-and-large": (
        [claim("claim-0", request(REQ0, CLASS_A, 1, MEM_1GI), request(REQ1, CLASS_A, 1, MEM_2GI))],
        [CA],
        [
            slice_(
                "slice-1",
                NODE1,
                POOL1,
                DRIVER_A,
                device("device-1", {"memory": "1Gi"}),
                device("device-2", {"memory": "2Gi"}),
            )
        ],
        N1,
        (),
        Features(),
        [
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1"),
                result(REQ1, DRIVER_A, POOL1, "device-2"),
            )
        ],
    ),
    "small-and-large-backtrack-requests": (
        [claim("claim-0", request(REQ0, CLASS_A, 1, MEM_1GI), request(REQ1, CLASS_A, 1, MEM_2GI))],
        [CA],
        [
            slice_(
                "slice-1",
                NODE1,
                POOL1,
                DRIVER_A,
                device("device-2", {"memory": "2Gi"}),
                device("device-1", {"memory": "1Gi"}),
            )
        ],
        N1,
        (),
        Features(),
        [
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1"),
                result(REQ1, DRIVER_A, POOL1, "device-2"),
            )
        ],
    ),
    "small-and-large-backtrack-claims": (
        [
            claim("claim-0", request(REQ0, CLASS_A, 1, MEM_1GI)),
            claim("claim-1", request(REQ1, CLASS_A, 1, MEM_2GI)),
        ],
        [CA],
        [
            slice_(
                "slice-1",
                NODE1,
                POOL1,
                DRIVER_A,
                device("device-2", {"memory": "2Gi"}),
                device("device-1", {"memory": "1Gi"}),
            )
        ],
        N1,
        (),
        Features(),
        [
            allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1")),
            allocation(local_selector(NODE1), result(REQ1, DRIVER_A, POOL1, "device-2")),
        ],
    ),
    "devices-split-across-different-slices": (
        [claim("claim-0", request(REQ0, CLASS_A, 2))],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A), one_device("slice-2", NODE1, POOL2, DRIVER_A)],
        N1,
        (),
        Features(),
        [
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1"),
                result(REQ0, DRIVER_A, POOL2, "device-1"),
            )
        ],
    ),
    "obsolete-slice": (
        [claim("claim-0", request(REQ0, CLASS_A))],
        [CA],
        [
            slice_("slice-1-obsolete", NODE1, POOL1, DRIVER_A, device("device-1"), count=2),
            slice_("slice-1-obsolete", NODE1, POOL1, DRIVER_A, device("device-2"), count=2, generation=2),
        ],
        N1,
        (),
        Features(),
        None,
    ),
    "duplicate-slice": (
        [claim("claim-0", request(REQ0, CLASS_A))],
        [CA],
        [
            one_device("slice-1", NODE1, POOL1, DRIVER_A, count=2),
            one_device("slice-1-2", NODE1, POOL1, DRIVER_A, count=2),
        ],
        N1,
        (),
        Features(),
        FailedAllocationOnNode("invalid resource pools were encountered"),
    ),
    "no-slices": ([claim("claim-0", request(REQ0, CLASS_A))], [CA], [], N1, (), Features(), None),
    "not-enough-suitable-devices": (
        [claim("claim-0", request(REQ0, CLASS_A)), claim("claim-0", request(REQ1, CLASS_A))],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        (),
        Features(),
        None,
    ),
    "no-classes": (
        [claim("claim-0", request(REQ0, CLASS_A))],
        [],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        (),
        Features(),
        AllocationError(
            "claim claim-0, request req-0: could not retrieve device class class-a: "
            'deviceclass.resource.k8s.io "class-a" not found'
        ),
    ),
    "unknown-class": (
        [claim("claim-0", request(REQ0, "unknown-class"))],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        (),
        Features(),
        AllocationError(
            "claim claim-0, request req-0: could not retrieve device class "
            'unknown-class: deviceclass.resource.k8s.io "unknown-class" not found'
        ),
    ),
    "no-claims-to-allocate": (
        [],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        (),
        Features(),
        [],
    ),
    "all-devices-single": (
        [claim("claim-0", request(REQ0, CLASS_A, mode="All"))],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        (),
        Features(),
        [allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1"))],
    ),
    "all-devices-many": (
        [claim("claim-0", request(REQ0, CLASS_A, mode="All"))],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A), one_device("slice-1", NODE1, POOL2, DRIVER_A)],
        N1,
        (),
        Features(),
        [
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1"),
                result(REQ0, DRIVER_A, POOL2, "device-1"),
            )
        ],
    ),
    "all-devices-of-the-incomplete-pool": (
        [claim("claim-0", request(REQ0, CLASS_A, mode="All"))],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A, count=2)],
        N1,
        (),
        Features(),
        AllocationError(
            "claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is "
            "currently being updated"
        ),
    ),
    "all-devices-plus-another": (
        [claim("claim-0", request(REQ0, CLASS_A, mode="All")), claim("claim-1", request(REQ0, CLASS_B))],
        [CA, CB],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A), one_device("slice-1", NODE1, POOL1, DRIVER_B)],
        N1,
        (),
        Features(),
        [
            allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1")),
            allocation(local_selector(NODE1), result(REQ0, DRIVER_B, POOL1, "device-1")),
        ],
    ),
    "all-devices-plus-another-reversed": (
        [claim("claim-1", request(REQ0, CLASS_B)), claim("claim-0", request(REQ0, CLASS_A, mode="All"))],
        [CA, CB],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A), one_device("slice-1", NODE1, POOL1, DRIVER_B)],
        N1,
        (),
        Features(),
        [
            allocation(local_selector(NODE1), result(REQ0, DRIVER_B, POOL1, "device-1")),
            allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1")),
        ],
    ),
    "all-devices-many-plus-another": (
        [claim("claim-0", request(REQ0, CLASS_A, mode="All")), claim("claim-1", request(REQ0, CLASS_B))],
        [CA, CB],
        [
            slice_("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2")),
            one_device("slice-1", NODE1, POOL1, DRIVER_B),
        ],
        N1,
        (),
        Features(),
        [
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1"),
                result(REQ0, DRIVER_A, POOL1, "device-2"),
            ),
            allocation(local_selector(NODE1), result(REQ0, DRIVER_B, POOL1, "device-1")),
        ],
    ),
    "all-devices-no-solution": (
        [claim("claim-1", request(REQ0, CLASS_A)), claim("claim-0", request(REQ0, CLASS_A, mode="All"))],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        (),
        Features(),
        None,
    ),
    "all-devices-no-solution-reversed": (
        [claim("claim-0", request(REQ0, CLASS_A, mode="All")), claim("claim-1", request(REQ0, CLASS_A))],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        (),
        Features(),
        None,
    ),
    "all-devices-slice-without-devices": (
        [claim("claim-0", request(REQ0, CLASS_A, mode="All"))],
        [CA],
        [slice_("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        (),
        Features(),
        None,
    ),
    "all-devices-no-slices": (
        [claim("claim-0", request(REQ0, CLASS_A, mode="All"))],
        [CA],
        [],
        N1,
        (),
        Features(),
        None,
    ),
    "all-devices-some-allocated": (
        [claim("claim-0", request(REQ0, CLASS_A, mode="All"))],
        [CA],
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2"))],
        N1,
        [(DRIVER_A, POOL1, "device-1")],
        Features(),
        None,
    ),
    "all-devices-some-allocated-admin-access": (
        [claim("claim-0", request(REQ0, CLASS_A, mode="All", admin=True))],
        [CA],
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2"))],
        N1,
        [(DRIVER_A, POOL1, "device-1")],
        Features(),
        [
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1", True),
                result(REQ0, DRIVER_A, POOL1, "device-2", True),
            )
        ],
    ),
    "all-devices-some-allocating-admin-access": (
        [
            claim(
                "claim-0", request(REQ0, CLASS_A, admin=True), request(REQ1, CLASS_A, mode="All", admin=True)
            )
        ],
        [CA],
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2"))],
        N1,
        (),
        Features(),
        None,
    ),
    "count-devices-some-allocated-admin-access": (
        [claim("claim-0", request(REQ0, CLASS_A, 2, admin=True))],
        [CA],
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2"))],
        N1,
        [(DRIVER_A, POOL1, "device-1")],
        Features(),
        [
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1", True),
                result(REQ0, DRIVER_A, POOL1, "device-2", True),
            )
        ],
    ),
    "separate-claims-share-device-admin-access": (
        [
            claim("claim-0", request(REQ0, CLASS_A, admin=True)),
            claim("claim-1", request(REQ0, CLASS_A, admin=True)),
        ],
        [CA],
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2"))],
        N1,
        (),
        Features(),
        [
            allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1", True)),
            allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1", True)),
        ],
    ),
    "admin-access-claims-device-allocating-for-non-admin-access": (
        [claim("claim-0", request(REQ0, CLASS_A)), claim("claim-1", request(REQ0, CLASS_A, admin=True))],
        [CA],
        [slice_("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2"))],
        N1,
        (),
        Features(),
        [
            allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1")),
            allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1", True)),
        ],
    ),
    "all-devices-slice-without-devices-prioritized-list": (
        [
            claim(
                "claim-0",
                first_available(
                    REQ0, sub_request("subReq-0", CLASS_A, mode="All"), sub_request("subReq-1", CLASS_B)
                ),
            )
        ],
        [CA, CB],
        [slice_("slice-1", NODE1, POOL1, DRIVER_A), one_device("slice-2", NODE1, POOL2, DRIVER_B)],
        N1,
        (),
        Features(),
        [allocation(local_selector(NODE1), result("req-0/subReq-1", DRIVER_B, POOL2, "device-1"))],
    ),
    "all-devices-no-slices-prioritized-list": (
        [
            claim(
                "claim-0",
                first_available(
                    REQ0, sub_request("subReq-0", CLASS_A, mode="All"), sub_request("subReq-1", CLASS_B)
                ),
            )
        ],
        [CA, CB],
        [one_device("slice-2", NODE1, POOL2, DRIVER_B)],
        N1,
        (),
        Features(),
        [allocation(local_selector(NODE1), result("req-0/subReq-1", DRIVER_B, POOL2, "device-1"))],
    ),
    "all-devices-some-allocated-prioritized-list": (
        [
            claim(
                "claim-0",
                first_available(
                    REQ0, sub_request("subReq-0", CLASS_A, mode="All"), sub_request("subReq-1", CLASS_B)
                ),
            )
        ],
        [CA, CB],
        [
            slice_("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2")),
            one_device("slice-2", NODE1, POOL2, DRIVER_B),
        ],
        N1,
        [(DRIVER_A, POOL1, "device-1")],
        Features(),
        [allocation(local_selector(NODE1), result("req-0/subReq-1", DRIVER_B, POOL2, "device-1"))],
    ),
    "network-attached-device": (
        [claim("claim-0", request(REQ0, CLASS_A))],
        [CA],
        [one_device("slice-1", label_selector("region", REGION1), POOL1, DRIVER_A)],
        N1,
        (),
        Features(),
        [allocation(label_selector("region", REGION1), result(REQ0, DRIVER_A, POOL1, "device-1"))],
    ),
    "unsuccessful-allocation-network-attached-device": (
        [claim("claim-0", request(REQ0, CLASS_A))],
        [CA],
        [one_device("slice-1", label_selector("region", REGION1), POOL1, DRIVER_A)],
        node(NODE2, REGION2),
        (),
        Features(),
        None,
    ),
    "many-network-attached-devices": (
        [claim("claim-0", request(REQ0, CLASS_A, 4))],
        [CA],
        [
            one_device("slice-1", label_selector("region", REGION1), POOL1, DRIVER_A),
            one_device("slice-1", ALL_NODES, POOL2, DRIVER_A),
            one_device("slice-1", label_selector("planet", "earth"), POOL3, DRIVER_A),
            one_device("slice-1", local_selector(NODE1), POOL4, DRIVER_A),
        ],
        N1,
        (),
        Features(),
        [
            allocation(
                {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "region", "operator": "In", "values": [REGION1]},
                                {"key": "planet", "operator": "In", "values": ["earth"]},
                            ],
                            "matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE1]}],
                        }
                    ]
                },
                result(REQ0, DRIVER_A, POOL1, "device-1"),
                result(REQ0, DRIVER_A, POOL2, "device-1"),
                result(REQ0, DRIVER_A, POOL3, "device-1"),
                result(REQ0, DRIVER_A, POOL4, "device-1"),
            )
        ],
    ),
    "local-and-network-attached-devices": (
        [claim("claim-0", request(REQ0, CLASS_A, 2))],
        [CA],
        [
            one_device("slice-1", label_selector("region", REGION1), POOL1, DRIVER_A),
            one_device("slice-1", NODE1, POOL2, DRIVER_A),
        ],
        N1,
        (),
        Features(),
        [
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1"),
                result(REQ0, DRIVER_A, POOL2, "device-1"),
            )
        ],
    ),
    "several-different-drivers": (
        [claim("claim-0", request(REQ0, CLASS_A)), claim("claim-0", request(REQ0, CLASS_B))],
        [CA, CB],
        [
            slice_("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2")),
            one_device("slice-1", NODE1, POOL1, DRIVER_B),
        ],
        N1,
        (),
        Features(),
        [
            allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1")),
            allocation(local_selector(NODE1), result(REQ0, DRIVER_B, POOL1, "device-1")),
        ],
    ),
    "already-allocated-devices": (
        [claim("claim-0", request(REQ0, CLASS_A))],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        [(DRIVER_A, POOL1, "device-1"), (DRIVER_A, POOL1, "device-2")],
        Features(),
        None,
    ),
    "admin-access-disabled": (
        [claim("claim-0", request(REQ0, CLASS_A, admin=True))],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        (),
        Features(admin_access=False),
        AllocationError(
            "claim claim-0, request req-0: admin access is requested, but the feature is disabled"
        ),
    ),
    "admin-access-enabled": (
        [claim("claim-0", request(REQ0, CLASS_A, admin=True))],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        [(DRIVER_A, POOL1, "device-1"), (DRIVER_A, POOL1, "device-2")],
        Features(),
        [allocation(local_selector(NODE1), result(REQ0, DRIVER_A, POOL1, "device-1", True))],
    ),
    "with-constraint": (
        [
            claim(
                "claim-0",
                request(REQ0, CLASS_A),
                request(REQ1, CLASS_A),
                constraints=[{"matchAttribute": a} for a in (INT_ATTR, VERSION_ATTR, STRING_ATTR, BOOL_ATTR)],
            )
        ],
        [CA],
        [
            slice_(
                "slice-1",
                NODE1,
                POOL1,
                DRIVER_A,
                device(
                    "device-1",
                    None,
                    attrs(
                        driverVersion="v1.0.0",
                        numa=1,
                        stringAttribute="stringAttributeValue",
                        boolAttribute=True,
                    ),
                ),
                device(
                    "device-2",
                    None,
                    attrs(
                        driverVersion="v1.0.0",
                        numa=1,
                        stringAttribute="stringAttributeValue",
                        boolAttribute=True,
                    ),
                ),
            )
        ],
        N1,
        (),
        Features(),
        [
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1"),
                result(REQ1, DRIVER_A, POOL1, "device-2"),
            )
        ],
    ),
    "with-constraint-non-existent-attribute": (
        [
            claim(
                "claim-0",
                request(REQ0, CLASS_A),
                constraints=[{"matchAttribute": f"{DRIVER_A}/NonExistentAttribute"}],
            )
        ],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        (),
        Features(),
        None,
    ),
    "with-constraint-not-matching-int-attribute": (
        [claim("claim-0", request(REQ0, CLASS_A, 2), constraints=[{"matchAttribute": INT_ATTR}])],
        [CA, CB],
        [
            slice_(
                "slice-1",
                NODE1,
                POOL1,
                DRIVER_A,
                device("device-1", None, attrs(numa=1)),
                device("device-2", None, attrs(numa=2)),
            )
        ],
        N1,
        (),
        Features(),
        None,
    ),
    "with-constraint-not-matching-int-attribute-all-devices": (
        [claim("claim-0", request(REQ0, CLASS_A, mode="All"), constraints=[{"matchAttribute": INT_ATTR}])],
        [CA, CB],
        [
            slice_(
                "slice-1",
                NODE1,
                POOL1,
                DRIVER_A,
                device("device-1", None, attrs(numa=1)),
                device("device-2", None, attrs(numa=2)),
            )
        ],
        N1,
        (),
        Features(),
        AllocationError(
            "claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim "
            "constraint would not be satisfied"
        ),
    ),
    "with-constraint-not-matching-string-attribute": (
        [claim("claim-0", request(REQ0, CLASS_A, 2), constraints=[{"matchAttribute": STRING_ATTR}])],
        [CA, CB],
        [
            slice_(
                "slice-1",
                NODE1,
                POOL1,
                DRIVER_A,
                device("device-1", None, attrs(stringAttribute="stringAttributeValue")),
                device("device-2", None, attrs(stringAttribute="stringAttributeValue2")),
            )
        ],
        N1,
        (),
        Features(),
        None,
    ),
    "with-constraint-not-matching-bool-attribute": (
        [claim("claim-0", request(REQ0, CLASS_A, 2), constraints=[{"matchAttribute": BOOL_ATTR}])],
        [CA, CB],
        [
            slice_(
                "slice-1",
                NODE1,
                POOL1,
                DRIVER_A,
                device("device-1", None, attrs(boolAttribute=True)),
                device("device-2", None, attrs(boolAttribute=False)),
            )
        ],
        N1,
        (),
        Features(),
        None,
    ),
    "with-constraint-not-matching-version-attribute": (
        [claim("claim-0", request(REQ0, CLASS_A, 2), constraints=[{"matchAttribute": VERSION_ATTR}])],
        [CA, CB],
        [
            slice_(
                "slice-1",
                NODE1,
                POOL1,
                DRIVER_A,
                device("device-1", None, attrs(driverVersion="v1.0.0")),
                device("device-2", None, attrs(driverVersion="v2.0.0")),
            )
        ],
        N1,
        (),
        Features(),
        None,
    ),
    "with-constraint-for-request": (
        [
            claim(
                "claim-0",
                request(REQ0, CLASS_A),
                request(REQ1, CLASS_A),
                constraints=[{"requests": [REQ0], "matchAttribute": VERSION_ATTR}],
            )
        ],
        [CA, CB],
        [
            slice_(
                "slice-1",
                NODE1,
                POOL1,
                DRIVER_A,
                device("device-1", None, attrs(driverVersion="v1.0.0")),
                device("device-2", None, attrs(driverVersion="v2.0.0")),
            )
        ],
        N1,
        (),
        Features(),
        [
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1"),
                result(REQ1, DRIVER_A, POOL1, "device-2"),
            )
        ],
    ),
    "with-constraint-for-request-retry": (
        [
            claim(
                "claim-0",
                request(REQ0, CLASS_A),
                request(REQ1, CLASS_A),
                constraints=[
                    {"requests": [REQ0], "matchAttribute": VERSION_ATTR},
                    {"matchAttribute": STRING_ATTR},
                ],
            )
        ],
        [CA, CB],
        [
            slice_(
                "slice-1",
                NODE1,
                POOL1,
                DRIVER_A,
                device("device-1", None, attrs(driverVersion="v1.0.0", stringAttribute="a")),
                device("device-2", None, attrs(driverVersion="v2.0.0", stringAttribute="b")),
                device("device-3", None, attrs(driverVersion="v3.0.0", stringAttribute="b")),
            )
        ],
        N1,
        (),
        Features(),
        [
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-2"),
                result(REQ1, DRIVER_A, POOL1, "device-3"),
            )
        ],
    ),
    "with-class-device-config": (
        [claim("claim-0", request(REQ0, CLASS_A))],
        [device_class(CLASS_A, DRIVER_A, "classAttribute")],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        (),
        Features(),
        [
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1"),
                config=[
                    {"source": "FromClass", "requests": [REQ0], "opaque": opaque(DRIVER_A, "classAttribute")}
                ],
            )
        ],
    ),
    "with-class-device-config-with-multiple-request-and-configs": (
        [claim("claim-0", request(REQ0, CLASS_A), request(REQ1, CLASS_A), request(REQ2, CLASS_B))],
        [
            device_class(CLASS_A, DRIVER_A, "classAttribute-A"),
            device_class(CLASS_B, DRIVER_B, "classAttribute-B"),
        ],
        [
            slice_("slice-1", NODE1, POOL1, DRIVER_A, device("device-0"), device("device-1")),
            one_device("slice-2", NODE1, POOL1, DRIVER_B),
        ],
        N1,
        (),
        Features(),
        [
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-0"),
                result(REQ1, DRIVER_A, POOL1, "device-1"),
                result(REQ2, DRIVER_B, POOL1, "device-1"),
                config=[
                    {
                        "source": "FromClass",
                        "requests": [REQ0, REQ1],
                        "opaque": opaque(DRIVER_A, "classAttribute-A"),
                    },
                    {
                        "source": "FromClass",
                        "requests": [REQ2],
                        "opaque": opaque(DRIVER_B, "classAttribute-B"),
                    },
                ],
            )
        ],
    ),
    "claim-with-device-config": (
        [claim("claim-0", request(REQ0, CLASS_A), config=[{"opaque": opaque(DRIVER_A, "deviceAttribute")}])],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        (),
        Features(),
        [
            allocation(
                local_selector(NODE1),
                result(REQ0, DRIVER_A, POOL1, "device-1"),
                config=[{"source": "FromClaim", "opaque": opaque(DRIVER_A, "deviceAttribute")}],
            )
        ],
    ),
    "unknown-allocation-mode": (
        [claim("claim-0", request(REQ0, CLASS_A))],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        (),
        Features(),
        "future-mode",
    ),
    "invalid-CEL-one-device": (
        [claim("claim-0", request(REQ0, CLASS_A, 1, "noSuchVar"))],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        (),
        Features(),
        AllocationError(
            "claim claim-0: selector #0: CEL compile error: compilation failed: ERROR: <input>:1:1: undeclared "
            "reference to 'noSuchVar' (in container '')\n | noSuchVar\n | ^"
        ),
    ),
    "invalid-CEL-one-device-class": (
        [claim("claim-0", request(REQ0, CLASS_A))],
        [device_class(CLASS_A, DRIVER_A, expression="noSuchVar")],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        (),
        Features(),
        AllocationError(
            "class class-a: selector #0: CEL compile error: compilation failed: ERROR: <input>:1:1: undeclared "
            "reference to 'noSuchVar' (in container '')\n | noSuchVar\n | ^"
        ),
    ),
    "invalid-CEL-all-devices": (
        [claim("claim-0", request(REQ0, CLASS_A, 1, "noSuchVar", mode="All"))],
        [CA],
        [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
        N1,
        (),
        Features(),
        AllocationError(
            "claim claim-0: selector #0: CEL compile error: compilation failed: ERROR: <input>:1:1: undeclared "
            "reference to 'noSuchVar' (in container '')\n | noSuchVar\n | ^"
        ),
    ),
    "too-many-devices-single-request": (
        [claim("claim-0", request(REQ0, CLASS_A, 500))],
        [CA],
        [],
        N1,
        (),
        Features(),
        AllocationError("claim claim-0: number of requested devices 500 exceeds the claim limit of 32"),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_upstream_allocator_table(name: str) -> None:
    claims, classes, slices, n, allocated, features, expected = CASES[name]
    if name == "unknown-allocation-mode":
        # The API refuses the mode; upstream builds the claim in Go. Patch the parsed request.
        import dataclasses

        r = claims[0].spec.requests[0]
        assert r.exactly is not None
        claims[0].spec = dataclasses.replace(
            claims[0].spec,
            requests=(
                dataclasses.replace(r, exactly=dataclasses.replace(r.exactly, allocation_mode="future-mode")),
            ),
        )
        with pytest.raises(AllocationError) as e:
            allocate(claims, classes, slices, n, allocated, features)
        assert str(e.value) == "claim claim-0, request req-0: unsupported count mode future-mode"
        return
    if isinstance(expected, AllocationError):
        with pytest.raises(AllocationError) as e:
            allocate(claims, classes, slices, n, allocated, features)
        assert type(e.value) is type(expected)
        assert str(e.value) == str(expected)
        return
    assert allocate(claims, classes, slices, n, allocated, features) == expected


def test_cel_runtime_error_names_claim_selector_and_device() -> None:
    c = claim(
        "claim-0", request(REQ0, CLASS_A, 1, f'device.attributes["{DRIVER_A}"].model == "x"'), namespace="ns"
    )
    with pytest.raises(AllocationError) as e:
        allocate([c], [CA], [one_device("slice-1", NODE1, POOL1, DRIVER_A)], N1)
    assert str(e.value) == (
        "claim ns/claim-0: selector #0 on device driver-a/pool-1/device-1: CEL runtime error: "
        "no such key: model. Consider using CEL optional chaining (?), has() macro, or orValue() "
        "for optional fields"
    )


def test_prioritized_list_disabled() -> None:
    c = claim("claim-0", first_available(REQ0, sub_request("a", CLASS_A)))
    with pytest.raises(AllocationError) as e:
        allocate(
            [c],
            [CA],
            [one_device("slice-1", NODE1, POOL1, DRIVER_A)],
            N1,
            features=Features(prioritized_list=False),
        )
    assert str(e.value) == (
        "claim claim-0, request req-0: has subrequests, but the DRAPrioritizedList feature is disabled"
    )


def test_first_available_falls_back_to_smaller_subrequest() -> None:
    c = claim(
        "claim-0", first_available(REQ0, sub_request("big", CLASS_A, 3), sub_request("small", CLASS_A, 1))
    )
    got = allocate(
        [c], [CA], [slice_("slice-1", NODE1, POOL1, DRIVER_A, device("device-0"), device("device-1"))], N1
    )
    assert got == [allocation(local_selector(NODE1), result("req-0/small", DRIVER_A, POOL1, "device-0"))]


# -- properties -----------------------------------------------------------------------------------


def _reference(
    claims: Sequence[tuple[int, ...]], devices: Sequence[tuple[int, str]], allocated: set[int]
) -> list[list[int]] | None:
    """Upstream's search order written as plain enumeration: every assignment of distinct free
    devices to the claims' requests (each request ``(count, model)``), in lexicographic order of the
    device indices chosen one after the other; the first that satisfies every selector wins."""
    slots: list[tuple[int, str]] = []
    for ci, reqs in enumerate(claims):
        for model_index in reqs:
            slots.append((ci, "abc"[model_index]))
    free = [i for i in range(len(devices)) if i not in allocated]
    for combo in itertools.permutations(free, len(slots)):
        if all(devices[d][1] == model for d, (_, model) in zip(combo, slots, strict=True)):
            out: list[list[int]] = [[] for _ in claims]
            for d, (ci, _) in zip(combo, slots, strict=True):
                out[ci].append(d)
            return out
    return None


@settings(max_examples=60, deadline=None)
@given(
    models=st.lists(st.integers(0, 2), min_size=1, max_size=6),
    claims=st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=2), min_size=1, max_size=3),
    allocated=st.sets(st.integers(0, 5), max_size=3),
)
def test_property_first_solution_in_upstream_order_and_no_device_twice(
    models: list[int], claims: list[list[int]], allocated: set[int]
) -> None:
    devices = [(i, "abc"[m]) for i, m in enumerate(models)]
    s = slice_(
        "slice-1", NODE1, POOL1, DRIVER_A, *[device(f"device-{i}", None, attrs(model=m)) for i, m in devices]
    )
    parsed = [
        claim(
            f"claim-{ci}",
            *[
                request(f"req-{ri}", CLASS_A, 1, f'device.attributes["{DRIVER_A}"].model == "{"abc"[m]}"')
                for ri, m in enumerate(reqs)
            ],
        )
        for ci, reqs in enumerate(claims)
    ]
    taken = [(DRIVER_A, POOL1, f"device-{i}") for i in allocated if i < len(devices)]
    got = allocate(parsed, [CA], [s], N1, taken)
    expected = _reference([tuple(r) for r in claims], devices, {i for i in allocated if i < len(devices)})
    if expected is None:
        assert got is None
        return
    assert got is not None
    got_devices = [[int(r["device"].split("-")[1]) for r in a["devices"]["results"]] for a in got]
    assert got_devices == expected
    flat = [d for ds in got_devices for d in ds]
    assert len(flat) == len(set(flat))
    assert not set(flat) & {i for i in allocated}
