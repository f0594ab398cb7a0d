"""DynamicResources (``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``).

kubesched does not implement Dynamic Resource Allocation (no ResourceClaim/ResourceSlice/DeviceClass
handling, no device allocation). The plugin is still in the default profile because it shapes
upstream's messages for every pod:

* PreEnqueue: Success (upstream gates only pods whose claims do not exist yet).
* PreFilter: like upstream it first records an empty state, then Skips pods without
  ``spec.resourceClaims``. A pod that references claims is rejected with UnschedulableAndUnresolvable
  :data:`ERR_REASON_NOT_SUPPORTED` (never a crash, never a silent gate).
* Filter: Success when the pod has no claims (it is skipped then anyway).
* PostFilter: Unschedulable ``no new claims to deallocate`` for a pod without claims; for a pod with
  claims (nothing was ever allocated by kubesched) Unschedulable ``still not schedulable``, upstream's
  text when no claim could be deallocated. When PreFilter never ran (an earlier PreFilter plugin
  rejected the pod) the state is missing and, as upstream's ``getStateData`` does, an Error status
  ``not found`` is returned.
* Reserve/Unreserve/PreBind: nothing to do (PreBindPreFlight Skips).

Args (``DynamicResourcesArgs``): ``filterTimeout`` (Go duration, default ``10s``, >= 0); it bounds
upstream's per-node allocation search and has no effect here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import Any

from pydantic import field_validator
from pydantic.dataclasses import dataclass

from kubesched.api.pod import Pod
from kubesched.config.args import ARGS_CONFIG
from kubesched.config.duration import GoDuration
from kubesched.framework.cycle_state import CycleState, StateData, StateNotFoundError
from kubesched.framework.diagnosis import NodeToStatus
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    ReservePlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.results import PostFilterResult, PreFilterResult
from kubesched.framework.status import Code, Status

NAME = "DynamicResources"
STATE_KEY = NAME
ERR_REASON_NO_CLAIMS = "no new claims to deallocate"
ERR_REASON_STILL_NOT_SCHEDULABLE = "still not schedulable"
ERR_REASON_NOT_SUPPORTED = ("pod references ResourceClaims (spec.resourceClaims), "
                            "but dynamic resource allocation is not supported by kubesched yet")


@dataclass(config=ARGS_CONFIG)
class DynamicResourcesArgs:
    """``DynamicResourcesArgs``: ``filter_timeout`` in seconds (YAML ``filterTimeout: 10s``)."""

    filter_timeout: GoDuration = field(default=10.0)

    @field_validator("filter_timeout")
    @classmethod
    def _non_negative(cls, v: float) -> float:
        if v < 0:
            raise ValueError("must be zero or positive")
        return v


class _State(StateData):
    """The pod's ``spec.resourceClaims`` entries (empty for pods without claims)."""

    __slots__ = ("claims",)

    def __init__(self, claims: tuple[Any, ...] = ()) -> None:
        self.claims = claims

    def clone(self) -> _State:
        return self


class DynamicResources(PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, PostFilterPlugin, ReservePlugin,
                       PreBindPlugin, EnqueueExtensions):
    """DRA placeholder with upstream's messages for pods without claims (module docstring)."""

    NAME = NAME
    Args = DynamicResourcesArgs

    def __init__(self, args: DynamicResourcesArgs | None = None, handle: Handle | None = None) -> None:
        super().__init__(args or DynamicResourcesArgs(), handle)

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """Never gates (a pod with claims is rejected with a message at PreFilter instead)."""
        return None

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        """Record the claims; Skip without claims; reject pods with claims (unsupported)."""
        s = _State(tuple(pod.resource_claims))
        state.write(STATE_KEY, s)
        if not s.claims:
            return None, Status(Code.Skip)
        return None, Status(Code.UnschedulableAndUnresolvable, ERR_REASON_NOT_SUPPORTED)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Success for pods without claims; pods with claims never get here."""
        try:
            s: _State = state.read(STATE_KEY)
        except StateNotFoundError as e:
            return Status.as_status(e)
        if not s.claims:
            return None
        return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_NOT_SUPPORTED)

    def post_filter(self, state: CycleState, pod: Pod,
                    filtered_node_status_map: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]:
        """``no new claims to deallocate`` (no claims), ``still not schedulable`` (claims), Error ``not found``
        (PreFilter did not run)."""
        try:
            s: _State = state.read(STATE_KEY)
        except StateNotFoundError as e:
            return None, Status.as_status(e)
        if not s.claims:
            return None, Status(Code.Unschedulable, ERR_REASON_NO_CLAIMS)
        return None, Status(Code.Unschedulable, ERR_REASON_STILL_NOT_SCHEDULABLE)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Nothing to reserve."""
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Nothing to revert."""

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Skip: no claims are ever allocated."""
        return Status(Code.Skip)

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Nothing to write."""
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Upstream's registrations (ResourceClaim, ResourceSlice, DeviceClass, Pod generated claims, Node);
        they only matter for pods with claims, which kubesched rejects."""
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.ResourceClaim, ActionType.Add | ActionType.Update)),
            ClusterEventWithHint(ClusterEvent(EventResource.ResourceSlice, ActionType.Add | ActionType.Update)),
            ClusterEventWithHint(ClusterEvent(EventResource.DeviceClass, ActionType.Add | ActionType.Update)),
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.UpdatePodGeneratedResourceClaim)),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel
                                              | ActionType.UpdateNodeTaint)),
        ]
