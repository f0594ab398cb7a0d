"""``Handle``: what a plugin may use of the scheduler (``staging/.../framework/interface.go`` ``Handle``).
The framework runtime implements it.

Plugins never import a backend: objects other than Pods/Nodes (PVCs, PVs, StorageClasses,
CSINodes, PDBs, Namespaces, Services, ReplicaSets, StatefulSets, ReplicationControllers) are
read through ``handle.objects`` as Kubernetes JSON dicts; writes go through ``handle.client``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from kubesched.api.pod import Pod
    from kubesched.clock import Clock
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_info import NodeInfo, PodInfo
    from kubesched.framework.preemption import PreemptionExtender
    from kubesched.framework.snapshot import Snapshot
    from kubesched.framework.status import Status


class ObjectLister(Protocol):
    """Read access to the informer caches of non-pod kinds (dicts, never mutate them)."""

    def list(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]: ...

    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None: ...

    def namespace_labels(self, namespace: str) -> Mapping[str, str]: ...


class EventRecorder(Protocol):
    """``events.k8s.io`` recorder: ``eventtype`` is ``Normal``/``Warning``."""

    def eventf(
        self, regarding: Pod, related: Pod | None, eventtype: str, reason: str, action: str, note: str
    ) -> None: ...


class WaitingPod(Protocol):
    """A pod parked by Permit."""

    def get_pod(self) -> Pod: ...

    def get_pending_plugins(self) -> list[str]: ...

    def allow(self, plugin_name: str) -> None: ...

    def reject(self, plugin_name: str, msg: str) -> None: ...


class Nominator(Protocol):
    """Pods nominated to nodes (``pkg/scheduler/backend/queue/nominator.go``)."""

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]: ...

    def nominated_node_names(self) -> list[str]:
        """Names of the nodes with at least one nominated pod."""
        ...


class MetricRecorder(Protocol):
    """Plugin-facing metrics (upstream ``Handle.MetricsRecorder``): ``inc``/``observe`` a metric
    by its upstream name (e.g. ``scheduler_preemption_attempts_total``) with its labels."""

    def inc(self, name: str, labels: Mapping[str, str], value: float = 1) -> None: ...

    def observe(self, name: str, labels: Mapping[str, str], value: float) -> None: ...


class PluginClient(Protocol):
    """The writes plugins make (upstream ``Handle.ClientSet()``, the part plugins use): a subset of
    ``kubesched.client.ClusterClient`` with its signatures, errors and ownership rules."""

    def update(self, obj: dict[str, Any]) -> dict[str, Any]: ...

    def patch_status(
        self, kind: str, namespace: str | None, name: str, patch: dict[str, Any]
    ) -> dict[str, Any]: ...

    def delete(self, kind: str, namespace: str | None, name: str, *, grace: bool = False) -> None: ...

    def bind(self, namespace: str, name: str, uid: str, node_name: str) -> None: ...


class PodActivator(Protocol):
    """Moves pods to activeQ (upstream ``framework.PodActivator``: the scheduling queue)."""

    def activate(self, pods: Mapping[str, Pod]) -> None: ...


class Handle(Protocol):
    """The framework handle passed to plugin constructors (read-only for plugins).

    ``clock`` is ``None`` when a plugin runs outside a scheduler (then it reads wall time);
    ``client`` is ``None`` without a cluster; ``extenders`` are the scheduler's HTTP extenders
    (``Handle.Extenders()``, for the preempt verb); ``metrics`` is ``None`` when the scheduler
    records no metrics; ``feature_gates`` maps every known feature gate to its value
    (``kubesched.config.feature_gates``: v1.35 defaults unless the configuration's ``featureGates``
    set it).
    """

    @property
    def profile_name(self) -> str: ...

    @property
    def parallelism(self) -> int: ...

    @property
    def clock(self) -> Clock | None: ...

    @property
    def rng(self) -> random.Random: ...

    @property
    def objects(self) -> ObjectLister: ...

    @property
    def client(self) -> PluginClient | None: ...

    @property
    def event_recorder(self) -> EventRecorder | None: ...

    @property
    def nominator(self) -> Nominator | None: ...

    @property
    def extenders(self) -> Sequence[PreemptionExtender]: ...

    @property
    def metrics(self) -> MetricRecorder | None: ...

    @property
    def feature_gates(self) -> Mapping[str, bool]: ...

    def snapshot(self) -> Snapshot: ...

    def cached_node_info(self, node_name: str) -> NodeInfo | None:
        """The scheduler cache's current NodeInfo of ``node_name`` (None when the cache has no
        such node). Unlike :meth:`snapshot`, which is frozen at the start of the last cycle, it
        already reflects the cluster event being handled, so queueing hints can use it. Read-only."""
        ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None: ...

    def reject_waiting_pod(self, uid: str) -> bool: ...

    def iterate_over_waiting_pods(self) -> Iterator[WaitingPod]: ...

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None: ...

    def has_pre_filter_extensions(self, state: CycleState) -> bool: ...

    def filter_runner(self, state: CycleState) -> Callable[[CycleState, Pod, NodeInfo], Status | None]: ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def activate(self, pods: Mapping[str, Pod]) -> None: ...
