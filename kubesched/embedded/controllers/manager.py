"""Starting the embedded cluster's workload controllers together, as kube-controller-manager
starts its controllers (``cmd/kube-controller-manager/app/controllermanager.go``)."""

from __future__ import annotations

from typing import Any, Protocol

from kubesched.clock import Clock
from kubesched.embedded.controllers.controller_utils import PodAdmission
from kubesched.embedded.controllers.daemonset import DaemonSetController
from kubesched.embedded.controllers.deployment import DeploymentController
from kubesched.embedded.controllers.garbagecollector import GarbageCollector
from kubesched.embedded.controllers.job import JobController
from kubesched.embedded.controllers.replicaset import ReplicaSetController
from kubesched.embedded.controllers.statefulset import StatefulSetController
from kubesched.embedded.store import MemoryCluster

__all__ = ["Controller", "start_workload_controllers"]


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
