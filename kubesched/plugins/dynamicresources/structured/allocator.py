"""The structured-parameters allocator (``staging/src/k8s.io/dynamic-resource-allocation/structured/
internal/stable/allocator_stable.go``: ``Allocator.Allocate``, ``validateDeviceRequest``,
``allocateOne``, ``isSelectable``, ``selectorsMatch``, ``allocateDevice``, ``createNodeSelector``).

v1.35's defaults (DRAPrioritizedList and DRAAdminAccess on; partitionable devices, device taints,
binding conditions and consumable capacity off) select upstream's "stable" allocator, which this
module follows: for one node, the claims are allocated one after another, each request after the
other, each device of a request after the other, trying every eligible device (not allocated, not
being allocated to another claim of the pod unless admin access, class and request selectors match,
constraints hold) in pool order, slice order and device order, backtracking on failure. The first
full solution wins. ``All`` requests take every matching device of the node's pools (no pool may be
incomplete or invalid). ``firstAvailable`` sub-requests are tried in order.

Errors: :class:`AllocationError` stops the whole scheduling attempt (a claim that cannot be
allocated anywhere because of its own content: a CEL error, a missing class, an ``All`` request
over a pool being updated); :class:`FailedAllocationOnNode` only fails this node (invalid pools).
``None`` from :meth:`Allocator.allocate` means the claims do not fit on the node.

Results are the JSON a claim's ``status.allocation`` holds (``devices.results``,
``devices.config``, ``nodeSelector``), so the plugin writes them as they are.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.dra import Device, DeviceClass, ResourceClaim, ResourceSlice
from kubesched.api.dra.cel import CelCache, CelRuntimeError, CompilationResult, enhance_runtime_error
from kubesched.api.dra.common import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT_COUNT,
    ALLOCATION_RESULTS_MAX_SIZE,
)
from kubesched.api.node import Node
from kubesched.plugins.dynamicresources.structured.constraint import MatchAttributeConstraint
from kubesched.plugins.dynamicresources.structured.pools import Pool, SliceIndex, device_input_at

#: ``DeviceID``: (driver, pool, device)
DeviceID = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class Features:
    """``structured.Features``: the DRA feature gates the allocator reads (v1.35 defaults)."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = False
    device_taints: bool = False
    device_binding_and_status: bool = False
    consumable_capacity: bool = False


class AllocationError(Exception):
    """A problem with the claims themselves; the scheduling attempt stops with this text."""


class FailedAllocationOnNode(AllocationError):
    """``ErrFailedAllocationOnNode``: only this node failed (its text explains why)."""


class _MaxSizeExceeded(Exception):
    """``errAllocationResultMaxSizeExceeded``."""


