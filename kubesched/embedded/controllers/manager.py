"""``ControllerManager``: the controllers every embedded cluster runs, in one list (the role of
kube-controller-manager's controller descriptors, ``cmd/kube-controller-manager/app/
controller_descriptor.go: NewControllerDescriptors``). ``simulate``, ``replay``, ``serve`` and the
UI's explanations start the same set, so a new controller is added here once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from kubesched.client.client import ClusterClient
from kubesched.embedded.controllers.pv_controller import PVController

__all__ = ["CONTROLLERS", "Controller", "ControllerManager"]


class Controller(Protocol):
    """A controller of the embedded cluster: ``start()`` subscribes to the store (existing objects
    are reconciled at once) and returns the controller, ``stop()`` ends its subscriptions."""

    def start(self) -> object: ...

    def stop(self) -> None: ...


#: the embedded cluster's controllers by upstream name (``pkg/controller/.../names.go``), in start order
CONTROLLERS: dict[str, Callable[[ClusterClient], Controller]] = {
    "persistentvolume-binder-controller": PVController,
}


class ControllerManager:
    """Every controller of :data:`CONTROLLERS` over ``cluster`` (built at once, started by :meth:`start`)."""

    def __init__(self, cluster: ClusterClient) -> None:
        self.controllers: dict[str, Controller] = {name: new(cluster) for name, new in CONTROLLERS.items()}

    def start(self) -> ControllerManager:
        """Start every controller, in order."""
        for c in self.controllers.values():
            c.start()
        return self

    def stop(self) -> None:
        """Stop every controller, in reverse order."""
        for c in reversed(self.controllers.values()):
            c.stop()
