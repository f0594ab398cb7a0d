"""DynamicResources (``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``).

Pods with ``spec.resourceClaims`` get their ResourceClaims allocated from the devices DRA drivers
publish in ResourceSlices, with the structured-parameters allocator
(:mod:`kubesched.plugins.dynamicresources.structured`):

* PreEnqueue (``PreEnqueue``): every claim must exist (a templated entry needs its generated claim
  named in ``status.resourceClaimStatuses``), not be being deleted, and a generated claim must be
  owned by the pod; else UnschedulableAndUnresolvable with upstream's text (``pod "ns/p":
  ResourceClaim not created yet``, ``resourceclaim.resource.k8s.io "c" not found``).
* PreFilter: Skip without claims; ``resourceclaim in use`` (allocated, reserved for 256 others),
  ``resource claim ns/c is in the process of being allocated`` (in flight for another pod),
  ``request gpu: device class gpu.example.com does not exist``; builds the cycle's allocator over
  every device in use (allocated claims plus in-flight allocations) and the slice index.
* Filter: an allocated claim's ``nodeSelector`` must match (``resourceclaim not available on the
  node``); the claims to allocate must fit (``cannot allocate all claims``). The search is bounded
  by ``filterTimeout`` (``timed out trying to allocate devices``) with DRASchedulerFilterTimeout.
  A CEL or class problem is an Error status (the attempt stops with the allocator's text).
  ``filter_batch`` runs the same per-node code over many nodes in one call; the allocator reuses a
  node's earlier outcome while nothing it depends on changed (``NodeOutcomes``, kept by the
  ``DRAManager`` across cycles), with upstream's results.
* PostFilter: deallocates one unavailable claim reserved by nobody else (``deallocation of
  ResourceClaim completed``), else ``still not schedulable`` / ``no new claims to deallocate``.
* Score: for ``firstAvailable`` requests, 8 - index of the chosen sub-request, summed;
  NormalizeScore is ``DefaultNormalizeScore``. A PreScore (kubesched's, see :meth:`pre_score`)
  skips the Score pass for pods that allocate nothing in the cycle.
* Reserve/Unreserve: the node's allocations become in-flight (their devices count as allocated for
  the next pods) and are dropped again on Unreserve, which also removes the pod from
  ``status.reservedFor`` when it had been written.
* PreBind: for each claim not yet reserved for the pod: the ``resource.kubernetes.io/delete-protection``
  finalizer (an update), then ``status.allocation`` and ``status.reservedFor`` (a status write),
  retried on conflict with a fresh claim (5 attempts, ``retry.DefaultRetry``); the written claim
  is assumed until the informer has it.

Args (``DynamicResourcesArgs``): ``filterTimeout`` (Go duration, default ``10s``, 0 = no limit).

Deviations: the claim status is written with a merge patch of ``status`` (``allocation`` and the
whole ``reservedFor`` list) where upstream sends ``UpdateStatus`` with the claim's
resourceVersion; kubesched therefore reads the claim from the API just before writing (upstream
writes the cached claim and re-reads on conflict), and a writer in the few microseconds between
that read and the write is not detected by the API server; extended
resources backed by DRA, device binding conditions and the scheduler's ``SignPod`` are not
modelled (their gates are off by default, and refused when switched on).
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

import numpy as np
from pydantic import field_validator
from pydantic.dataclasses import dataclass

from kubesched.api.dra import ResourceClaim
from kubesched.api.dra.cel import CelCache
from kubesched.api.dra.common import RESERVED_FOR_MAX_SIZE
from kubesched.api.node_selector import NodeSelector
from kubesched.api.pod import Pod
from kubesched.config.args import ARGS_CONFIG
from kubesched.config.duration import GoDuration
from kubesched.errors import ConflictError, KubeschedError, ManifestError
from kubesched.framework.batch import BoolArray, IntArray, default_normalize_score_batch
from kubesched.framework.cycle_state import CycleState, StateData, StateNotFoundError
from kubesched.framework.diagnosis import NodeToStatus
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.handle import Handle
from kubesched.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
    SignPlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.results import NodeScore, PostFilterResult, PreFilterResult
from kubesched.framework.signers import SignFragment
from kubesched.framework.status import Code, Status
from kubesched.plugins.dynamicresources.dra_manager import DRAManager
from kubesched.plugins.dynamicresources.structured import (
    AllocationError,
    Allocator,
    ClaimAllocation,
    FailedAllocationOnNode,
    Features,
)
from kubesched.plugins.helper.normalize_score import default_normalize_score

NAME = "DynamicResources"
STATE_KEY = NAME
MAX_NODE_SCORE = 100
FIRST_AVAILABLE_MAX_SIZE = 8
#: ``resourceapi.Finalizer``
FINALIZER = "resource.kubernetes.io/delete-protection"
#: ``retry.DefaultRetry.Steps``
RETRY_STEPS = 5

ERR_REASON_NO_CLAIMS = "no new claims to deallocate"
ERR_REASON_STILL_NOT_SCHEDULABLE = "still not schedulable"
ERR_REASON_DEALLOCATED = "deallocation of ResourceClaim completed"
ERR_REASON_CLAIM_IN_USE = "resourceclaim in use"
ERR_REASON_NOT_AVAILABLE = "resourceclaim not available on the node"
ERR_REASON_CANNOT_ALLOCATE = "cannot allocate all claims"
ERR_REASON_TIMEOUT = "timed out trying to allocate devices"

#: :meth:`DynamicResources.filter_batch_status_keys` keys: rejections whose statuses are equal
_KEY_CANNOT_ALLOCATE = 0
_KEY_TIMEOUT = 1


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


def kobj(namespace: str, name: str) -> str:
    """``klog.KObj``."""
    return f"{namespace}/{name}" if namespace else name


class _ClaimInfo:
    """``informationForClaim``: ``available_on_nodes`` for allocated claims; ``allocation`` set by Reserve."""

    __slots__ = ("allocation",)

    def __init__(self) -> None:
        self.allocation: dict[str, Any] | None = None


class _State(StateData):
    """``stateData``: the pod's claims (in ``spec.resourceClaims`` order, generated claims skipped
    when none is needed), the cycle's allocator, per-node allocations found by Filter (node name ->
    one result per claim to allocate), and the claims seen unavailable on some node."""

    __slots__ = (
        "claims",
        "pending",
        "allocator",
        "infos",
        "node_allocations",
        "unavailable",
        "rejected_keys",
        "first_available",
        "with_node_selector",
        "lock",
    )

    def __init__(self) -> None:
        self.claims: list[ResourceClaim] = []
        #: the claims Filter allocates (those without an allocation), in ``claims`` order
        self.pending: list[ResourceClaim] = []
        self.allocator: Allocator | None = None
        self.infos: list[_ClaimInfo] = []
        self.node_allocations: dict[str, list[ClaimAllocation]] = {}
        self.unavailable: set[int] = set()
        #: node table row -> status key of a node ``filter_batch`` rejected
        self.rejected_keys: dict[int, int] = {}
        #: whether a claim to allocate has ``firstAvailable`` requests (else every Score is 0)
        self.first_available = False
        #: allocated claims with a node selector: (index in ``claims``, the selector)
        self.with_node_selector: list[tuple[int, NodeSelector]] = []
        self.lock = threading.Lock()

    def clone(self) -> _State:
        return self

    def to_allocate(self) -> list[tuple[int, ResourceClaim]]:
        return [(i, c) for i, c in enumerate(self.claims) if c.allocation is None]


class _NotSchedulable(Exception):
    """``foreachPodResourceClaim``'s error: the text of an UnschedulableAndUnresolvable status."""


