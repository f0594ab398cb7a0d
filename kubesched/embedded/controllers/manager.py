"""``ControllerManager``: the controllers every embedded cluster runs, in one list (the role of
kube-controller-manager's controller descriptors, ``cmd/kube-controller-manager/app/
controller_descriptor.go: NewControllerDescriptors``). ``simulate``, ``replay``, ``serve`` and the
UI's explanations start the same set, so a new controller is added here once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from kubesched.client.client import ClusterClient, WatchEvent
from kubesched.clock import Clock, VirtualClock
from kubesched.embedded.controllers.controller_utils import PodAdmission
from kubesched.embedded.controllers.daemonset import DaemonSetController
from kubesched.embedded.controllers.deployment import DeploymentController
from kubesched.embedded.controllers.garbagecollector import GarbageCollector
from kubesched.embedded.controllers.job import JobController
from kubesched.embedded.controllers.pv_controller import PVController
from kubesched.embedded.controllers.replicaset import ReplicaSetController
from kubesched.embedded.controllers.resourceclaim import ResourceClaimController
from kubesched.embedded.controllers.statefulset import StatefulSetController
from kubesched.embedded.store import MemoryCluster

__all__ = [
    "CONTROLLERS",
    "Controller",
    "ControllerManager",
    "WORKLOAD_KINDS",
    "expand_workloads",
    "start_workload_controllers",
]


class Controller(Protocol):
    """A controller of the embedded cluster: ``start()`` subscribes to the store (existing objects
    are reconciled at once) and returns the controller, ``stop()`` ends its subscriptions."""

    def start(self) -> object: ...

    def stop(self) -> None: ...


#: the embedded cluster's controllers by upstream name (``cmd/kube-controller-manager/names/
#: controller_names.go``), in start order: the PV controller binds PersistentVolumeClaims and
#: provisions volumes (VolumeBinding's PreBind waits for it); the ResourceClaim controller creates
#: ResourceClaims from templates, reserves and releases them (DynamicResources waits for it); the
#: garbage collector deletes the dependents of deleted owners by owner reference, for every kind
#: (claims of deleted pods, ReplicaSets of deleted Deployments, pods of deleted ReplicaSets, ...).
CONTROLLERS: dict[str, Callable[[ClusterClient, Clock], Controller]] = {
    "persistentvolume-binder-controller": lambda cluster, clock: PVController(cluster),
    "resourceclaim-controller": lambda cluster, clock: ResourceClaimController(cluster, clock_now=clock.now),
    "garbage-collector-controller": lambda cluster, clock: GarbageCollector(cluster, clock),
}


class ControllerManager:
    """Every controller of :data:`CONTROLLERS` over ``cluster`` (built at once, started by :meth:`start`);
    ``clock`` runs their work queues and stamps the Events they record."""

    def __init__(self, cluster: ClusterClient, clock: Clock) -> None:
        self.controllers: dict[str, Controller] = {
            name: new(cluster, clock) for name, new in CONTROLLERS.items()
        }

    def start(self) -> ControllerManager:
        """Start every controller, in order."""
        for c in self.controllers.values():
            c.start()
        return self

    def stop(self) -> None:
        """Stop every controller, in reverse order."""
        for c in reversed(self.controllers.values()):
            c.stop()


#: Kinds whose controllers create pods
WORKLOAD_KINDS = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job"})


def start_workload_controllers(
    cluster: MemoryCluster, clock: Clock, admit: PodAdmission | None = None
) -> list[Any]:
    """Start the ReplicaSet, Deployment, Job, DaemonSet and StatefulSet controllers on ``cluster``
    (pods they create go through ``admit``; the garbage collector that deletes what they own is one
    of :data:`CONTROLLERS`); returns them (call ``stop()`` on each to end them)."""
    return [
        ReplicaSetController(cluster, clock, admit).start(),
        DeploymentController(cluster, clock).start(),
        JobController(cluster, clock, admit).start(),
        DaemonSetController(cluster, clock, admit).start(),
        StatefulSetController(cluster, clock, admit).start(),
    ]


def expand_workloads(
    cluster: MemoryCluster, clock: VirtualClock, admit: PodAdmission | None = None
) -> list[str]:
    """Run the workload controllers once over what ``cluster`` holds (``simulate``): Deployments
    get their ReplicaSet, ReplicaSets, StatefulSets, DaemonSets and Jobs their missing pods, named
    and owned as the controllers name and own them; workloads whose pods exist are left as they
    are. The controllers stop afterwards (pods evicted later are not replaced). Returns the keys
    (``namespace/name``) of the pods created, in creation order."""
    created: list[str] = []
    if not any(kind in WORKLOAD_KINDS for kind in cluster.counts()):
        return created

    def on_pod(ev: WatchEvent) -> None:
        if ev.type == "ADDED":
            meta = ev.object.get("metadata") or {}
            created.append(f"{meta.get('namespace') or 'default'}/{meta.get('name')}")

    sub = cluster.watch("Pod", cluster.resource_version, on_pod)
    controllers: list[Any] = [
        ReplicaSetController(cluster, clock, admit).start(),
        DeploymentController(cluster, clock).start(),
        JobController(cluster, clock, admit).start(),
        DaemonSetController(cluster, clock, admit).start(),
        StatefulSetController(cluster, clock, admit).start(),
    ]
    try:
        clock.run_until(clock.now())
    finally:
        for c in controllers:
            c.stop()
        sub.stop()
    return created