class ClaimAllocation:
    """One claim's allocation: ``status.allocation`` as JSON (``allocation``) and the devices.

    ``allocation`` is built on first use (most nodes a Filter pass allocates on are never
    reserved): ``build`` makes it; a ready dict may be given instead."""

    __slots__ = ("devices", "_allocation", "_build")

    def __init__(
        self,
        allocation: dict[str, Any] | None,
        devices: list[DeviceID],
        build: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        self.devices = devices
        self._allocation = allocation
        self._build = build

    @property
    def allocation(self) -> dict[str, Any]:
        """``status.allocation`` (``devices.results``, ``devices.config``, ``nodeSelector``)."""
        out = self._allocation
        if out is None:
            assert self._build is not None
            out = self._allocation = self._build()
            self._build = None
        return out


def kobj(claim: ResourceClaim) -> str:
    """``klog.KObj``: ``namespace/name`` (the name alone for an object without a namespace)."""
    meta = claim.raw.get("metadata") or {}
    return f"{meta['namespace']}/{claim.name}" if meta.get("namespace") else claim.name


class _Req:
    """``requestAccessor`` over an exact request or a sub-request."""

    __slots__ = (
        "name",
        "device_class_name",
        "allocation_mode",
        "count",
        "admin_access",
        "has_admin_access",
        "selectors",
        "tolerations",
    )

    def __init__(
        self,
        name: str,
        device_class_name: str,
        allocation_mode: str,
        count: int,
        admin_access: bool,
        has_admin_access: bool,
        selectors: tuple[str, ...],
        tolerations: tuple[Mapping[str, Any], ...],
    ) -> None:
        self.name = name
        self.device_class_name = device_class_name
        self.allocation_mode = allocation_mode
        self.count = count
        self.admin_access = admin_access
        self.has_admin_access = has_admin_access
        self.selectors = selectors
        self.tolerations = tolerations


@dataclass(slots=True)
class _Candidate:
    id: DeviceID
    device: Device
    slice: ResourceSlice
    index: int


@dataclass(slots=True)
class _RequestData:
    request: _Req
    parent: _Req | None
    cls: DeviceClass | None = None
    num_devices: int = 0
    all_devices: list[_Candidate] = field(default_factory=list)
    #: the class's selectors then the request's (the key of ``DeviceInput.all_results``)
    selectors: tuple[str, ...] = ()

    def request_name(self) -> str:
        if self.parent is not None:
            return f"{self.parent.name}/{self.request.name}"
        return self.request.name


@dataclass(slots=True)
class _DeviceResult:
    request: str
    parent_request: str
    id: DeviceID
    slice: ResourceSlice
    device: Device
    admin_access: bool

    def request_name(self) -> str:
        return f"{self.parent_request}/{self.request}" if self.parent_request else self.request


class NodeOutcomes:
    """Outcomes of earlier :meth:`Allocator.allocate` calls per node, kept across scheduling
    cycles by the allocator's owner, with ``pool_versions``: (driver, pool) -> a number that
    changes whenever a device of that pool changes between in use and free (the owner bumps it
    when the allocated-device set changes).

    An outcome is reused when the node's pools are the same objects (same slices, same Node
    object), their versions are unchanged (so is every device's availability on the node), and
    the claims to allocate have the same specs (by content) and use the same DeviceClass objects:
    the search is deterministic, so it would find the same devices again (or fail again). Only
    outcomes without an error are kept; a reused outcome is the same list of
    :class:`ClaimAllocation` (read-only; the plugin copies an allocation before writing it).
    kubesched only: upstream searches every node in every cycle, with the same results."""

    __slots__ = ("pool_versions", "by_node")

    def __init__(self) -> None:
        self.pool_versions: dict[tuple[str, str], int] = {}
        #: node name -> (pools, their versions, specs key, class identities, allocations or None,
        #: the classes)
        self.by_node: MutableMapping[str, tuple[Any, ...]] = {}

    def bump(self, changed: set[DeviceID]) -> None:
        """The devices in ``changed`` went from free to in use or back."""
        pv = self.pool_versions
        for d in changed:
            k = (d[0], d[1])
            pv[k] = pv.get(k, 0) + 1

    def clear(self) -> None:
        """Forget every outcome (the slices changed)."""
        self.by_node = {}


class Allocator:
    """``stable.Allocator``: shared by every node of one scheduling cycle.

    ``allocated`` holds the devices in use by any claim (allocated or assumed in flight);
    ``get_class(name)`` returns the DeviceClass or raises :class:`KeyError` with the lister's
    NotFound text; ``slices`` is the cycle's :class:`SliceIndex`; ``outcomes``, when given, keeps
    per-node outcomes across cycles (:class:`NodeOutcomes`; its ``pool_versions`` must match
    ``allocated``).
    """

    def __init__(
        self,
        features: Features,
        allocated: set[DeviceID] | frozenset[DeviceID],
        get_class: Callable[[str], DeviceClass],
        slices: SliceIndex,
        cel_cache: CelCache,
        outcomes: NodeOutcomes | None = None,
    ) -> None:
        self.features = features
        self.allocated = allocated
        self.get_class = get_class
        self.slices = slices
        self.cel_cache = cel_cache
        self.outcomes = outcomes
        #: ``numAllocateOneInvocations``
        self.num_allocate_one = 0
        # node-independent lookups, done once per cycle (the allocator lives for one cycle)
        self._classes: dict[str, DeviceClass | KeyError] = {}
        self._compiled: dict[str, CompilationResult] = {}
        #: the node-independent part of :meth:`allocate` per claims (by identity), see ``_Prepared``
        self._prepared: dict[tuple[int, ...], _Prepared] = {}
        #: the claims of the last :meth:`allocate` calls once validated, with their outcome key
        #: (specs, class identities)
        self._current: tuple[Sequence[ResourceClaim], str, tuple[int, ...]] | None = None

    def device_class(self, name: str) -> DeviceClass:
        """The DeviceClass ``name`` (looked up once per cycle); raises :class:`KeyError`."""
        hit = self._classes.get(name)
        if hit is None:
            try:
                hit = self.get_class(name)
            except KeyError as e:
                hit = e
            self._classes[name] = hit
        if isinstance(hit, KeyError):
            raise hit
        return hit

    def compiled(self, expression: str) -> CompilationResult:
        """The compiled selector (from the CEL cache once per cycle)."""
        hit = self._compiled.get(expression)
        if hit is None:
            hit = self._compiled[expression] = self.cel_cache.get_or_compile(expression)
        return hit

    def allocate(
        self,
        node: Node | None,
        claims: Sequence[ResourceClaim],
        deadline: float | None = None,
        abort_cause: str = "context deadline exceeded",
    ) -> list[ClaimAllocation] | None:
        """``Allocate`` for ``node``: one allocation per claim (in ``claims`` order) or None when
        they do not fit. ``deadline`` (``time.monotonic()`` seconds) aborts the search with
        ``filter operation aborted: <abort_cause>``. Raises :class:`AllocationError`.

        With ``outcomes``, an earlier outcome on this node that is still valid is returned as it
        is (the same list: callers copy an allocation before they change it)."""
        outcomes = self.outcomes
        if outcomes is not None:
            current = self._current
            if current is None or current[0] is not claims:
                prepared = self._prepared.get(tuple(map(id, claims)))
                if prepared is not None and prepared.error is None:
                    current = self._current = (claims, *prepared.outcome_key()[:2])
            if current is not None and current[0] is claims:
                hit = outcomes.by_node.get(node.name if node is not None else "")
                if hit is not None and hit[2] == current[1] and hit[3] == current[2]:
                    pools = self.slices.pools_for(node)
                    if hit[0] is pools:
                        pv = outcomes.pool_versions
                        if hit[1] == tuple([pv.get(p.id, 0) for p in pools]):
                            out: list[ClaimAllocation] | None = hit[4]
                            return out
        return _Run(self, node, claims, deadline, abort_cause).run()


@dataclass(slots=True)
class _Prepared:
    """What ``Allocate`` validates before the search when it does not depend on the node (no
    request asks for ``All`` devices): the request data, the constraints' specs, or the error the
    validation raised. Kept by :class:`Allocator` for the claims of its cycle, so the nodes after
    the first skip it (their outcome would be the same)."""

    claims: Sequence[ResourceClaim]
    request_data: dict[tuple[int, int, int], _RequestData]
    constraints: list[list[tuple[tuple[str, ...], str]]]
    error: AllocationError | None = None
    #: the claims' specs as canonical JSON, and the classes used with their identities (for
    #: :class:`NodeOutcomes`; an outcome keeps the classes, so equal identities are equal objects)
    specs: str | None = None
    class_ids: tuple[int, ...] = ()
    classes: tuple[DeviceClass | None, ...] = ()

    def outcome_key(self) -> tuple[str, tuple[int, ...], tuple[DeviceClass | None, ...]]:
        if self.specs is None:
            self.specs = json.dumps([c.raw.get("spec") for c in self.claims], sort_keys=True, default=str)
            self.classes = tuple(d.cls for d in self.request_data.values())
            self.class_ids = tuple(map(id, self.classes))
        return self.specs, self.class_ids, self.classes


def _node_independent(claims: Sequence[ResourceClaim]) -> bool:
    """No request or sub-request asks for ``All`` devices (those depend on the node's pools)."""
    for claim in claims:
        for request in claim.spec.requests:
            if request.exactly is not None and request.exactly.allocation_mode == ALLOCATION_MODE_ALL:
                return False
            if any(sub.allocation_mode == ALLOCATION_MODE_ALL for sub in request.first_available):
                return False
    return True


class _Run:
    """``allocator``: the state of one :meth:`Allocator.allocate` call."""

    def __init__(
        self,
        a: Allocator,
        node: Node | None,
        claims: Sequence[ResourceClaim],
        deadline: float | None,
        abort_cause: str,
    ) -> None:
        self.a = a
        self.node = node
        self.claims = claims
        self.deadline = deadline
        self.abort_cause = abort_cause
        self.pools: list[Pool] = []
        self.matches: dict[tuple[DeviceID, tuple[int, int, int]], bool] = {}
        self.constraints: list[list[MatchAttributeConstraint]] = [[] for _ in claims]
        self.request_data: dict[tuple[int, int, int], _RequestData] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        self.result: list[list[_DeviceResult]] = [[] for _ in claims]
        #: (claim, request) -> index of the sub-request chosen for a ``firstAvailable`` request
        self.selected: dict[tuple[int, int], int] = {}

    # -- setup -------------------------------------------------------------------------------

    def run(self) -> list[ClaimAllocation] | None:
        self.pools = self.a.slices.pools_for(self.node)
        claims = self.claims
        key = tuple(map(id, claims))
        prepared = self.a._prepared.get(key)
        if prepared is None:
            prepared = _Prepared(claims, self.request_data, [[] for _ in claims])
            try:
                self._prepare(prepared)
            except AllocationError as e:
                prepared.error = e
            if _node_independent(claims):
                self.a._prepared[key] = prepared
        err = prepared.error
        if err is not None:
            raise type(err)(*err.args)  # a fresh exception: no traceback piles up across nodes
        outcomes = self.a.outcomes
        if outcomes is not None and self.a._prepared.get(key) is prepared:
            return self._run_remembered(prepared, outcomes)
        return self._search(prepared)

    def _run_remembered(self, prepared: _Prepared, outcomes: NodeOutcomes) -> list[ClaimAllocation] | None:
        """:meth:`_search`, or its earlier outcome on this node when still valid (:class:`NodeOutcomes`)."""
        pools = self.pools
        pv = outcomes.pool_versions
        versions = tuple([pv.get(p.id, 0) for p in pools])
        specs, class_ids, classes = prepared.outcome_key()
        name = self.node.name if self.node is not None else ""
        hit = outcomes.by_node.get(name)
        if (
            hit is not None
            and hit[0] is pools
            and hit[1] == versions
            and hit[2] == specs
            and hit[3] == class_ids
        ):
            earlier: list[ClaimAllocation] | None = hit[4]
            return earlier
        out = self._search(prepared)
        outcomes.by_node[name] = (pools, versions, specs, class_ids, out, classes)
        return out

    def _search(self, prepared: _Prepared) -> list[ClaimAllocation] | None:
        """The search on this node (``allocateOne`` from the first device of the first claim)."""
        self.request_data = prepared.request_data
        if any(prepared.constraints):
            self.constraints = [
                [MatchAttributeConstraint(requests, attribute) for requests, attribute in specs]
                for specs in prepared.constraints
            ]
        try:
            done = self._allocate_one(0, 0, 0, 0, False)
        except _MaxSizeExceeded:
            done = False
        if not done:
            for pool in self.pools:
                if pool.is_invalid:
                    raise FailedAllocationOnNode("invalid resource pools were encountered")
            return None
        return [self._result(ci, claim) for ci, claim in enumerate(self.claims)]

    def _prepare(self, prepared: _Prepared) -> None:
        """``Allocate``'s validation: every request (``validateDeviceRequest``), the size limit,
        the constraints. Raises :class:`AllocationError`."""
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, request in enumerate(claim.spec.requests):
                if request.first_available:
                    if not self.a.features.prioritized_list:
                        raise AllocationError(
                            f"claim {kobj(claim)}, request {request.name}: has subrequests, but "
                            "the DRAPrioritizedList feature is disabled"
                        )
                    parent = self._exact_req(request)
                    lowest = None
                    for si, sub in enumerate(request.first_available):
                        req = _Req(
                            sub.name,
                            sub.device_class_name,
                            sub.allocation_mode,
                            sub.count,
                            False,
                            False,
                            sub.selectors,
                            sub.tolerations,
                        )
                        data = self._validate(req, parent, (ci, ri, si))
                        self.request_data[(ci, ri, si)] = data
                        lowest = data.num_devices if lowest is None else min(lowest, data.num_devices)
                    min_devices += lowest or 0
                else:
                    data = self._validate(self._exact_req(request), None, (ci, ri, 0))
                    self.request_data[(ci, ri, 0)] = data
                    min_devices += data.num_devices
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {kobj(claim)}: number of requested devices {min_devices} exceeds the "
                    f"claim limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            for i, c in enumerate(claim.spec.constraints):
                if c.match_attribute is None:
                    raise AllocationError(
                        f"claim {kobj(claim)}, constraint #{i}: empty constraint (unsupported "
                        "constraint type?)"
                    )
                prepared.constraints[ci].append((tuple(c.requests), c.match_attribute))

    @staticmethod
    def _exact_req(request: Any) -> _Req:
        e = request.exactly
        if e is None:
            return _Req(request.name, "", "", 0, False, False, (), ())
        return _Req(
            request.name,
            e.device_class_name,
            e.allocation_mode,
            e.count,
            bool(e.admin_access),
            e.admin_access is not None,
            e.selectors,
            e.tolerations,
        )

    def _validate(self, req: _Req, parent: _Req | None, key: tuple[int, int, int]) -> _RequestData:
        """``validateDeviceRequest``."""
        claim = self.claims[key[0]]
        data = _RequestData(req, parent)
        if not self.a.features.admin_access and req.has_admin_access:
            raise AllocationError(
                f"claim {kobj(claim)}, request {req.name}: admin access is requested, but the "
                "feature is disabled"
            )
        if not req.device_class_name:
            raise AllocationError(
                f"claim {kobj(claim)}, request {req.name}: missing device class name (unsupported "
                "request type?)"
            )
        try:
            data.cls = self.a.device_class(req.device_class_name)
        except KeyError as e:
            raise AllocationError(
                f"claim {kobj(claim)}, request {req.name}: could not retrieve device class "
                f"{req.device_class_name}: {e.args[0] if e.args else e}"
            ) from None
        data.selectors = (*data.cls.selectors, *req.selectors)
        if req.allocation_mode == ALLOCATION_MODE_EXACT_COUNT:
            data.num_devices = req.count
        elif req.allocation_mode == ALLOCATION_MODE_ALL:
            for pool in self.pools:
                if pool.is_incomplete:
                    raise AllocationError(
                        f"claim {kobj(claim)}, request {req.name}: asks for all devices, but "
                        f"resource pool {pool.pool_id} is currently being updated"
                    )
                if pool.is_invalid:
                    raise AllocationError(
                        f"claim {kobj(claim)}, request {req.name}: asks for all devices, but "
                        f"resource pool {pool.pool_id} is currently invalid"
                    )
                for s in pool.slices:
                    for di, d in enumerate(s.devices):
                        if self._selectable(key, data, s, di):
                            data.all_devices.append(_Candidate((s.driver, s.pool, d.name), d, s, di))
            data.num_devices = len(data.all_devices)
        else:
            raise AllocationError(
                f"claim {kobj(claim)}, request {req.name}: unsupported count mode {req.allocation_mode}"
            )
        return data

    # -- search ------------------------------------------------------------------------------

    def _in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.a.allocated or bool(self.allocating.get(device_id))

    def _allocating_for_claim(self, device_id: DeviceID, ci: int) -> bool:
        s = self.allocating.get(device_id)
        return s is not None and ci in s

    def _allocate_one(self, ci: int, ri: int, si: int, di: int, sub_request: bool) -> bool:
        """``allocateOne``: True when every remaining device could be allocated."""
        self.a.num_allocate_one += 1
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise AllocationError(f"filter operation aborted: {self.abort_cause}")
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.spec.requests):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, False)
            except _MaxSizeExceeded:
                return False
        key = (ci, ri, si)
        data = self.request_data[key]
        if not sub_request and data.parent is not None:
            all_exceeded = True
            sub = 0
            while True:
                if (ci, ri, sub) not in self.request_data:
                    if all_exceeded:
                        raise _MaxSizeExceeded
                    return False
                try:
                    ok = self._allocate_one(ci, ri, sub, di, True)
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.selected[(ci, ri)] = sub
                    return True
                sub += 1
        request = data.request
        do_all = request.allocation_mode == ALLOCATION_MODE_ALL
        if do_all and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False)
        if len(self.result[ci]) + data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded
        if do_all:
            cand = data.all_devices[di]
            undo = self._allocate_device(ci, ri, si, cand, True)
            if undo is None:
                return False
            try:
                done = self._allocate_one(ci, ri, si, di + 1, sub_request)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        admin = request.admin_access
        allocated = self.a.allocated
        allocating = self.allocating
        for pool in self.pools:
            if pool.is_incomplete or pool.is_invalid:
                continue
            for device_id, d, s, dj in pool.candidates():
                if admin:
                    if self._allocating_for_claim(device_id, ci):
                        continue
                elif device_id in allocated or allocating.get(device_id):
                    continue
                if not self._selectable(key, data, s, dj):
                    continue
                undo = self._allocate_device(ci, ri, si, _Candidate(device_id, d, s, dj), False)
                if undo is None:
                    continue
                try:
                    done = self._allocate_one(ci, ri, si, di + 1, sub_request)
                except BaseException:
                    undo()
                    raise
                if done:
                    return True
                undo()
        return False

    def _selectable(self, key: tuple[int, int, int], data: _RequestData, s: ResourceSlice, di: int) -> bool:
        """``isSelectable``: class selectors, then the request's (results cached per call; a
        device remembers the outcome of a selector list that evaluated without error)."""
        d = s.devices[di]
        if d.needs_off_feature == "bindingConditions" and not self.a.features.device_binding_and_status:
            return False
        inp = device_input_at(s, di)
        known = inp.all_results.get(data.selectors)
        if known is not None:
            return known
        device_id = (s.driver, s.pool, d.name)
        mk = (device_id, key)
        known = self.matches.get(mk)
        if known is not None:
            return known
        ok = True
        if data.cls is not None:
            ok = self._selectors_match(key, inp, device_id, data.cls, data.cls.selectors)
        if ok:
            ok = self._selectors_match(key, inp, device_id, None, data.request.selectors)
        self.matches[mk] = ok
        inp.all_results[data.selectors] = ok
        return ok

    def _selectors_match(
        self,
        key: tuple[int, int, int],
        inp: Any,
        device_id: DeviceID,
        cls: DeviceClass | None,
        selectors: tuple[str, ...],
    ) -> bool:
        """``selectorsMatch``: every selector true; a CEL error stops the attempt."""
        for i, expression in enumerate(selectors):
            expr = self.a.compiled(expression)
            if expr.error is not None:
                if cls is not None:
                    raise AllocationError(f"class {cls.name}: selector #{i}: CEL compile error: {expr.error}")
                raise AllocationError(
                    f"claim {kobj(self.claims[key[0]])}: selector #{i}: CEL compile error: {expr.error}"
                )
            try:
                matches = expr.device_matches(inp)
            except CelRuntimeError as e:
                msg = enhance_runtime_error(str(e))
                did = "/".join(device_id)
                if cls is not None:
                    raise AllocationError(
                        f"class {cls.name}: selector #{i} on device {did}: CEL runtime error: {msg}"
                    ) from None
                raise AllocationError(
                    f"claim {kobj(self.claims[key[0]])}: selector #{i} on device {did}: CEL "
                    f"runtime error: {msg}"
                ) from None
            if not matches:
                return False
        return True

    def _allocate_device(
        self, ci: int, ri: int, si: int, cand: _Candidate, must: bool
    ) -> Callable[[], None] | None:
        """``allocateDevice``: availability and constraints; returns the undo function or None."""
        claim = self.claims[ci]
        data = self.request_data[(ci, ri, si)]
        request = data.request
        if request.admin_access:
            if self._allocating_for_claim(cand.id, ci):
                return None
        elif self._in_use(cand.id):
            return None
        off = cand.device.needs_off_feature
        if off == "consumesCounters" and not self.a.features.partitionable_devices:
            return None
        if data.parent is None:
            base, sub = request.name, ""
        else:
            base, sub = data.parent.name, request.name
        constraints = self.constraints[ci]
        for i, c in enumerate(constraints):
            if not c.add(base, sub, cand.device, cand.id[0]):
                if must:
                    raise AllocationError(
                        f"claim {kobj(claim)}, request {request.name}: cannot add device "
                        f"{'/'.join(cand.id)} because a claim constraint would not be satisfied"
                    )
                for c2 in constraints[:i]:
                    c2.remove(base, sub)
                return None
        self.allocating.setdefault(cand.id, set()).add(ci)
        results = self.result[ci]
        before = len(results)
        results.append(
            _DeviceResult(
                request.name,
                data.parent.name if data.parent else "",
                cand.id,
                cand.slice,
                cand.device,
                request.admin_access,
            )
        )

        def undo() -> None:
            for c in constraints:
                c.remove(base, sub)
            self.allocating[cand.id].discard(ci)
            del results[before:]

        return undo

    # -- result ------------------------------------------------------------------------------

    def _result(self, ci: int, claim: ResourceClaim) -> ClaimAllocation:
        devices = self.result[ci]
        if all(d.slice.node_name for d in devices):
            # node-local devices only: building the JSON cannot fail, so it waits until needed
            return ClaimAllocation(None, [d.id for d in devices], lambda: self._allocation(ci, claim))
        return ClaimAllocation(self._allocation(ci, claim), [d.id for d in devices])

    def _allocation(self, ci: int, claim: ResourceClaim) -> dict[str, Any]:
        """``status.allocation`` of claim ``ci`` as found by this run."""
        devices = self.result[ci]
        results = []
        for d in devices:
            r: dict[str, Any] = {
                "request": d.request_name(),
                "driver": d.id[0],
                "pool": d.id[1],
                "device": d.id[2],
            }
            if d.admin_access:
                r["adminAccess"] = True
            results.append(r)
        config: list[dict[str, Any]] = []
        class_ranges: dict[str, tuple[int, int]] = {}
        for ri, _ in enumerate(claim.spec.requests):
            data = self.request_data[(ci, ri, 0)]
            if data.parent is not None:
                data = self.request_data[(ci, ri, self.selected.get((ci, ri), 0))]
            cls = data.cls
            if cls is None:
                continue
            rng = class_ranges.get(cls.name)
            if rng is not None:
                for i in range(*rng):
                    config[i]["requests"].append(data.request_name())
                continue
            start = len(config)
            for cc in cls.config:
                config.append(
                    {
                        "source": "FromClass",
                        "requests": [data.request_name()],
                        **{k: v for k, v in cc.items() if k != "requests"},
                    }
                )
            class_ranges[cls.name] = (start, len(config))
        for cc in claim.spec.config:
            reqs = list(cc.get("requests") or [])
            body = {k: v for k, v in cc.items() if k != "requests"}
            if not reqs:
                config.append({"source": "FromClaim", "requests": [], **body})
                continue
            for ri, request in enumerate(claim.spec.requests):
                if request.name in reqs:
                    config.append({"source": "FromClaim", "requests": reqs, **body})
                    continue
                data = self.request_data[(ci, ri, 0)]
                if data.parent is None:
                    continue
                sub = request.first_available[self.selected.get((ci, ri), 0)]
                if f"{request.name}/{sub.name}" in reqs:
                    config.append({"source": "FromClaim", "requests": reqs, **body})
        for c in config:
            if not c["requests"]:
                del c["requests"]
        allocation: dict[str, Any] = {"devices": {"results": results}}
        if config:
            allocation["devices"]["config"] = config
        ns = _node_selector(devices)
        if ns is not None:
            allocation["nodeSelector"] = ns
        return allocation


def _node_selector(devices: list[_DeviceResult]) -> dict[str, Any] | None:
    """``createNodeSelector``: a node-local device pins the claim to its node; node-selector slices
    add their requirements to one term; all-nodes devices add nothing (no selector at all)."""
    fields: list[dict[str, Any]] = []
    exprs: list[dict[str, Any]] = []
    for d in devices:
        s = d.slice
        if s.node_name:
            return {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [s.node_name]}]}
                ]
            }
        raw = s.raw.get("spec", {}).get("nodeSelector")
        if raw:
            terms = raw.get("nodeSelectorTerms") or []
            if len(terms) == 1:
                _add_new(terms[0].get("matchFields") or [], fields)
                _add_new(terms[0].get("matchExpressions") or [], exprs)
            elif len(terms) > 1:
                raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
    if not fields and not exprs:
        return None
    term: dict[str, Any] = {}
    if exprs:
        term["matchExpressions"] = exprs
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def _add_new(source: list[Any], into: list[dict[str, Any]]) -> None:
    for r in source:
        values = set(r.get("values") or [])
        if not any(
            e.get("key") == r.get("key")
            and e.get("operator") == r.get("operator")
            and set(e.get("values") or []) == values
            for e in into
        ):
            into.append(dict(r))