class DynamicResources(
    PreEnqueuePlugin,
    PreFilterPlugin,
    FilterPlugin,
    PostFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    ScoreExtensions,
    ReservePlugin,
    PreBindPlugin,
    EnqueueExtensions,
    SignPlugin,
):
    """Dynamic Resource Allocation with structured parameters (module docstring)."""

    NAME = NAME
    Args = DynamicResourcesArgs

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        """A pod with resource claims is not signed (whether its claims are node-local is not
        simple to tell); any other pod adds nothing."""
        if pod.resource_claims:
            return None, Status(Code.Unschedulable, "pods with dra resource claims are not signable")
        return None, None

    def __init__(self, args: DynamicResourcesArgs | None = None, handle: Handle | None = None) -> None:
        super().__init__(args or DynamicResourcesArgs(), handle)
        gates: Mapping[str, bool] = handle.feature_gates if handle is not None else {}
        self.features = Features(
            admin_access=gates.get("DRAAdminAccess", True),
            prioritized_list=gates.get("DRAPrioritizedList", True),
        )
        self.enable_filter_timeout = gates.get("DRASchedulerFilterTimeout", True)
        self.filter_timeout: float = self.args.filter_timeout
        #: upstream keeps the 10 most recent compiled expressions
        self.cel_cache = CelCache(10)
        self.manager = DRAManager()

    # -- claims of a pod ------------------------------------------------------------------------

    def _objects(self) -> Any:
        return self.required_handle().objects

    def _pod_claims(self, pod: Pod) -> list[ResourceClaim]:
        """``foreachPodResourceClaim``; raises :class:`_NotSchedulable` with upstream's text."""
        out = []
        statuses = {s.name: s.resource_claim_name for s in pod.resource_claim_statuses}
        for rc in pod.resource_claims:
            must_check_owner = False
            if rc.resource_claim_name:
                name: str | None = rc.resource_claim_name
            else:
                if rc.name not in statuses:
                    raise _NotSchedulable(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet')
                name = statuses[rc.name]
                must_check_owner = True
            if name is None:
                continue
            claim = self.manager.get_claim(self._objects(), pod.namespace, name)
            if claim is None:
                raise _NotSchedulable(f'resourceclaim.resource.k8s.io "{name}" not found')
            if claim.deleting:
                raise _NotSchedulable(f'resourceclaim "{claim.name}" is being deleted')
            if must_check_owner and claim.owner_pod_uid != pod.uid:
                raise _NotSchedulable(
                    f"ResourceClaim {kobj(claim.namespace, claim.name)} was not created for pod "
                    f"{kobj(pod.namespace, pod.name)} (pod is not owner)"
                )
            out.append(claim)
        return out

    # -- PreEnqueue -----------------------------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """UnschedulableAndUnresolvable while a claim is missing (``PreEnqueue``)."""
        if not pod.resource_claims:
            return None
        try:
            self._pod_claims(pod)
        except _NotSchedulable as e:
            return Status(Code.UnschedulableAndUnresolvable, str(e))
        except ManifestError as e:
            return Status(Code.UnschedulableAndUnresolvable, str(e))
        return None

    # -- PreFilter ------------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """``PreFilter``: Skip without claims; check claims and classes; build the allocator."""
        s = _State()
        state.write(STATE_KEY, s)
        if not pod.resource_claims:
            return None, Status(Code.Skip)
        try:
            claims = self._pod_claims(pod)
        except _NotSchedulable as e:
            return None, Status(Code.UnschedulableAndUnresolvable, str(e))
        except ManifestError as e:
            return None, Status(Code.Error, str(e))
        if not claims:
            return None, Status(Code.Skip)
        objects = self._objects()
        s.infos = [_ClaimInfo() for _ in claims]
        to_allocate = 0
        for claim in claims:
            if claim.allocation is not None:
                if len(claim.reserved_for) >= RESERVED_FOR_MAX_SIZE and not claim.is_reserved_for(pod.uid):
                    return None, Status(Code.UnschedulableAndUnresolvable, ERR_REASON_CLAIM_IN_USE)
                if claim.allocation.node_selector is not None:
                    err = next(
                        (t.parse_error for t in claim.allocation.node_selector.terms if t.parse_error), None
                    )
                    if err:
                        return None, Status(Code.Error, err)
                continue
            to_allocate += 1
            if self.manager.claim_has_pending_allocation(claim.uid):
                return None, Status(
                    Code.UnschedulableAndUnresolvable,
                    f"resource claim "
                    f"{kobj(claim.namespace, claim.name)} is in the process of being allocated",
                )
            for request in claim.spec.requests:
                if request.exactly is not None:
                    st = self._validate_device_class(request.exactly.device_class_name, request.name)
                    if st is not None:
                        return None, st
                elif request.first_available:
                    if not self.features.prioritized_list:
                        return None, Status(
                            Code.UnschedulableAndUnresolvable,
                            f"resource claim "
                            f"{kobj(claim.namespace, claim.name)}, request {request.name}: has "
                            "subrequests, but the DRAPrioritizedList feature is disabled",
                        )
                    for sub in request.first_available:
                        st = self._validate_device_class(sub.device_class_name, f"{request.name}/{sub.name}")
                        if st is not None:
                            return None, st
        if to_allocate:
            allocated = self.manager.list_all_allocated_devices(objects)
            index = self.manager.slice_index(objects)
            s.allocator = Allocator(
                self.features,
                allocated,
                lambda n: self.manager.get_class(objects, n),
                index,
                self.cel_cache,
                self.manager.outcomes,
            )
        s.claims = claims
        s.pending = [c for c in claims if c.allocation is None]
        s.first_available = any(r.first_available for c in s.pending for r in c.spec.requests)
        s.with_node_selector = [
            (i, c.allocation.node_selector)
            for i, c in enumerate(claims)
            if c.allocation is not None and c.allocation.node_selector is not None
        ]
        return None, None

    def _validate_device_class(self, class_name: str, request_name: str) -> Status | None:
        if not class_name:
            return Status(Code.Error, f"request {request_name}: unsupported request type")
        try:
            self.manager.get_class(self._objects(), class_name)
        except KeyError:
            return Status(
                Code.UnschedulableAndUnresolvable,
                f"request {request_name}: device class {class_name} does not exist",
            )
        except ManifestError as e:
            return Status(Code.Error, str(e))
        return None

    def pre_filter_extensions(self) -> None:
        return None

    # -- Filter ---------------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """``Filter``: allocated claims' node selectors, then the allocator on this node."""
        try:
            s: _State = state.read(STATE_KEY)
        except StateNotFoundError as e:
            return Status.as_status(e)
        if not s.claims:
            return None
        return self._filter_node(s, node_info)[1]

    def _filter_node(self, s: _State, node_info: NodeInfo) -> tuple[int, Status | None]:
        """:meth:`filter` for a pod with claims: ``(key, status)``, ``key`` naming the kind of
        rejection (:data:`_KEY_CANNOT_ALLOCATE`, :data:`_KEY_TIMEOUT`; -1 for the others, whose
        statuses are not shared between nodes)."""
        node = node_info.node
        node_name = node_info.name
        unavailable = []
        for i, selector in s.with_node_selector:
            labels = node.labels if node is not None else {}
            if not selector.matches(labels, node_name):
                unavailable.append(i)
        allocations: list[ClaimAllocation] | None = None
        if s.allocator is not None:
            deadline = None
            if self.enable_filter_timeout and self.filter_timeout > 0:
                deadline = time.monotonic() + self.filter_timeout
            try:
                allocations = s.allocator.allocate(node, s.pending, deadline, "context deadline exceeded")
            except FailedAllocationOnNode as e:
                return -1, Status(Code.UnschedulableAndUnresolvable, str(e))
            except AllocationError as e:
                if str(e) == "filter operation aborted: context deadline exceeded":
                    return _KEY_TIMEOUT, Status(Code.UnschedulableAndUnresolvable, ERR_REASON_TIMEOUT)
                return -1, Status(Code.Error, str(e))
            except ManifestError as e:
                return -1, Status(Code.Error, str(e))
            if allocations is None or len(allocations) != len(s.pending):
                return _KEY_CANNOT_ALLOCATE, Status(
                    Code.UnschedulableAndUnresolvable, ERR_REASON_CANNOT_ALLOCATE
                )
        with s.lock:
            if unavailable:
                s.unavailable.update(unavailable)
                return -1, Status(Code.UnschedulableAndUnresolvable, ERR_REASON_NOT_AVAILABLE)
            if allocations is not None:
                s.node_allocations[node_name] = allocations
        return -1, None

    # -- PostFilter -----------------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """``PostFilter``: deallocate one unavailable claim nobody else uses (lowest index first;
        upstream picks in map order)."""
        try:
            s: _State = state.read(STATE_KEY)
        except StateNotFoundError as e:
            return None, Status.as_status(e)
        if not s.claims:
            return None, Status(Code.Unschedulable, ERR_REASON_NO_CLAIMS)
        for i in sorted(s.unavailable):
            claim = s.claims[i]
            if not claim.reserved_for or (
                len(claim.reserved_for) == 1 and claim.reserved_for[0].uid == pod.uid
            ):
                try:
                    self._client().patch_status(
                        "ResourceClaim",
                        claim.namespace,
                        claim.name,
                        {"reservedFor": None, "allocation": None, "devices": None},
                    )
                except KubeschedError as e:
                    return None, Status(Code.Error, str(e))
                return None, Status(Code.Unschedulable, ERR_REASON_DEALLOCATED)
        return None, Status(Code.Unschedulable, ERR_REASON_STILL_NOT_SCHEDULABLE)

    # -- Score ----------------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Skip when nothing is allocated in this cycle (no claims, or only allocated ones): Score
        would be 0 on every node. kubesched only (upstream has no PreScore and scores 0 on every
        node); the totals are the same and pods without claims skip the Score pass."""
        s = state.get(STATE_KEY)
        if isinstance(s, _State) and s.node_allocations:
            return None
        return Status(Code.Skip)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """``Score``/``computeScore``: sum over allocated ``firstAvailable`` sub-requests of
        ``8 - index`` (the earlier the alternative, the higher)."""
        try:
            s: _State = state.read(STATE_KEY)
        except StateNotFoundError as e:
            return 0, Status.as_status(e)
        if not s.claims:
            return 0, None
        allocations = s.node_allocations.get(node_info.name)
        if allocations is None or not s.first_available:
            return 0, None
        total = 0
        for i, (_, claim) in enumerate(s.to_allocate()):
            if i >= len(allocations):
                return 0, Status(
                    Code.Error, f"number of allocations {len(allocations)} is smaller than number of claims"
                )
            chosen = {
                r["request"] for r in allocations[i].allocation["devices"]["results"] if "/" in r["request"]
            }
            for req in claim.spec.requests:
                for j, sub in enumerate(req.first_available):
                    if f"{req.name}/{sub.name}" in chosen:
                        total += FIRST_AVAILABLE_MAX_SIZE - j
        return total, None

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> BoolArray | None:
        """Vectorised :meth:`filter`: every row passes for a pod without claims; with claims to
        allocate, the allocator runs over the rows in one loop (the per-node framework calls
        saved) and the kind of each rejection is kept for :meth:`filter_batch_status_keys`.
        Declines for a pod with an allocated claim that has a node selector: whether such a
        claim is unavailable is recorded only for the nodes the per-node pass reaches."""
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return None
        if not s.claims:
            return np.ones(len(rows), dtype=bool)
        if s.with_node_selector:
            return None
        infos = table.infos
        out = np.ones(len(rows), dtype=bool)
        keys = s.rejected_keys
        filter_node = self._filter_node
        for i, row in enumerate(rows.tolist()):
            ni = infos[row]
            if ni is None:
                return None
            key, st = filter_node(s, ni)
            if st is not None:
                out[i] = False
                keys[row] = key
        return out

    def filter_batch_status_keys(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        """Rows :meth:`filter_batch` rejected for the same reason (cannot allocate, timed out)
        share one status; the others (-1) are asked node by node."""
        s = state.get(STATE_KEY)
        if not isinstance(s, _State):
            return None
        keys = s.rejected_keys
        return np.fromiter((keys.get(r, -1) for r in rows.tolist()), dtype=np.int64, count=len(rows))

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> IntArray | None:
        """Vectorised :meth:`score`: zeros when nothing was allocated in this cycle (a pod without
        claims, or only allocated claims) or no claim to allocate has ``firstAvailable`` requests;
        otherwise declines (scored node by node)."""
        s = state.get(STATE_KEY)
        if isinstance(s, _State) and (not s.node_allocations or not s.first_available):
            return np.zeros(len(rows), dtype=np.int64)
        return None

    def normalize_score_batch(self, state: CycleState, pod: Pod, scores: IntArray) -> IntArray:
        """Vectorised :meth:`normalize_score`."""
        return default_normalize_score_batch(MAX_NODE_SCORE, False, scores)

    def score_extensions(self) -> ScoreExtensions:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        """``DefaultNormalizeScore(MaxNodeScore, false)``."""
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    # -- Reserve / Unreserve --------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """``Reserve``: the node's allocations become in-flight allocations."""
        try:
            s: _State = state.read(STATE_KEY)
        except StateNotFoundError as e:
            return Status.as_status(e)
        pending = s.to_allocate()
        if not pending or s.allocator is None:
            return None
        allocations = s.node_allocations.get(node_name)
        if not allocations:
            return Status(Code.Error, "claim allocation not found for node")
        if len(allocations) != len(pending):
            return Status(
                Code.Error,
                f"internal error, have {len(allocations)} allocations, {len(pending)} claims "
                f"to allocate, want {len(pending)} claims",
            )
        for (index, claim), alloc in zip(pending, allocations, strict=True):
            # a copy: the allocator may hand the same outcome to later pods (NodeOutcomes)
            s.infos[index].allocation = copy.deepcopy(alloc.allocation)
            raw = copy.deepcopy(dict(claim.raw))
            meta = raw.setdefault("metadata", {})
            if FINALIZER not in (meta.get("finalizers") or []):
                meta["finalizers"] = [*(meta.get("finalizers") or []), FINALIZER]
            raw.setdefault("status", {})["allocation"] = s.infos[index].allocation
            self.manager.signal_claim_pending_allocation(claim.uid, ResourceClaim.from_obj(raw))
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """``Unreserve``: drop in-flight allocations; remove the pod from ``reservedFor``."""
        try:
            s: _State = state.read(STATE_KEY)
        except StateNotFoundError:
            return
        for claim in s.claims:
            if self.manager.remove_claim_pending_allocation(claim.uid):
                self.manager.assumed_claim_restore(claim.namespace, claim.name)
            if claim.allocation is not None and claim.is_reserved_for(pod.uid):
                keep = [
                    dict(r)
                    for r in (claim.raw.get("status") or {}).get("reservedFor") or []
                    if r.get("uid") != pod.uid
                ]
                try:
                    self._client().patch_status(
                        "ResourceClaim", claim.namespace, claim.name, {"reservedFor": keep or None}
                    )
                except KubeschedError:
                    pass  # retried with the next scheduling attempt, as upstream

    # -- PreBind --------------------------------------------------------------------------------

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Skip when the pod has no claims."""
        try:
            s: _State = state.read(STATE_KEY)
        except StateNotFoundError as e:
            return Status.as_status(e)
        return Status(Code.Skip) if not s.claims else None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """``PreBind``: write allocation and reservation of every claim not reserved for the pod yet."""
        try:
            s: _State = state.read(STATE_KEY)
        except StateNotFoundError as e:
            return Status.as_status(e)
        for index, claim in enumerate(s.claims):
            if claim.is_reserved_for(pod.uid):
                continue
            try:
                s.claims[index] = self._bind_claim(s, index, pod)
            except KubeschedError as e:
                return Status(Code.Error, str(e))
        return None

    def _client(self) -> Any:
        client = self.required_handle().client
        if client is None:
            raise KubeschedError("no API client to write ResourceClaims")
        return client

    def _bind_claim(self, s: _State, index: int, pod: Pod) -> ResourceClaim:
        """``bindClaim``: finalizer, then ``status.allocation`` and ``status.reservedFor``."""
        claim = s.claims[index]
        allocation = s.infos[index].allocation
        client = self._client()
        name = kobj(claim.namespace, claim.name)
        written: dict[str, Any] | None = None
        try:
            for attempt in range(RETRY_STEPS):
                raw: Mapping[str, Any] = client.get("ResourceClaim", claim.namespace, claim.name)
                current = ResourceClaim.from_obj(raw)
                if current.deleting:
                    raise KubeschedError(f"claim {name} got deleted in the meantime")
                status = dict(raw.get("status") or {})
                try:
                    if allocation is not None:
                        if current.allocation is not None:
                            raise KubeschedError(f"claim {name} got allocated elsewhere in the meantime")
                        if FINALIZER not in current.finalizers:
                            obj = copy.deepcopy(dict(raw))
                            obj["metadata"]["finalizers"] = [*current.finalizers, FINALIZER]
                            try:
                                raw = client.update(obj)
                            except ConflictError:
                                raise
                            except KubeschedError as e:
                                raise KubeschedError(f"add finalizer to claim {name}: {e}") from None
                        status["allocation"] = allocation
                    reserved = [
                        *(status.get("reservedFor") or []),
                        {"resource": "pods", "name": pod.name, "uid": pod.uid},
                    ]
                    patch: dict[str, Any] = {"reservedFor": reserved}
                    if allocation is not None:
                        patch["allocation"] = allocation
                    try:
                        written = client.patch_status("ResourceClaim", claim.namespace, claim.name, patch)
                    except ConflictError:
                        raise
                    except KubeschedError as e:
                        what = "allocation and reservation" if allocation is not None else "reservation"
                        raise KubeschedError(f"add {what} to claim {name}: {e}") from None
                    break
                except ConflictError:
                    if attempt == RETRY_STEPS - 1:
                        raise
            assert written is not None
            return ResourceClaim.from_obj(written)
        finally:
            if written is not None:
                self.manager.assume_claim_after_api_call(written)
            if allocation is not None:
                self.manager.remove_claim_pending_allocation(claim.uid)

    # -- events ---------------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """``EventsToRegister`` with queueing hints on (v1.35 default)."""
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.Node,
                    ActionType.Add | ActionType.UpdateNodeLabel | ActionType.UpdateNodeAllocatable,
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.ResourceClaim, ActionType.Add | ActionType.Update),
                self._after_claim_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Pod, ActionType.UpdatePodGeneratedResourceClaim),
                self._after_pod_change,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.DeviceClass, ActionType.Add | ActionType.Update)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.ResourceSlice, ActionType.Add | ActionType.Update)
            ),
        ]

    def _after_claim_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """``isSchedulableAfterClaimChange``."""
        if not isinstance(new_obj, Mapping):
            raise TypeError(f"unexpected object in isSchedulableAfterClaimChange: {type(new_obj).__name__}")
        new_uid = str((new_obj.get("metadata") or {}).get("uid") or "")
        try:
            claims = self._pod_claims(pod)
        except (_NotSchedulable, ManifestError):
            return QueueingHint.QueueSkip
        old_status = (old_obj.get("status") or {}) if isinstance(old_obj, Mapping) else None
        new_status = new_obj.get("status") or {}
        if (
            old_status is not None
            and old_status.get("allocation") is not None
            and new_status.get("allocation") is None
        ):
            return QueueingHint.Queue
        if not any(c.uid == new_uid for c in claims):
            return QueueingHint.QueueSkip
        if old_obj is None:
            return QueueingHint.Queue
        if old_status == new_status:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def _after_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """``isSchedulableAfterPodChange``: the pod's own generated claims appeared."""
        modified = new_obj if isinstance(new_obj, Pod) else Pod.from_manifest(new_obj)
        if modified.uid != pod.uid:
            return QueueingHint.QueueSkip
        try:
            self._pod_claims(modified)
        except (_NotSchedulable, ManifestError):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue
