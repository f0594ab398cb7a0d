"""NodeResourcesBalancedAllocation: favour nodes whose resource usage stays balanced.

Follows upstream ``pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go`` at
v1.35 (spec §8.4) and the args checks of ``ValidateNodeResourcesBalancedAllocationArgs``. Uses the
pods' *actual* requests (no non-zero defaults) for both the pod and the node; amounts are integers
(cpu millicores, memory bytes, extended resources counts).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Annotated, Final

from pydantic import AfterValidator, field_validator
from pydantic.dataclasses import dataclass

from kubesched.api.pod import Pod
from kubesched.config.args import ARGS_CONFIG
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import PreScorePlugin, ScorePlugin
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.results import MAX_NODE_SCORE
from kubesched.framework.status import Code, Status
from kubesched.plugins.node_resources_scoring import (
    ResourceSpec,
    default_resources,
    pod_request_list,
    requested_and_allocatable,
)

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle

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
        default_factory=default_resources)

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


class _PreScoreState:
    """The pod's actual request of each configured resource."""

    __slots__ = ("pod_requests",)

    def __init__(self, pod_requests: list[int]) -> None:
        self.pod_requests = pod_requests

    def clone(self) -> _PreScoreState:
        return self


class NodeResourcesBalancedAllocation(PreScorePlugin, ScorePlugin):
    """Score = how evenly the node's resources would be used with the pod added (0..100, no
    normalization); PreScore Skips best-effort pods (all configured requests 0).
    Source: ``noderesources/balanced_allocation.go``."""

    NAME = NAME
    Args = NodeResourcesBalancedAllocationArgs

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | None = None,
                 handle: Handle | None = None) -> None:
        super().__init__(args or NodeResourcesBalancedAllocationArgs(), handle)
        self.resources: list[ResourceSpec] = list(self.args.resources)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Skip for a best-effort pod; else store its per-resource requests."""
        reqs = pod_request_list(pod, self.resources, True)
        if all(r == 0 for r in reqs):
            return Status(Code.Skip)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(reqs))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """:func:`balanced_resource_score` with the node's requested amounts plus the pod's."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(s, _PreScoreState):
            reqs = s.pod_requests
        else:
            reqs = pod_request_list(pod, self.resources, True)
            if all(r == 0 for r in reqs):
                return 0, None
        if not self.resources:
            return 0, Status(Code.Error, "resources not found")
        requested, allocatable = requested_and_allocatable(node_info, self.resources, reqs, True)
        return balanced_resource_score(requested, allocatable), None
