"""resource.k8s.io/v1 kinds and the Pod's DRA fields: parsing, defaults and one-line field-path errors."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from kubesched.api.dra import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from kubesched.api.pod import Pod, PodResourceClaim, PodResourceClaimStatus
from kubesched.errors import ManifestError


def _slice(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "driver": "gpu.example.com",
        "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
        "nodeName": "node-1",
        "devices": [
            {
                "name": "gpu-0",
                "attributes": {
                    "model": {"string": "A100"},
                    "index": {"int": 0},
                    "gpu.example.com/nvlink": {"bool": True},
                    "driverVersion": {"version": "1.2.3"},
                },
                "capacity": {"memory": {"value": "80Gi"}},
            }
        ],
    }
    base.update(spec)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s1"},
        "spec": base,
    }


def _claim(requests: list[Any], **devices: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"devices": {"requests": requests, **devices}},
    }


def test_slice_parses_attributes_capacity_and_pool() -> None:
    s = ResourceSlice.from_obj(_slice())
    assert (s.driver, s.pool, s.pool_generation, s.resource_slice_count, s.node_name) == (
        "gpu.example.com",
        "node-1",
        1,
        1,
        "node-1",
    )
    d = s.devices[0]
    assert d.name == "gpu-0"
    assert {k: (a.kind, a.value) for k, a in d.attributes.items()} == {
        "model": ("string", "A100"),
        "index": ("int", 0),
        "gpu.example.com/nvlink": ("bool", True),
        "driverVersion": ("version", "1.2.3"),
    }
    assert d.capacity == {"memory": Fraction(80 * 2**30)}
    assert d.needs_off_feature == ""


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"nodeName": None},
            "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
            "`perDeviceNodeSelection` is required",
        ),
        (
            {"allNodes": True},
            "spec: Invalid value: {`nodeName`, `allNodes`}: exactly one of `nodeName`, "
            "`nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields "
            "are set",
        ),
        ({"pool": {"name": "p"}}, "spec.pool.resourceSliceCount: Required value"),
        (
            {"pool": {"name": "p", "resourceSliceCount": 0}},
            "spec.pool.resourceSliceCount: must be greater than zero",
        ),
        (
            {"devices": [{"name": "a", "attributes": {"x": {}}}]},
            "spec.devices[0].attributes[x]: Required value: exactly one value must be specified",
        ),
        (
            {"devices": [{"name": "a", "attributes": {"x": {"int": 1, "string": "a"}}}]},
            "spec.devices[0].attributes[x]: Invalid value: exactly one value must be specified",
        ),
        (
            {"devices": [{"name": "a", "attributes": {"x": {"version": "1.02.3"}}}]},
            'spec.devices[0].attributes[x].version: Invalid value: "1.02.3": must be a string compatible with semver.org '
            "spec 2.0.0",
        ),
        (
            {"devices": [{"name": "a", "capacity": {"mem": {"value": "1.2.3"}}}]},
            'spec.devices[0].capacity[mem].value: invalid quantity "1.2.3"',
        ),
        ({"devices": [{"name": "a"}, {"name": "a"}]}, 'spec.devices[1].name: Duplicate value: "a"'),
        (
            {"devices": [{"name": "a", "attributes": {"x": {"int": "3"}}}]},
            "spec.devices[0].attributes.x.int: must be an integer, got string",
        ),
    ],
)
def test_slice_errors_name_the_field(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestError) as e:
        ResourceSlice.from_obj(_slice(**spec))
    assert str(e.value) == message


def test_slice_device_with_off_feature_field_is_marked() -> None:
    s = ResourceSlice.from_obj(
        _slice(devices=[{"name": "a", "taints": [{"key": "k", "effect": "NoSchedule"}]}])
    )
    assert s.devices[0].needs_off_feature == "taints"


def test_claim_defaults_exact_count_one() -> None:
    c = ResourceClaim.from_obj(_claim([{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]))
    r = c.spec.requests[0]
    assert r.exactly is not None
    assert (r.exactly.allocation_mode, r.exactly.count, r.exactly.admin_access) == ("ExactCount", 1, None)
    assert c.key == "ns/c"
    assert c.allocation is None


def test_claim_first_available_and_constraints() -> None:
    c = ResourceClaim.from_obj(
        _claim(
            [
                {
                    "name": "gpu",
                    "firstAvailable": [
                        {"name": "big", "deviceClassName": "a", "count": 2},
                        {"name": "small", "deviceClassName": "b", "allocationMode": "All"},
                    ],
                }
            ],
            constraints=[{"requests": ["gpu/big"], "matchAttribute": "gpu.example.com/numa"}],
        )
    )
    subs = c.spec.requests[0].first_available
    assert [(s.name, s.allocation_mode, s.count) for s in subs] == [
        ("big", "ExactCount", 2),
        ("small", "All", 0),
    ]
    assert c.spec.constraints[0].match_attribute == "gpu.example.com/numa"


@pytest.mark.parametrize(
    ("requests", "extra", "message"),
    [
        (
            [{"name": "a"}],
            {},
            "spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` "
            "is required",
        ),
        (
            [{"name": "a", "exactly": {}}],
            {},
            "spec.devices.requests[0].exactly.deviceClassName: Required value",
        ),
        (
            [{"name": "a", "exactly": {"deviceClassName": "c", "count": 0}}],
            {},
            "spec.devices.requests[0].exactly.count: Invalid value: 0: must be greater than zero",
        ),
        (
            [{"name": "a", "exactly": {"deviceClassName": "c", "allocationMode": "Some"}}],
            {},
            'spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Some": supported values: "All", '
            '"ExactCount"',
        ),
        (
            [{"name": "a", "exactly": {"deviceClassName": "c", "selectors": [{"cel": {}}]}}],
            {},
            "spec.devices.requests[0].exactly.selectors[0].cel.expression: Required value",
        ),
        (
            [{"name": "a", "exactly": {"deviceClassName": "c"}}],
            {"constraints": [{"requests": ["b"], "matchAttribute": "x.io/y"}]},
            'spec.devices.constraints[0].requests[0]: Invalid value: "b": must be the name of a request in the claim or '
            "the name of a request and a subrequest separated by '/'",
        ),
        (
            [
                {"name": "a", "exactly": {"deviceClassName": "c"}},
                {"name": "a", "exactly": {"deviceClassName": "c"}},
            ],
            {},
            'spec.devices.requests[1].name: Duplicate value: "a"',
        ),
    ],
)
def test_claim_errors_name_the_field(requests: list[Any], extra: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestError) as e:
        ResourceClaim.from_obj(_claim(requests, **extra))
    assert str(e.value) == message


def test_claim_status_allocation_and_reserved_for() -> None:
    obj = _claim([{"name": "gpu", "exactly": {"deviceClassName": "c"}}])
    obj["status"] = {
        "allocation": {
            "devices": {"results": [{"request": "gpu", "driver": "d", "pool": "p", "device": "gpu-0"}]},
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}
                ]
            },
        },
        "reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}],
    }
    c = ResourceClaim.from_obj(obj)
    assert c.allocation is not None
    assert [(r.request, r.driver, r.pool, r.device) for r in c.allocation.results] == [
        ("gpu", "d", "p", "gpu-0")
    ]
    assert c.allocation.node_selector is not None
    assert c.allocation.node_selector.matches({}, "node-1") and not c.allocation.node_selector.matches(
        {}, "node-2"
    )
    assert c.is_reserved_for("u1") and not c.is_reserved_for("u2")


def test_device_class_and_template() -> None:
    dc = DeviceClass.from_obj(
        {
            "metadata": {"name": "gpu.example.com"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        }
    )
    assert dc.selectors == ('device.driver == "gpu.example.com"',)
    t = ResourceClaimTemplate.from_obj(
        {
            "metadata": {"name": "t", "namespace": "ns"},
            "spec": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {
                    "devices": {
                        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]
                    }
                },
            },
        }
    )
    assert t.key == "ns/t"
    assert t.spec.request_names() == ("gpu",)
    with pytest.raises(ManifestError) as e:
        ResourceClaimTemplate.from_obj(
            {"metadata": {"name": "t"}, "spec": {"spec": {"devices": {"requests": [{"name": ""}]}}}}
        )
    assert str(e.value) == "spec.spec.devices.requests[0].name: Required value"


def _pod(spec: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}], **spec},
        "status": status or {},
    }


def test_pod_resource_claims_statuses_and_container_claims() -> None:
    p = Pod.from_manifest(
        _pod(
            {
                "resourceClaims": [
                    {"name": "gpu", "resourceClaimTemplateName": "t"},
                    {"name": "shared", "resourceClaimName": "c"},
                ]
            },
            {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x7k2q"}]},
        )
    )
    assert p.resource_claims == (PodResourceClaim("gpu", "", "t"), PodResourceClaim("shared", "c", ""))
    assert p.resource_claim_statuses == (PodResourceClaimStatus("gpu", "p-gpu-x7k2q"),)
    assert p.containers[0].claims == ("gpu",)


@pytest.mark.parametrize(
    ("claims", "message"),
    [
        (
            [{"name": "gpu"}],
            "spec.resourceClaims[0]: Invalid value: must specify one of: `resourceClaimName`, "
            "`resourceClaimTemplateName`",
        ),
        (
            [{"name": "gpu", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}],
            "spec.resourceClaims[0]: Invalid value: at most one of `resourceClaimName` or `resourceClaimTemplateName` "
            "may be set",
        ),
        (
            [{"name": "gpu", "resourceClaimName": "a"}, {"name": "gpu", "resourceClaimName": "b"}],
            'spec.resourceClaims[1].name: Duplicate value: "gpu"',
        ),
    ],
)
def test_pod_resource_claim_errors(claims: list[Any], message: str) -> None:
    with pytest.raises(ManifestError) as e:
        Pod.from_manifest(_pod({"resourceClaims": claims}))
    assert str(e.value) == message
