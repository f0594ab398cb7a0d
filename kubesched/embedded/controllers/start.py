"""The kube-controller-manager controllers the embedded cluster runs beside its store, started
together wherever an embedded cluster serves pods (``simulate``, ``replay``, ``serve``, the UI's
what-if runs):

* :class:`~kubesched.embedded.controllers.pv_controller.PVController` -- binds PersistentVolumeClaims and
  provisions volumes (VolumeBinding's PreBind waits for it);
* :class:`~kubesched.embedded.controllers.resourceclaim.ResourceClaimController` -- creates
  ResourceClaims from templates, reserves and releases them (DynamicResources waits for it);
* :class:`~kubesched.embedded.controllers.garbage_collector.GarbageCollector` -- deletes the claims of deleted
  pods by owner reference.

No upstream counterpart as one unit (``cmd/kube-controller-manager/app/controllermanager.go:
NewControllerDescriptors`` lists them among the rest).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kubesched.client.client import ClusterClient
from kubesched.embedded.controllers.garbage_collector import GarbageCollector
from kubesched.embedded.controllers.pv_controller import PVController
from kubesched.embedded.controllers.resourceclaim import ResourceClaimController

__all__ = ["EmbeddedControllers", "start_controllers"]


@dataclass(frozen=True)
class EmbeddedControllers:
    """The running controllers of one embedded cluster; :meth:`stop` ends them all."""

    pv: PVController
    resource_claims: ResourceClaimController
    garbage_collector: GarbageCollector

    def stop(self) -> None:
        self.garbage_collector.stop()
        self.resource_claims.stop()
        self.pv.stop()


def start_controllers(cluster: ClusterClient, *, clock_now: Callable[[], float] | None = None) -> EmbeddedControllers:
    """Start the controllers (module docstring) on ``cluster``; ``clock_now`` (epoch seconds)
    stamps the Events they record."""
    return EmbeddedControllers(
        PVController(cluster).start(),
        ResourceClaimController(cluster, clock_now=clock_now).start(),
        GarbageCollector(cluster).start(),
    )
