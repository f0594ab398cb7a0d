"""NodeResourcesFit: does the node have room for the pod's requests, and how full would it be.

Follows upstream ``pkg/scheduler/framework/plugins/noderesources/fit.go`` (PreFilter, Filter,
PreScore, Score, EventsToRegister and queueing hints), the scoring strategies of
``least_allocated.go``, ``most_allocated.go`` and ``requested_to_capacity_ratio.go`` (in
:mod:`kubesched.plugins.noderesources.scoring`) and the args validation of
``pkg/scheduler/apis/config/validation/validation_pluginargs.go``.

Amounts are integers: cpu in millicores, memory/ephemeral-storage in bytes, extended resources
in counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Annotated, Any, Final

import numpy as np
from pydantic import AfterValidator, Field, field_validator
from pydantic.dataclasses import dataclass

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.api.resources import Resource, is_extended_resource, is_scalar_resource
from kubesched.config.args import ARGS_CONFIG
from kubesched.config.resource_names import is_qualified_name
from kubesched.framework.cycle_state import CycleState, StateNotFoundError
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    SignPlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.object_cast import as_objects
from kubesched.framework.results import PreFilterResult
from kubesched.framework.signers import RESOURCES_SIGNER_NAME, SignFragment
from kubesched.framework.status import Code, Status
from kubesched.plugins.helper.shape_score import UtilizationShapePoint, validate_shape
from kubesched.plugins.noderesources.scoring import (
    PodRequestsState,
    ResourceSpec,
    Scorer,
    default_resources,
    least_allocated_scorer,
    most_allocated_scorer,
    pod_request_list,
    requested_and_allocatable,
    requested_and_allocatable_batch,
    requested_to_capacity_ratio_scorer,
    weighted_mean_batch,
)

if TYPE_CHECKING:
    from kubesched.framework.batch import BoolArray, IntArray
    from kubesched.framework.handle import Handle
    from kubesched.framework.node_table import NodeTable

NAME: Final = "NodeResourcesFit"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

LEAST_ALLOCATED: Final = "LeastAllocated"
MOST_ALLOCATED: Final = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO: Final = "RequestedToCapacityRatio"
SCORING_STRATEGY_TYPES: Final = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)
#: requests at or above this (2**56) leave the batch path (no int64 overflow in the comparison)
_BATCH_SAFE: Final = 1 << 56


# --- args ------------------------------------------------------------------------------------


def _check_label_name(v: str) -> str:
    errs = is_qualified_name(v)
    if errs:
        raise ValueError("; ".join(errs))
    return v


def _check_resource_group(v: str) -> str:
    if "/" in v:
        raise ValueError("resource group name can't contain '/'")
    return _check_label_name(v)


def _check_fit_weight(r: ResourceSpec) -> ResourceSpec:
    if r.weight <= 0 or r.weight > 100:
        raise ValueError(f"resource weight of {r.name} not in valid range (0, 100]")
    return r


@dataclass(config=ARGS_CONFIG)
class RequestedToCapacityRatioParam:
    """``requestedToCapacityRatio``: a non-empty ``shape`` with strictly increasing utilizations."""

    shape: list[UtilizationShapePoint] = field(default_factory=list)

    @field_validator("shape")
    @classmethod
    def _valid_shape(cls, v: list[UtilizationShapePoint]) -> list[UtilizationShapePoint]:
        validate_shape(v)
        return v


@dataclass(config=ARGS_CONFIG)
class ScoringStrategy:
    """``scoringStrategy``: ``type`` (LeastAllocated | MostAllocated | RequestedToCapacityRatio),
    ``resources`` (empty -> ``[cpu:1, memory:1]``; weights 1..100 after 0 -> 1) and, for
    RequestedToCapacityRatio, ``requestedToCapacityRatio.shape``.

    Raises pydantic ``ValidationError`` (via ``ValueError``) on an unsupported type, an out-of-range
    weight, an invalid shape, or RequestedToCapacityRatio without a shape.
    """

    type: str = Field("", validate_default=True)
    resources: list[Annotated[ResourceSpec, AfterValidator(_check_fit_weight)]] = field(
        default_factory=default_resources
    )
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None

    @field_validator("type")
    @classmethod
    def _supported_type(cls, v: str) -> str:
        if v not in SCORING_STRATEGY_TYPES:
            supported = ", ".join(f'"{t}"' for t in SCORING_STRATEGY_TYPES)
            raise ValueError(f'Unsupported value: "{v}": supported values: {supported}')
        return v

    @field_validator("resources")
    @classmethod
    def _default_resources(cls, v: list[ResourceSpec]) -> list[ResourceSpec]:
        return v or default_resources()

    def __post_init__(self) -> None:
        if self.type == REQUESTED_TO_CAPACITY_RATIO and self.requested_to_capacity_ratio is None:
            raise ValueError("requestedToCapacityRatio is required for type RequestedToCapacityRatio")


def _default_strategy() -> ScoringStrategy:
    return ScoringStrategy(type=LEAST_ALLOCATED, resources=default_resources())


@dataclass(config=ARGS_CONFIG)
class NodeResourcesFitArgs:
    """``NodeResourcesFitArgs``: ``ignored_resources`` (extended resource names skipped by Filter),
    ``ignored_resource_groups`` (extended resource prefixes before ``/`` skipped by Filter) and
    ``scoring_strategy`` (default LeastAllocated over cpu:1, memory:1)."""

    ignored_resources: list[Annotated[str, AfterValidator(_check_label_name)]] = field(default_factory=list)
    ignored_resource_groups: list[Annotated[str, AfterValidator(_check_resource_group)]] = field(
        default_factory=list
    )
    scoring_strategy: ScoringStrategy = field(default_factory=_default_strategy)


def build_scorer(strategy: ScoringStrategy) -> Scorer:
    """The scorer function of a (validated) strategy (``nodeResourceStrategyTypeMap``)."""
    if strategy.type == MOST_ALLOCATED:
        return most_allocated_scorer(strategy.resources)
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        assert strategy.requested_to_capacity_ratio is not None
        shape = [(p.utilization, p.score) for p in strategy.requested_to_capacity_ratio.shape]
        return requested_to_capacity_ratio_scorer(strategy.resources, shape)
    return least_allocated_scorer(strategy.resources)


# --- fit check -------------------------------------------------------------------------------


class InsufficientResource:
    """One failing resource: ``reason`` (e.g. ``Insufficient cpu``), amounts, and whether the
    request alone exceeds the node's allocatable (``unresolvable``)."""

    __slots__ = ("resource_name", "reason", "requested", "used", "capacity", "unresolvable")

    def __init__(
        self, resource_name: str, reason: str, requested: int, used: int, capacity: int, unresolvable: bool
    ) -> None:
        self.resource_name = resource_name
        self.reason = reason
        self.requested = requested
        self.used = used
        self.capacity = capacity
        self.unresolvable = unresolvable

    def __repr__(self) -> str:
        return f"InsufficientResource({self.reason!r}, unresolvable={self.unresolvable})"


def fits_request(
    req: Resource,
    node_info: NodeInfo,
    ignored: frozenset[str] = frozenset(),
    ignored_groups: frozenset[str] = frozenset(),
) -> list[InsufficientResource]:
    """``fitsRequest``: every resource the node lacks for the pod request ``req``, in upstream
    order (pods, cpu, memory, ephemeral-storage, then scalar resources — sorted by name here,
    where upstream iterates a Go map). Ignored names/groups apply to extended resources only."""
    out: list[InsufficientResource] = []
    alloc, used = node_info.allocatable, node_info.requested
    n_pods = len(node_info.pods)
    if n_pods + 1 > alloc.allowed_pod_number:
        out.append(InsufficientResource("pods", "Too many pods", 1, n_pods, alloc.allowed_pod_number, False))
    if req.milli_cpu == 0 and req.memory == 0 and req.ephemeral_storage == 0 and not req.scalar:
        return out
    for name, r, a, u in (
        ("cpu", req.milli_cpu, alloc.milli_cpu, used.milli_cpu),
        ("memory", req.memory, alloc.memory, used.memory),
        ("ephemeral-storage", req.ephemeral_storage, alloc.ephemeral_storage, used.ephemeral_storage),
    ):
        if r > 0 and r > a - u:
            out.append(InsufficientResource(name, f"Insufficient {name}", r, u, a, r > a))
    for name in sorted(req.scalar):
        q = req.scalar[name]
        if q == 0:
            continue
        if is_extended_resource(name) and (name in ignored or name.split("/")[0] in ignored_groups):
            continue
        a = alloc.scalar.get(name, 0)
        u = used.scalar.get(name, 0)
        if q > a - u:
            out.append(InsufficientResource(name, f"Insufficient {name}", q, u, a, q > a))
    return out


def pod_request_resource(pod: Pod) -> Resource:
    """``computePodResourceRequest``: the pod's effective requests
    (``k8s.io/component-helpers/resource/helpers.go`` ``PodRequests``) as a Resource."""
    return Resource.from_list(pod.requests)


def fits(pod: Pod, node_info: NodeInfo) -> list[InsufficientResource]:
    """``Fits``: the resources ``node_info`` lacks for ``pod`` (:func:`fits_request` without
    ignored resources); empty means the pod fits."""
    return fits_request(pod_request_resource(pod), node_info)


# --- queueing hints -------------------------------------------------------------------------


def _scaled_down(target: Pod, old: Pod, new: Pod) -> bool:
    """``isResourceScaleDown``: a scheduled pod (or the target itself) lowered a request the
    target pod makes."""
    if new.uid != target.uid and not new.node_name:
        return False
    before, after = Resource.from_list(old.requests), Resource.from_list(new.requests)
    for name, q in target.requests.items():
        if q == 0:
            continue
        if name in ("cpu", "memory", "ephemeral-storage"):
            if before.get(name) > after.get(name):
                return True
        elif is_scalar_resource(name) and before.scalar.get(name, 0) > after.scalar.get(name, 0):
            return True
    return False


def _allocatable_increased(pod: Pod, old: Node, new: Node) -> bool:
    """``haveAnyRequestedResourcesIncreased``: pods capacity grew, or a resource the pod requests grew."""
    req = pod_request_resource(pod)
    before, after = Resource.from_list(old.allocatable), Resource.from_list(new.allocatable)
    if after.allowed_pod_number > before.allowed_pod_number:
        return True
    if req.milli_cpu == 0 and req.memory == 0 and req.ephemeral_storage == 0 and not req.scalar:
        return False
    if (
        (req.milli_cpu > 0 and after.milli_cpu > before.milli_cpu)
        or (req.memory > 0 and after.memory > before.memory)
        or (req.ephemeral_storage > 0 and after.ephemeral_storage > before.ephemeral_storage)
    ):
        return True
    return any(q != 0 and after.scalar.get(n, 0) > before.scalar.get(n, 0) for n, q in req.scalar.items())


