"""``featureGates`` in the configuration: v1.35 defaults, unknown gates and gates not built refused."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config.feature_gates import DEFAULTS, resolve
from kubesched.config.load import parse_config
from kubesched.errors import ConfigError


def _doc(gates: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "featureGates": gates,
    }


def test_v135_defaults() -> None:
    gates = resolve(None)
    assert {k for k, v in gates.items() if v} == {
        "DynamicResourceAllocation",
        "DRAPrioritizedList",
        "DRAAdminAccess",
        "DRAResourceClaimDeviceStatus",
        "DRASchedulerFilterTimeout",
        "SchedulerQueueingHints",
        "NominatedNodeNameForExpectation",
        "OpportunisticBatching",
    }
    assert gates == dict(DEFAULTS)


def test_switchable_gates() -> None:
    c = parse_config(
        _doc(
            {
                "DRAAdminAccess": False,
                "DRASchedulerFilterTimeout": False,
                "NominatedNodeNameForExpectation": False,
                "DRADeviceTaints": False,
            }
        )
    )
    gates = resolve(c.feature_gates)
    assert (
        gates["DRAAdminAccess"],
        gates["DRASchedulerFilterTimeout"],
        gates["NominatedNodeNameForExpectation"],
    ) == (False, False, False)


@pytest.mark.parametrize(
    ("gates", "message"),
    [
        ({"Foo": True}, "featureGates.Foo: unrecognized feature gate"),
        (
            {"DRADeviceTaints": True},
            "featureGates.DRADeviceTaints: true is not supported by kubesched (device taints and tolerations are not "
            "modelled)",
        ),
        (
            {"DRAPartitionableDevices": True},
            "featureGates.DRAPartitionableDevices: true is not supported by kubesched "
            "(partitionable devices (shared counters) are not modelled)",
        ),
        (
            {"DRAConsumableCapacity": True},
            "featureGates.DRAConsumableCapacity: true is not supported by kubesched "
            "(consumable capacity is not modelled)",
        ),
        (
            {"DRAExtendedResource": True},
            "featureGates.DRAExtendedResource: true is not supported by kubesched "
            "(extended resources backed by DRA are not modelled)",
        ),
        (
            {"DRADeviceBindingConditions": True},
            "featureGates.DRADeviceBindingConditions: true is not supported by "
            "kubesched (device binding conditions are not modelled)",
        ),
    ],
)
def test_refused(gates: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_config(_doc(gates))
    assert str(e.value) == message
