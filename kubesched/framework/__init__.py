"""The scheduling framework: what a plugin author needs, in one import.

Mirrors upstream ``k8s.io/kube-scheduler/framework`` (``interface.go``, ``cycle_state.go``,
``types.go``, ``events.go``) and ``pkg/scheduler/framework/runtime/registry.go``::

    from kubesched.framework import CycleState, NodeInfo, Pod, ScorePlugin, Status

    class NodeNumber(ScorePlugin):
        NAME = "NodeNumber"

        def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
            ...

* extension points: one ABC per point (:class:`FilterPlugin`, :class:`ScorePlugin`, ...), the
  optional :class:`PreFilterExtensions` / :class:`ScoreExtensions` / :class:`EnqueueExtensions`;
* results and statuses: :class:`Status` / :class:`Code` (``None`` means Success),
  :class:`PreFilterResult`, :class:`NodeScore`, :class:`PostFilterResult`, :class:`FitError`;
* per-attempt state: :class:`CycleState` and :class:`StateData`;
* the cluster as plugins see it: :class:`NodeInfo`, :class:`PodInfo`, :class:`Pod`, :class:`Node`,
  :class:`Snapshot`, and the :class:`Handle` a plugin is constructed with;
* pod signatures for OpportunisticBatching: :class:`SignPlugin`, :class:`SignFragment` and the
  shared signers in :mod:`kubesched.framework.signers`;
* cluster events and queueing hints (:class:`ClusterEventWithHint`, :class:`QueueingHint`);
* registration: :class:`Registry` and the ``kubesched.plugins`` entry-point group
  (:data:`ENTRY_POINT_GROUP`); plugin args are pydantic dataclasses with :data:`ARGS_CONFIG`.

Everything else under ``kubesched.framework`` is internal to the scheduler.
"""

from __future__ import annotations

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.config.args import ARGS_CONFIG
from kubesched.framework.cycle_state import (
    PODS_TO_ACTIVATE_KEY,
    CycleState,
    ReadOnlyStateData,
    StateData,
    StateNotFoundError,
)
from kubesched.framework.diagnosis import Diagnosis, FitError, NodeToStatus
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.handle import (
    EventRecorder,
    Handle,
    MetricRecorder,
    Nominator,
    ObjectLister,
    WaitingPod,
)
from kubesched.framework.interfaces import (
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
    SignPlugin,
)
from kubesched.framework.node_info import NodeInfo, PodInfo
from kubesched.framework.preemption import Candidate
from kubesched.framework.queued_pod_info import QueuedPodInfo
from kubesched.framework.registry import ENTRY_POINT_GROUP, Registry
from kubesched.framework.results import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    NodeScore,
    NominatingInfo,
    NominatingMode,
    PostFilterResult,
    PreFilterResult,
)
from kubesched.framework.signers import SignFragment
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.sort_key import QueueSortKey
from kubesched.framework.status import Code, FrameworkError, Status, is_rejected, is_success

__all__ = [
    "ARGS_CONFIG",
    "ENTRY_POINT_GROUP",
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "PODS_TO_ACTIVATE_KEY",
    "ActionType",
    "BindPlugin",
    "Candidate",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "CycleState",
    "Diagnosis",
    "EnqueueExtensions",
    "EventRecorder",
    "EventResource",
    "FilterPlugin",
    "FitError",
    "FrameworkError",
    "Handle",
    "MetricRecorder",
    "Node",
    "NodeInfo",
    "NodeScore",
    "NodeToStatus",
    "NominatingInfo",
    "NominatingMode",
    "Nominator",
    "ObjectLister",
    "PermitPlugin",
    "Plugin",
    "Pod",
    "PodInfo",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortKey",
    "QueueSortPlugin",
    "QueuedPodInfo",
    "QueueingHint",
    "ReadOnlyStateData",
    "Registry",
    "ReservePlugin",
    "ScoreExtensions",
    "ScorePlugin",
    "SignFragment",
    "SignPlugin",
    "Snapshot",
    "StateData",
    "StateNotFoundError",
    "Status",
    "WaitingPod",
    "is_rejected",
    "is_success",
]