def is_schedulable_after_pod_event(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """``isSchedulableAfterPodEvent``: a deleted pod that was scheduled (or nominated) may free
    resources -> Queue (an unscheduled one -> QueueSkip); an update only matters if it scaled down
    a request of a resource the pod asks for. Non-Pod objects raise ``TypeError`` (-> Queue)."""
    old, new = as_objects(Pod, old_obj, new_obj)
    if new is None:
        if old is None:
            return QueueingHint.Queue
        if not old.node_name and not old.nominated_node_name:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue
    if old is None:
        return QueueingHint.Queue
    return QueueingHint.Queue if _scaled_down(pod, old, new) else QueueingHint.QueueSkip


def is_schedulable_after_node_change(pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
    """``isSchedulableAfterNodeChange``: QueueSkip if the pod would not fit the new node even when
    empty; Queue for an added node; for an update, Queue only if allocatable grew for something the
    pod requests (or the pods capacity grew). Non-Node objects raise ``TypeError`` (-> Queue)."""
    old, new = as_objects(Node, old_obj, new_obj)
    if new is None or len(fits(pod, NodeInfo(new))) != 0:
        return QueueingHint.QueueSkip  # the pod would not fit even on the empty new node
    if old is None:
        return QueueingHint.Queue
    return QueueingHint.Queue if _allocatable_increased(pod, old, new) else QueueingHint.QueueSkip


# --- plugin ----------------------------------------------------------------------------------


class NodeResourcesFit(
    PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions, SignPlugin
):
    """Filter: the node's free allocatable covers the pod's requests (statuses as upstream ``fitsRequest``).
    Score: LeastAllocated / MostAllocated / RequestedToCapacityRatio over the configured
    resources, using non-zero cpu/memory requests. Source: ``noderesources/fit.go``."""

    NAME = NAME
    Args = NodeResourcesFitArgs

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        """Feasibility and scoring depend on the pod's requests (containers, pod-level and overhead)."""
        return [SignFragment(RESOURCES_SIGNER_NAME, dict(pod.requests))], None

    def __init__(self, args: NodeResourcesFitArgs | None = None, handle: Handle | None = None) -> None:
        super().__init__(args or NodeResourcesFitArgs(), handle)
        a: NodeResourcesFitArgs = self.args
        self.ignored_resources = frozenset(a.ignored_resources)
        self.ignored_resource_groups = frozenset(a.ignored_resource_groups)
        self.resources: list[ResourceSpec] = list(a.scoring_strategy.resources)
        #: the scored resources as a row-score key part
        self._resources_key = tuple((r.name, r.weight) for r in self.resources)
        self.scorer = build_scorer(a.scoring_strategy)
        self.strategy_type = a.scoring_strategy.type

    # PreFilter
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Store the pod's effective requests (a :class:`Resource`) under ``PreFilterNodeResourcesFit``."""
        state.write(PRE_FILTER_STATE_KEY, pod_request_resource(pod))
        return None, None

    # Filter
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Unschedulable with every failing reason (``Too many pods``, ``Insufficient cpu``, ...);
        UnschedulableAndUnresolvable when some failing request alone exceeds the allocatable."""
        try:
            req: Resource = state.read(PRE_FILTER_STATE_KEY)
        except StateNotFoundError as e:
            return Status(
                Code.Error,
                err=RuntimeError(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: {e.args[0]}'),
            )
        insufficient = fits_request(req, node_info, self.ignored_resources, self.ignored_resource_groups)
        if not insufficient:
            return None
        code = (
            Code.UnschedulableAndUnresolvable
            if any(r.unresolvable for r in insufficient)
            else Code.Unschedulable
        )
        return Status(code, *(r.reason for r in insufficient))

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> BoolArray | None:
        """Vectorised :meth:`filter` verdicts (True = fits) over NodeTable ``rows``."""
        req = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(req, Resource) or not table.exact:
            return None
        ok: BoolArray = table.num_pods[rows] < table.alloc_pods[rows]  # n + 1 <= allowed
        if req.milli_cpu == 0 and req.memory == 0 and req.ephemeral_storage == 0 and not req.scalar:
            return ok
        for r, a, u in (
            (req.milli_cpu, table.alloc_cpu, table.req_cpu),
            (req.memory, table.alloc_mem, table.req_mem),
            (req.ephemeral_storage, table.alloc_eph, table.req_eph),
        ):
            if r > 0:
                if r >= _BATCH_SAFE:
                    return None
                ok &= a[rows] - u[rows] >= r
        for name, q in req.scalar.items():
            if q == 0:
                continue
            if is_extended_resource(name) and (
                name in self.ignored_resources or name.split("/")[0] in self.ignored_resource_groups
            ):
                continue
            if abs(q) >= _BATCH_SAFE:
                return None
            ac, rc = table.scalar(name)
            ok &= ac[rows] - rc[rows] >= q
        return ok

    def filter_batch_status_keys(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        """Per row an ``int64`` key such that rows with equal keys get equal :meth:`filter`
        statuses: bits for each failing resource (in :func:`fits_request` order) and for each
        request exceeding the allocatable (the status's code and reasons depend on nothing else).
        ``None`` when the batch form declines (kubesched's speed path; see ``framework.batch``)."""
        req = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(req, Resource) or not table.exact:
            return None
        key: IntArray = (table.num_pods[rows] + 1 > table.alloc_pods[rows]).astype(np.int64)
        if req.milli_cpu == 0 and req.memory == 0 and req.ephemeral_storage == 0 and not req.scalar:
            return key
        bit = 2
        cols = [
            (req.milli_cpu, table.alloc_cpu, table.req_cpu),
            (req.memory, table.alloc_mem, table.req_mem),
            (req.ephemeral_storage, table.alloc_eph, table.req_eph),
        ]
        for name in sorted(req.scalar):
            q = req.scalar[name]
            if q == 0 or (
                is_extended_resource(name)
                and (name in self.ignored_resources or name.split("/")[0] in self.ignored_resource_groups)
            ):
                continue
            cols.append((q, *table.scalar(name)))
        for r, a, u in cols:
            if r == 0:
                continue
            if abs(r) >= _BATCH_SAFE or bit >= 1 << 61:
                return None
            av = a[rows]
            key |= np.where(r > av - u[rows], bit, 0)
            key |= np.where(r > av, bit << 1, 0)
            bit <<= 2
        return key

    # PreScore / Score
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Store the pod's per-resource requests (non-zero cpu/memory) under ``PreScoreNodeResourcesFit``."""
        state.write(PRE_SCORE_STATE_KEY, PodRequestsState(pod_request_list(pod, self.resources, False)))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The strategy's score (0..100) of ``node_info`` for ``pod``."""
        s = state.get(PRE_SCORE_STATE_KEY)
        pod_requests = (
            s.pod_requests
            if isinstance(s, PodRequestsState)
            else pod_request_list(pod, self.resources, False)
        )
        if not self.resources:
            return 0, Status(Code.Error, "resources not found")
        requested, allocatable = requested_and_allocatable(node_info, self.resources, pod_requests, False)
        return self.scorer(requested, allocatable), None

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> IntArray | None:
        """Vectorised :meth:`score` for LeastAllocated/MostAllocated (None for RequestedToCapacityRatio)."""
        if (
            self.strategy_type not in (LEAST_ALLOCATED, MOST_ALLOCATED)
            or not self.resources
            or not table.exact
        ):
            return None
        s = state.get(PRE_SCORE_STATE_KEY)
        pod_requests = (
            s.pod_requests
            if isinstance(s, PodRequestsState)
            else pod_request_list(pod, self.resources, False)
        )
        resources = self.resources
        most = self.strategy_type == MOST_ALLOCATED
        scorer = self.scorer

        def score_rows(at: IntArray, st: CycleState | None = None) -> IntArray | None:
            cols = requested_and_allocatable_batch(table, at, resources, pod_requests, False, st)
            if cols is None:
                return None
            return weighted_mean_batch(resources, cols[0], cols[1], most, cols[2])

        def score_node(ni: NodeInfo) -> int:
            return scorer(*requested_and_allocatable(ni, resources, pod_requests, False))

        key = (self.NAME, most, self._resources_key, tuple(pod_requests))
        col = table.row_scores(key, score_rows, score_node)
        if col is not None:
            return col[rows]
        return score_rows(rows, state)

    # EnqueueExtensions
    def is_schedulable_after_pod_event(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """:func:`is_schedulable_after_pod_event`, refined for the deletion of a pod bound to a node:
        Queue only when ``pod`` now fits that node's free resources (the scheduler cache's NodeInfo,
        which no longer holds the deleted pod; the plugin's ignored resources apply). A deletion
        frees resources on that one node only, so when ``pod`` still does not fit there, no node got
        room for it and the hint is QueueSkip. Upstream (``noderesources/fit.go:
        isSchedulableAfterPodEvent``) queues on every such deletion, so a pod that needs a whole
        large node is retried after every deletion anywhere in the cluster. A node the cache does
        not know, a deleted pod that was only nominated and every update keep upstream's answer.
        Non-Pod objects raise ``TypeError`` (-> Queue)."""
        hint = is_schedulable_after_pod_event(pod, old_obj, new_obj)
        if hint != QueueingHint.Queue or new_obj is not None or self.handle is None:
            return hint
        old = old_obj if isinstance(old_obj, Pod) else None
        if old is None or not old.node_name:
            return hint
        info = self.handle.cached_node_info(old.node_name)
        if info is None or info.node is None:
            return hint
        if fits_request(
            pod_request_resource(pod), info, self.ignored_resources, self.ignored_resource_groups
        ):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Pod Delete|UpdatePodScaleDown (hint :meth:`is_schedulable_after_pod_event`) and Node
        Add|UpdateNodeAllocatable (hint :func:`is_schedulable_after_node_change`)."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.Delete | ActionType.UpdatePodScaleDown),
                self.is_schedulable_after_pod_event,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable),
                is_schedulable_after_node_change,
            ),
        ]
