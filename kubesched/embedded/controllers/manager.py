"""Starting the embedded cluster's workload controllers together, as kube-controller-manager
starts its controllers (``cmd/kube-controller-manager/app/controllermanager.go``)."""

from __future__ import annotations

from typing import Any, Protocol

from kubesched.client.client import WatchEvent
from kubesched.clock import Clock, VirtualClock
from kubesched.embedded.controllers.controller_utils import PodAdmission
from kubesched.embedded.controllers.daemonset import DaemonSetController
from kubesched.embedded.controllers.deployment import DeploymentController
from kubesched.embedded.controllers.garbagecollector import GarbageCollector
from kubesched.embedded.controllers.job import JobController
from kubesched.embedded.controllers.replicaset import ReplicaSetController
from kubesched.embedded.controllers.statefulset import StatefulSetController
from kubesched.embedded.store import MemoryCluster

__all__ = ["Controller", "expand_workloads", "start_workload_controllers"]


#: Kinds whose controllers create pods
WORKLOAD_KINDS = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job"})


class Controller(Protocol):
    """A started controller."""

    def stop(self) -> None: ...


def start_workload_controllers(cluster: MemoryCluster, clock: Clock, admit: PodAdmission | None = None) -> list[Any]:
    """Start the ReplicaSet, Deployment, Job, DaemonSet and StatefulSet controllers and the garbage
    collector on ``cluster`` (pods they create go
    through ``admit``); returns them (call ``stop()`` on each to end them)."""
    return [
        ReplicaSetController(cluster, clock, admit).start(),
        DeploymentController(cluster, clock).start(),
        JobController(cluster, clock, admit).start(),
        DaemonSetController(cluster, clock, admit).start(),
        StatefulSetController(cluster, clock, admit).start(),
        GarbageCollector(cluster, clock).start(),
    ]


def expand_workloads(cluster: MemoryCluster, clock: VirtualClock, admit: PodAdmission | None = None) -> list[str]:
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
