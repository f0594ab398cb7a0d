"""Feature gates (``pkg/features/kube_features.go`` at v1.35): the gates that change what the
scheduler does, with their v1.35 defaults, set in a configuration file as ``featureGates:
{Name: true|false}`` (kube-scheduler's ``--feature-gates`` flag).

A gate kubesched does not know is refused (``featureGates.Foo: unrecognized feature gate``); a
gate whose behaviour kubesched does not implement is accepted at its default and refused when
switched to the other value (``featureGates.DRADeviceTaints: true is not supported by kubesched
(device taints and tolerations are not modelled)``), never silently ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kubesched.errors import ConfigError

#: gate -> v1.35 default
DEFAULTS: Final[Mapping[str, bool]] = {
    "DynamicResourceAllocation": True,
    "DRAPrioritizedList": True,
    "DRAAdminAccess": True,
    "DRAResourceClaimDeviceStatus": True,
    "DRASchedulerFilterTimeout": True,
    "DRAPartitionableDevices": False,
    "DRADeviceTaints": False,
    "DRADeviceTaintRules": False,
    "DRAConsumableCapacity": False,
    "DRAExtendedResource": False,
    "DRADeviceBindingConditions": False,
    "SchedulerQueueingHints": True,
    "NominatedNodeNameForExpectation": True,
    "OpportunisticBatching": True,
}

#: gates whose non-default value kubesched does not implement -> why
NOT_BUILT: Final[Mapping[str, str]] = {
    "DynamicResourceAllocation": "DRA cannot be switched off; remove DynamicResources from the profile instead",
    "DRAPartitionableDevices": "partitionable devices (shared counters) are not modelled",
    "DRADeviceTaints": "device taints and tolerations are not modelled",
    "DRADeviceTaintRules": "DeviceTaintRules are not modelled",
    "DRAConsumableCapacity": "consumable capacity is not modelled",
    "DRAExtendedResource": "extended resources backed by DRA are not modelled",
    "DRADeviceBindingConditions": "device binding conditions are not modelled",
    "SchedulerQueueingHints": "the queue always uses queueing hints",
}


def resolve(raw: Mapping[str, Any] | None, path: str = "featureGates") -> dict[str, bool]:
    """Every known gate's value: ``raw`` over :data:`DEFAULTS`. Raises :class:`ConfigError`."""
    gates = dict(DEFAULTS)
    for name, value in (raw or {}).items():
        if name not in DEFAULTS:
            raise ConfigError(f"{path}.{name}", "unrecognized feature gate")
        if not isinstance(value, bool):
            raise ConfigError(f"{path}.{name}", "must be true or false")
        if value != DEFAULTS[name] and name in NOT_BUILT:
            raise ConfigError(
                f"{path}.{name}", f"{str(value).lower()} is not supported by kubesched ({NOT_BUILT[name]})"
            )
        gates[name] = value
    return gates
