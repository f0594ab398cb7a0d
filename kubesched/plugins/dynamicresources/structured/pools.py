"""Resource pools reachable from a node (``structured/internal/stable/pools_stable.go``:
``GatherPools``, ``addSlice``, ``checkSlicesInPool``; ``NodeMatches``).

A pool (driver, pool name) collects the slices of its newest generation that target the node
(``nodeName`` equal to the node's, ``allNodes``, or a ``nodeSelector`` that matches it); it is
*incomplete* when fewer than ``resourceSliceCount`` slices of that generation exist (then nothing
is allocated from it and ``All`` requests fail), *obsolete* and ignored when a newer generation
exists that has no slice for this node, *invalid* when two of its devices share a name.

Slices are visited in name order and pools in the order their first slice is met (upstream visits
its lister's order and a Go map; kubesched fixes the order so the allocator's choice is
deterministic). :class:`SliceIndex` is built once per scheduling cycle so that a node's slices are
found without scanning every slice of the cluster (node-local slices by node name, the others
checked per node); the pools it yields are the ones the per-slice scan yields.

Slices with ``perDeviceNodeSelection`` or ``sharedCounters`` are skipped
(DRAPartitionableDevices is off by default), as upstream's gatherer does with the feature off.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kubesched.api.dra import Device, ResourceSlice
from kubesched.api.dra.cel import DeviceInput, device_input
from kubesched.api.node import Node
from kubesched.api.node_selector import NodeSelector


def node_matches(
    node: Node | None, node_name: str, all_nodes: bool, node_selector: NodeSelector | None
) -> bool:
    """``NodeMatches``: a node name wins, then ``allNodes``, then the selector; none set: False."""
    if node_name:
        return node is not None and node.name == node_name
    if all_nodes:
        return True
    if node_selector is not None:
        return node is not None and node_selector.matches(node.labels, node.name)
    return False


#: one device of a pool in visit order: (``DeviceID``, device, its slice, its index in the slice)
Candidate = tuple[tuple[str, str, str], Device, ResourceSlice, int]


@dataclass(slots=True)
class Pool:
    """``Pool``: ``slices`` are those of the newest generation targeting the node, in visit order
    (empty for an incomplete or invalid pool)."""

    driver: str
    pool: str
    slices: list[ResourceSlice] = field(default_factory=list)
    is_incomplete: bool = False
    is_invalid: bool = False
    invalid_reason: str = ""
    _candidates: tuple[Candidate, ...] | None = None
    #: (driver, pool)
    id: tuple[str, str] = ("", "")

    def __post_init__(self) -> None:
        self.id = (self.driver, self.pool)

    @property
    def pool_id(self) -> str:
        """``PoolID.String()``: ``driver/pool``."""
        return f"{self.driver}/{self.pool}"

    def candidates(self) -> tuple[Candidate, ...]:
        """The pool's devices in visit order (slices in order, devices in slice order), with their
        ``DeviceID`` (computed once per pool)."""
        out = self._candidates
        if out is None:
            driver, name = self.driver, self.pool
            out = self._candidates = tuple(
                ((driver, name, d.name), d, s, i) for s in self.slices for i, d in enumerate(s.devices)
            )
        return out


def device_input_at(s: ResourceSlice, index: int) -> DeviceInput:
    """The CEL input of device ``index`` of a slice, built on first use and kept on the parsed
    slice object (so once per device and slice version)."""
    inputs = s.cel_inputs
    if inputs is None:
        inputs = s.cel_inputs = [None] * len(s.devices)
    inp = inputs[index]
    if inp is None:
        inp = inputs[index] = device_input(s.driver, s.devices[index])
    return inp


def _usable(s: ResourceSlice) -> bool:
    return not s.per_device_node_selection and not s.shared_counters


class SliceIndex:
    """The cycle's slices, indexed: node-local slices by node name, the others (node selector,
    all nodes) in one list, every slice by pool. All lists are in slice-name order (slices of one
    name in the order given)."""

    __slots__ = ("by_node", "shared", "by_pool", "count", "_position", "_pools")

    def __init__(self, slices: Iterable[ResourceSlice]) -> None:
        self.by_node: dict[str, list[ResourceSlice]] = {}
        self.shared: list[ResourceSlice] = []
        self.by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
        ordered = sorted(slices, key=lambda s: s.name)
        self.count = len(ordered)
        self._position = {id(s): i for i, s in enumerate(ordered)}
        #: node name -> (the Node object the pools were gathered for, its pools)
        self._pools: dict[str, tuple[Node | None, list[Pool]]] = {}
        for s in ordered:
            self.by_pool.setdefault((s.driver, s.pool), []).append(s)
            if not _usable(s):
                continue
            if s.node_name:
                self.by_node.setdefault(s.node_name, []).append(s)
            elif s.all_nodes or s.node_selector is not None:
                self.shared.append(s)

    def slices_for(self, node: Node | None) -> list[ResourceSlice]:
        """The slices targeting ``node`` in name order."""
        local = self.by_node.get(node.name, []) if node is not None else []
        shared = [s for s in self.shared if node_matches(node, "", s.all_nodes, s.node_selector)]
        if not shared:
            return local
        if not local:
            return shared
        pos = self._position
        return list(heapq.merge(local, shared, key=lambda s: pos[id(s)]))

    def pools_for(self, node: Node | None) -> list[Pool]:
        """:func:`gather_pools` for ``node``, remembered per node name while the Node object is
        the same one (its labels decide which node-selector slices match). The index lives as long
        as the set of slices is unchanged, so a node's pools are gathered once, not per cycle.
        The pools returned are shared: callers do not change them."""
        name = node.name if node is not None else ""
        hit = self._pools.get(name)
        if hit is not None and hit[0] is node:
            return hit[1]
        pools = gather_pools(self, node)
        self._pools[name] = (node, pools)
        return pools


def _check_slices_in_pool(all_slices: Sequence[ResourceSlice], generation: int) -> tuple[bool, int]:
    """``checkSlicesInPool``: (obsolete, number of slices of ``generation``)."""
    n = 0
    for s in all_slices:
        if s.pool_generation == generation:
            n += 1
        elif s.pool_generation > generation:
            return True, 0
    return False, n


def gather_pools(index: SliceIndex, node: Node | None) -> list[Pool]:
    """``GatherPools`` for ``node``: its pools in first-seen order (see the module docstring)."""
    pools: dict[tuple[str, str], Pool] = {}
    for s in index.slices_for(node):
        key = (s.driver, s.pool)
        pool = pools.get(key)
        if pool is None:
            pools[key] = Pool(s.driver, s.pool, [s])
            continue
        gen = pool.slices[0].pool_generation
        if s.pool_generation < gen:
            continue
        if s.pool_generation > gen:
            pool.slices = [s]
            continue
        pool.slices.append(s)
    out = []
    for key, pool in pools.items():
        first = pool.slices[0]
        if len(pool.slices) != first.resource_slice_count:
            obsolete, n = _check_slices_in_pool(index.by_pool.get(key, ()), first.pool_generation)
            if obsolete:
                continue
            if n != first.resource_slice_count:
                out.append(Pool(pool.driver, pool.pool, [], is_incomplete=True))
                continue
        seen: set[str] = set()
        for s in pool.slices:
            for d in s.devices:
                if d.name in seen:
                    pool.is_invalid = True
                    pool.invalid_reason = f"duplicate device name {d.name}"
                    break
                seen.add(d.name)
            if pool.is_invalid:
                break
        if pool.is_invalid:
            pool.slices = []
        out.append(pool)
    return out
