"""NodeResourcesBalancedAllocation: favour nodes whose resource usage stays balanced.

Follows upstream ``pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go`` at
v1.35 (``pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go``) and the args checks of
``ValidateNodeResourcesBalancedAllocationArgs``. Uses the
pods' *actual* requests (no non-zero defaults) for both the pod and the node; amounts are integers
(cpu millicores, memory bytes, extended resources counts).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Annotated, Final

import numpy as np
import numpy.typing as npt
from pydantic import AfterValidator, field_validator
from pydantic.dataclasses import dataclass

from kubesched.api.pod import Pod
from kubesched.config.args import ARGS_CONFIG
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import PreScorePlugin, ScorePlugin, SignPlugin
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.results import MAX_NODE_SCORE
from kubesched.framework.signers import RESOURCES_SIGNER_NAME, SignFragment
from kubesched.framework.status import Code, Status
from kubesched.plugins.noderesources.scoring import (
    PodRequestsState,
    ResourceSpec,
    default_resources,
    pod_request_list,
    requested_and_allocatable,
    requested_and_allocatable_batch,
)

if TYPE_CHECKING:
    from kubesched.framework.batch import IntArray
    from kubesched.framework.handle import Handle
    from kubesched.framework.node_table import NodeTable

NAME: Final = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME


def _check_weight_is_one(r: ResourceSpec) -> ResourceSpec:
    if r.weight != 1:
        raise ValueError("must be 1")
    return r


@dataclass(config=ARGS_CONFIG)
class NodeResourcesBalancedAllocationArgs:
    """``resources`` to balance (default cpu, memory; empty -> default). Weights must be 1 (0 -> 1)
    and names unique; violations raise pydantic ``ValidationError``."""

    resources: list[Annotated[ResourceSpec, AfterValidator(_check_weight_is_one)]] = field(
        default_factory=default_resources
    )

    @field_validator("resources")
    @classmethod
    def _unique_default(cls, v: list[ResourceSpec]) -> list[ResourceSpec]:
        if not v:
            return default_resources()
        seen: set[str] = set()
        for r in v:
            if r.name in seen:
                raise ValueError(f'Duplicate value: "{r.name}"')
            seen.add(r.name)
        return v


def balanced_resource_score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """``balancedResourceScorer``: ``int((1 - std) * 100)`` where std is the (population) standard
    deviation of the per-resource fractions ``min(requested/allocatable, 1)`` over resources with
    allocatable != 0 (``|f0 - f1| / 2`` for two). Float operations in upstream order."""
    fractions: list[float] = []
    total = 0.0
    for i, a in enumerate(allocatable):
        if a == 0:
            continue
        f = min(float(requested[i]) / float(a), 1.0)
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / float(len(fractions))
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / float(len(fractions)))
    return int((1 - std) * float(MAX_NODE_SCORE))


def balanced_resource_score_batch(
    requested: Sequence[IntArray], allocatable: Sequence[IntArray], all_valid: bool = False
) -> IntArray:
    """Column form of :func:`balanced_resource_score`: per row, the fractions of the resources
    with allocatable != 0 (in resource order) give the standard deviation exactly as the scalar
    code computes it (adding ``0.0`` for skipped resources leaves every float sum unchanged).
    ``all_valid``: no allocatable value is 0; with two resources (the default cpu and memory)
    every row then takes the scalar code's two-resource branch, computed without masks."""
    if all_valid and len(allocatable) == 2:
        f0 = np.minimum(requested[0].astype(np.float64) / allocatable[0].astype(np.float64), 1.0)
        f1 = np.minimum(requested[1].astype(np.float64) / allocatable[1].astype(np.float64), 1.0)
        std2 = np.abs((f0 - f1) / 2)
        out2: IntArray = ((1 - std2) * float(MAX_NODE_SCORE)).astype(np.int64)
        return out2
    n = len(allocatable[0])
    count = np.zeros(n, dtype=np.int64)
    total = np.zeros(n, dtype=np.float64)
    fracs: list[npt.NDArray[np.float64]] = []
    valids: list[npt.NDArray[np.bool_]] = []
    first = np.zeros(n, dtype=np.float64)
    second = np.zeros(n, dtype=np.float64)
    for q, a in zip(requested, allocatable, strict=False):
        valid = a != 0
        f = np.minimum(q.astype(np.float64) / np.where(valid, a, 1).astype(np.float64), 1.0)
        f = np.where(valid, f, 0.0)
        total = total + f
        first = np.where(valid & (count == 0), f, first)
        second = np.where(valid & (count == 1), f, second)
        count += valid
        fracs.append(f)
        valids.append(valid)
    std = np.where(count == 2, np.abs((first - second) / 2), 0.0)
    many = count > 2
    if many.any():
        mean = total / np.where(many, count, 1).astype(np.float64)
        acc = np.zeros(n, dtype=np.float64)
        for f, valid in zip(fracs, valids, strict=False):
            d = np.where(valid, f - mean, 0.0)
            acc = acc + d * d
        std = np.where(many, np.sqrt(acc / np.where(many, count, 1).astype(np.float64)), std)
    out: IntArray = ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
    return out


class NodeResourcesBalancedAllocation(PreScorePlugin, ScorePlugin, SignPlugin):
    """Score = how evenly the node's resources would be used with the pod added (0..100, no
    normalization); PreScore Skips best-effort pods (all configured requests 0).
    Source: ``noderesources/balanced_allocation.go``."""

    NAME = NAME
    Args = NodeResourcesBalancedAllocationArgs

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        """Scoring depends on the pod's requests (containers, pod-level and overhead)."""
        return [SignFragment(RESOURCES_SIGNER_NAME, dict(pod.requests))], None

    def __init__(
        self, args: NodeResourcesBalancedAllocationArgs | None = None, handle: Handle | None = None
    ) -> None:
        super().__init__(args or NodeResourcesBalancedAllocationArgs(), handle)
        self.resources: list[ResourceSpec] = list(self.args.resources)
        #: the scored resources as a row-score key part
        self._resources_key = tuple((r.name, r.weight) for r in self.resources)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Skip for a best-effort pod; else store its per-resource requests."""
        reqs = pod_request_list(pod, self.resources, True)
        if all(r == 0 for r in reqs):
            return Status(Code.Skip)
        state.write(PRE_SCORE_STATE_KEY, PodRequestsState(reqs))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """:func:`balanced_resource_score` with the node's requested amounts plus the pod's."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(s, PodRequestsState):
            reqs = s.pod_requests
        else:
            reqs = pod_request_list(pod, self.resources, True)
            if all(r == 0 for r in reqs):
                return 0, None
        if not self.resources:
            return 0, Status(Code.Error, "resources not found")
        requested, allocatable = requested_and_allocatable(node_info, self.resources, reqs, True)
        return balanced_resource_score(requested, allocatable), None

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> IntArray | None:
        """Vectorised :meth:`score` (same float operations in the same order, so identical results)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PodRequestsState) or not self.resources or not table.exact:
            return None
        resources = self.resources
        reqs = s.pod_requests

        def score_rows(at: IntArray, st: CycleState | None = None) -> IntArray | None:
            cols = requested_and_allocatable_batch(table, at, resources, reqs, True, st)
            if cols is None:
                return None
            return balanced_resource_score_batch(cols[0], cols[1], cols[2])

        def score_node(ni: NodeInfo) -> int:
            return balanced_resource_score(*requested_and_allocatable(ni, resources, reqs, True))

        key = (self.NAME, self._resources_key, tuple(reqs))
        col = table.row_scores(key, score_rows, score_node)
        if col is not None:
            return col[rows]
        return score_rows(rows, state)
