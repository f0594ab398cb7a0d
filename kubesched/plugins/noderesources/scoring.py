"""Resource-allocation scoring shared by NodeResourcesFit and NodeResourcesBalancedAllocation.

Follows upstream ``pkg/scheduler/framework/plugins/noderesources/resource_allocation.go``
(per-resource ``(allocatable, requested)`` pairs), ``least_allocated.go``, ``most_allocated.go``,
``requested_to_capacity_ratio.go`` and ``pkg/scheduler/framework/plugins/helper/shape_score.go``
(``pkg/scheduler/framework/plugins/noderesources/fit.go``). Amounts are integers: cpu in millicores,
memory/ephemeral-storage/hugepages in
bytes, extended resources in counts. Arithmetic reproduces Go ``int64`` semantics: products wrap
at 64 bits and integer division truncates toward zero.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass as std_dataclass
from typing import TYPE_CHECKING, Final

import numpy as np
from pydantic import field_validator
from pydantic.dataclasses import dataclass

from kubesched.api.pod import Pod
from kubesched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource
from kubesched.config.args import ARGS_CONFIG
from kubesched.framework.batch import IntArray, go_div_array
from kubesched.framework.cycle_state import CycleState, ReadOnlyStateData
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.results import MAX_NODE_SCORE
from kubesched.plugins.helper.shape_score import MAX_CUSTOM_PRIORITY_SCORE, MAX_UTILIZATION

if TYPE_CHECKING:
    from kubesched.framework.node_table import NodeTable


@dataclass(config=ARGS_CONFIG)
class ResourceSpec:
    """``ResourceSpec{name, weight}`` of the scoring args; a weight of 0 (unset) defaults to 1
    (``SetDefaults_NodeResourcesFitArgs`` / ``SetDefaults_NodeResourcesBalancedAllocationArgs``).
    Range checks depend on the plugin and live in the owning args class."""

    name: str = ""
    weight: int = 1

    @field_validator("weight")
    @classmethod
    def _default_weight(cls, v: int) -> int:
        return v or 1


def default_resources() -> list[ResourceSpec]:
    """The default scored resources ``[cpu:1, memory:1]`` (``defaultResourceSpec``)."""
    return [ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1)]


# --- Go int64 arithmetic -------------------------------------------------------------------

_U64: Final = 1 << 64
_I64_MAX: Final = (1 << 63) - 1


def i64(x: int) -> int:
    """Wrap ``x`` to a Go ``int64`` (two's complement overflow)."""
    x &= _U64 - 1
    return x - _U64 if x > _I64_MAX else x


def go_div(a: int, b: int) -> int:
    """Go integer division ``a / b``: truncation toward zero (``b != 0``)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


# --- per-resource request/allocatable -----------------------------------------------------


def pod_request_list(pod: Pod, resources: Sequence[ResourceSpec], use_requested: bool) -> list[int]:
    """``calculatePodResourceRequestList``: the pod's request of each configured resource.

    ``use_requested=False`` (NodeResourcesFit) uses the non-zero requests (per-container cpu 100m /
    memory 200Mi defaults, ``k8s.io/component-helpers/resource/helpers.go`` ``PodRequests``); ``True``
    (BalancedAllocation) uses the actual requests.
    Both include pod-level requests and overhead.
    """
    reqs: Mapping[str, int] = pod.requests if use_requested else pod.non_zero_requests
    return [reqs.get(r.name, 0) for r in resources]


def allocatable_and_requested(
    node_info: NodeInfo, resource: str, pod_request: int, use_requested: bool
) -> tuple[int, int]:
    """``calculateResourceAllocatableRequest``: ``(allocatable, node_requested + pod_request)``.

    cpu/memory use the node's non-zero requested amounts unless ``use_requested``; other resources
    always use the actual requested amounts. A scalar resource the pod requests 0 of, or one absent
    from the node's allocatable, gives ``(0, 0)`` (skipped by the scorers).
    """
    if pod_request == 0 and is_scalar_resource(resource):
        return 0, 0
    requested = node_info.requested if use_requested else node_info.non_zero_requested
    alloc = node_info.allocatable
    if resource == CPU:
        return alloc.milli_cpu, requested.milli_cpu + pod_request
    if resource == MEMORY:
        return alloc.memory, requested.memory + pod_request
    if resource == EPHEMERAL_STORAGE:
        return alloc.ephemeral_storage, node_info.requested.ephemeral_storage + pod_request
    if resource in alloc.scalar:
        return alloc.scalar[resource], node_info.requested.scalar.get(resource, 0) + pod_request
    return 0, 0


def requested_and_allocatable(
    node_info: NodeInfo, resources: Sequence[ResourceSpec], pod_requests: Sequence[int], use_requested: bool
) -> tuple[list[int], list[int]]:
    """The ``(requested, allocatable)`` vectors of ``resourceAllocationScorer.score``; entries
    whose allocatable is 0 are left as ``(0, 0)``."""
    requested = [0] * len(resources)
    allocatable = [0] * len(resources)
    # cpu and memory inline (what allocatable_and_requested gives for them), the rest through it
    alloc = node_info.allocatable
    used = node_info.requested if use_requested else node_info.non_zero_requested
    for i, r in enumerate(resources):
        name = r.name
        if name == CPU:
            a, q = alloc.milli_cpu, used.milli_cpu + pod_requests[i]
        elif name == MEMORY:
            a, q = alloc.memory, used.memory + pod_requests[i]
        else:
            a, q = allocatable_and_requested(node_info, name, pod_requests[i], use_requested)
        if a == 0:
            continue
        allocatable[i] = a
        requested[i] = q
    return requested, allocatable


#: A scorer maps ``(requested, allocatable)`` vectors to a node score.
Scorer = Callable[[Sequence[int], Sequence[int]], int]


# --- LeastAllocated / MostAllocated ---------------------------------------------------------


def least_requested_score(requested: int, capacity: int) -> int:
    """``leastRequestedScore``: ``(capacity - requested) * 100 / capacity``, 0 when over capacity."""
    if capacity == 0 or requested > capacity:
        return 0
    return go_div(i64((capacity - requested) * MAX_NODE_SCORE), capacity)


def most_requested_score(requested: int, capacity: int) -> int:
    """``mostRequestedScore``: ``min(requested, capacity) * 100 / capacity``."""
    if capacity == 0:
        return 0
    requested = min(requested, capacity)
    return go_div(i64(requested * MAX_NODE_SCORE), capacity)


def _weighted_mean_scorer(
    resources: Sequence[ResourceSpec], per_resource: Callable[[int, int], int]
) -> Scorer:
    weights = [r.weight for r in resources]

    def scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, a in enumerate(allocatable):
            if a == 0:
                continue
            node_score += per_resource(requested[i], a) * weights[i]
            weight_sum += weights[i]
        if weight_sum == 0:
            return 0
        return go_div(node_score, weight_sum)

    return scorer


def least_allocated_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """``leastResourceScorer``: integer weighted mean of :func:`least_requested_score`."""
    return _weighted_mean_scorer(resources, least_requested_score)


def most_allocated_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """``mostResourceScorer``: integer weighted mean of :func:`most_requested_score`."""
    return _weighted_mean_scorer(resources, most_requested_score)


class PodRequestsState(ReadOnlyStateData):
    """PreScore state of NodeResourcesFit and NodeResourcesBalancedAllocation: the pod's request
    of each scored resource, in the plugin's resource order (millicores / bytes / counts)."""

    __slots__ = ("pod_requests",)

    def __init__(self, pod_requests: list[int]) -> None:
        self.pod_requests = pod_requests


# --- RequestedToCapacityRatio -------------------------------------------------------------


@std_dataclass(frozen=True, slots=True)
class FunctionShapePoint:
    """A point of a broken-linear function: ``utilization`` (percent) -> ``score`` (0..100)."""

    utilization: int
    score: int


def broken_linear(shape: Sequence[FunctionShapePoint]) -> Callable[[int], int]:
    """``helper.BuildBrokenLinearFunction``: the piecewise-linear function through ``shape``
    (constant before the first and after the last point); interpolation truncates toward zero
    as Go does (falling segments have a negative numerator)."""
    pts = tuple(shape)

    def f(p: int) -> int:
        for i, pt in enumerate(pts):
            if p <= pt.utilization:
                if i == 0:
                    return pts[0].score
                prev = pts[i - 1]
                num = i64((pt.score - prev.score) * (p - prev.utilization))
                return prev.score + go_div(num, pt.utilization - prev.utilization)
        return pts[-1].score

    return f


def requested_to_capacity_ratio_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[tuple[int, int]]
) -> Scorer:
    """``requestedToCapacityRatioScorer``: ``shape`` is ``[(utilization 0..100, score 0..10)]``;
    scores are scaled by ``100 // 10``. Per resource ``f(100)`` when ``capacity == 0`` or over
    capacity, else ``f(requested * 100 / capacity)``; only resources with ``f > 0`` enter the
    weighted mean, which is rounded half away from zero (``math.Round``)."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear([FunctionShapePoint(u, s * scale) for u, s in shape])
    weights = [r.weight for r in resources]

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(go_div(i64(requested * MAX_UTILIZATION), capacity))

    def scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, a in enumerate(allocatable):
            if a == 0:
                continue
            s = resource_score(requested[i], a)
            if s > 0:
                node_score += s * weights[i]
                weight_sum += weights[i]
        if weight_sum == 0:
            return 0
        # math.Round(float64(n) / float64(w)) for small non-negative integers, computed exactly.
        return (2 * node_score + weight_sum) // (2 * weight_sum)

    return scorer


# --- vectorised forms (kubesched.framework.batch) -------------------------------------------

#: amounts at or above this (2**56: 64 PiB, 2**56 millicores) leave the batch path, so that no
#: int64 product below can wrap differently from the per-node arithmetic
_SAFE: Final = 1 << 56


#: CycleState key of the per-cycle resource columns both plugins read (:class:`ResourceColumns`)
RESOURCE_COLUMNS_STATE_KEY: Final = "NodeResourcesColumns"

_MISSING: Final = object()


class ResourceColumns(ReadOnlyStateData):
    """The NodeTable resource columns gathered over the rows being scored, kept in CycleState for
    one Score pass: NodeResourcesFit and NodeResourcesBalancedAllocation score the same rows of
    the same table and read the same allocatable columns (and Fit's non-zero requested columns
    are BalancedAllocation's requested ones for pods without defaults), so each column is gathered
    and range-checked once per cycle. Valid while ``table.version`` and the ``rows`` object are
    the ones it was built for.

    ``cols[name]``: the column ``name`` of the table (``alloc_cpu``, ``req_mem``, ...) at ``rows``
    (``int64``: millicores, bytes or counts), or ``None`` when a value is outside ``[0, 2**56)``
    (the caller leaves the batch path). ``all_valid[name]``: no 0 in that allocatable column."""

    __slots__ = ("all_valid", "cols", "rows", "table", "version")

    def __init__(self, table: NodeTable, rows: IntArray) -> None:
        self.table = table
        self.version = table.version
        self.rows = rows
        self.cols: dict[str, IntArray | None] = {}
        self.all_valid: dict[str, bool] = {}

    @staticmethod
    def of(state: CycleState | None, table: NodeTable, rows: IntArray) -> ResourceColumns:
        """The cycle's columns for ``(table, rows)``: the ones in ``state`` when they were built
        for the same table, version and rows object, else new ones (stored in ``state``)."""
        c = state.get(RESOURCE_COLUMNS_STATE_KEY) if state is not None else None
        if (
            isinstance(c, ResourceColumns)
            and c.table is table
            and c.rows is rows
            and c.version == table.version
        ):
            return c
        c = ResourceColumns(table, rows)
        if state is not None:
            state.write(RESOURCE_COLUMNS_STATE_KEY, c)
        return c

    def column(self, name: str, source: IntArray) -> IntArray | None:
        """``source[rows]`` (``source`` is the table's column ``name``), or ``None`` when a value
        is negative or at least 2**56."""
        v = self.cols.get(name, _MISSING)
        if v is _MISSING:
            a = source[self.rows]
            v = a if len(a) == 0 or (int(a.max()) < _SAFE and int(a.min()) >= 0) else None
            self.cols[name] = v
        return v  # type: ignore[return-value]

    def allocatable_all_valid(self, name: str, a: IntArray) -> bool:
        """Whether the allocatable column ``name`` (``a``, from :meth:`column`) has no 0."""
        ok = self.all_valid.get(name)
        if ok is None:
            ok = bool(a.all())
            self.all_valid[name] = ok
        return ok


def requested_and_allocatable_batch(
    table: NodeTable,
    rows: IntArray,
    resources: Sequence[ResourceSpec],
    pod_requests: Sequence[int],
    use_requested: bool,
    state: CycleState | None = None,
) -> tuple[list[IntArray], list[IntArray], bool] | None:
    """Column form of :func:`requested_and_allocatable` over ``rows`` of a NodeTable: per resource,
    ``(requested, allocatable)`` arrays with both 0 where the allocatable is 0, and whether every
    allocatable value is non-zero and every requested value non-negative (the scorers' fast
    paths). ``None`` when a value could overflow ``int64`` or a column holds a negative amount
    (the caller falls back to the per-node path). The gathered table columns are shared through
    ``state`` (:class:`ResourceColumns`)."""
    cache = ResourceColumns.of(state, table, rows)
    requested: list[IntArray] = []
    allocatable: list[IntArray] = []
    n = len(rows)
    simple = True
    for i, r in enumerate(resources):
        q = pod_requests[i]
        name = r.name
        if q == 0 and is_scalar_resource(name):
            requested.append(np.zeros(n, dtype=np.int64))
            allocatable.append(np.zeros(n, dtype=np.int64))
            simple = False
            continue
        if abs(q) >= _SAFE:
            return None
        if name == CPU:
            an = "alloc_cpu"
            a = cache.column(an, table.alloc_cpu)
            u = (
                cache.column("req_cpu", table.req_cpu)
                if use_requested
                else cache.column("nz_cpu", table.nz_cpu)
            )
        elif name == MEMORY:
            an = "alloc_mem"
            a = cache.column(an, table.alloc_mem)
            u = (
                cache.column("req_mem", table.req_mem)
                if use_requested
                else cache.column("nz_mem", table.nz_mem)
            )
        elif name == EPHEMERAL_STORAGE:
            an = "alloc_eph"
            a = cache.column(an, table.alloc_eph)
            u = cache.column("req_eph", table.req_eph)
        else:
            ac, rc = table.scalar(name)
            an = "scalar_alloc/" + name
            a = cache.column(an, ac)
            u = cache.column("scalar_req/" + name, rc)
        if a is None or u is None:
            return None
        req = u + q
        if cache.allocatable_all_valid(an, a):
            if q < 0:
                simple = False
        else:
            simple = False
            req = np.where(a == 0, 0, req)
        requested.append(req)
        allocatable.append(a)
    return requested, allocatable, simple


def _go_div_nonneg_safe(a: IntArray, b: IntArray) -> IntArray:
    """Go division with ``b`` possibly 0 (result 0 there)."""
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, go_div_array(a, safe))


def weighted_mean_batch(
    resources: Sequence[ResourceSpec],
    requested: Sequence[IntArray],
    allocatable: Sequence[IntArray],
    most: bool,
    simple: bool = False,
) -> IntArray:
    """Vectorised ``leastResourceScorer`` (``most=False``) / ``mostResourceScorer`` (``most=True``).

    ``simple``: every allocatable value is non-zero and every requested value non-negative (as
    :func:`requested_and_allocatable_batch` reports); then every quotient is non-negative, Go's
    truncating division is floor division, and ``(capacity - requested) * 100 / capacity`` with
    the over-capacity 0 is ``max(capacity - requested, 0) * 100 // capacity``: the same integers
    in fewer array operations."""
    if simple and resources and all(r.weight > 0 for r in resources):
        total: IntArray = np.zeros(len(allocatable[0]), dtype=np.int64)
        wsum = 0
        for i, r in enumerate(resources):
            a = allocatable[i]
            q = requested[i]
            per = (np.minimum(q, a) if most else np.maximum(a - q, 0)) * MAX_NODE_SCORE // a
            total = per * r.weight + total
            wsum += r.weight
        out: IntArray = total // wsum
        return out
    n = len(allocatable[0]) if allocatable else 0
    node_score = np.zeros(n, dtype=np.int64)
    weight_sum = np.zeros(n, dtype=np.int64)
    for i, r in enumerate(resources):
        a = allocatable[i]
        q = requested[i]
        valid = a != 0
        safe_a = np.where(valid, a, 1)
        if most:
            per = go_div_array(np.minimum(q, safe_a) * MAX_NODE_SCORE, safe_a)
        else:
            per = np.where(q > safe_a, 0, go_div_array((safe_a - q) * MAX_NODE_SCORE, safe_a))
        node_score += np.where(valid, per * r.weight, 0)
        weight_sum += np.where(valid, r.weight, 0)
    return _go_div_nonneg_safe(node_score, weight_sum)
