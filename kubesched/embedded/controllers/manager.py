"""``ControllerManager``: the controllers every embedded cluster runs, in one list (the role of
kube-controller-manager's controller descriptors, ``cmd/kube-controller-manager/app/
controller_descriptor.go: NewControllerDescriptors``). ``simulate``, ``replay``, ``serve`` and the
UI's explanations start the same set, so a new controller is added here once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from kubesched.client.client import ClusterClient
from kubesched.embedded.controllers.garbage_collector import GarbageCollector
from kubesched.embedded.controllers.pv_controller import PVController
from kubesched.embedded.controllers.resourceclaim import ResourceClaimController

__all__ = ["CONTROLLERS", "Controller", "ControllerManager"]


class Controller(Protocol):
    """A controller of the embedded cluster: ``start()`` subscribes to the store (existing objects
    are reconciled at once) and returns the controller, ``stop()`` ends its subscriptions."""

    def start(self) -> object: ...

    def stop(self) -> None: ...


#: Clock of the Events a controller records: epoch seconds (None: wall time).
ClockNow = Callable[[], float] | None

#: the embedded cluster's controllers by upstream name (``cmd/kube-controller-manager/names/
#: controller_names.go``), in start order: the PV controller binds PersistentVolumeClaims and
#: provisions volumes (VolumeBinding's PreBind waits for it); the ResourceClaim controller creates
#: ResourceClaims from templates, reserves and releases them (DynamicResources waits for it); the
#: garbage collector deletes dependents of deleted owners by owner reference.
CONTROLLERS: dict[str, Callable[[ClusterClient, ClockNow], Controller]] = {
    "persistentvolume-binder-controller": lambda cluster, now: PVController(cluster),
    "resourceclaim-controller": lambda cluster, now: ResourceClaimController(cluster, clock_now=now),
    "garbage-collector-controller": lambda cluster, now: GarbageCollector(cluster),
}


class ControllerManager:
    """Every controller of :data:`CONTROLLERS` over ``cluster`` (built at once, started by :meth:`start`);
    ``clock_now`` (epoch seconds) stamps the Events they record."""

    def __init__(self, cluster: ClusterClient, *, clock_now: ClockNow = None) -> None:
        self.controllers: dict[str, Controller] = {name: new(cluster, clock_now) for name, new in CONTROLLERS.items()}

    def start(self) -> ControllerManager:
        """Start every controller, in order."""
        for c in self.controllers.values():
            c.start()
        return self

    def stop(self) -> None:
        """Stop every controller, in reverse order."""
        for c in reversed(self.controllers.values()):
            c.stop()
