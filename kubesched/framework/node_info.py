"""``PodInfo`` and ``NodeInfo`` (``pkg/scheduler/framework/types.go``).

``NodeInfo`` aggregates what is scheduled on a node: pods (including assumed ones), the
requested and non-zero-requested resources (millicores / bytes / counts), used host ports,
image states and PVC reference counts. ``generation`` comes from a process-wide counter
bumped on every mutation (the cache uses it for incremental snapshots).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from kubesched.api.node import Node
from kubesched.api.pod import ContainerPort, Pod
from kubesched.api.resources import CPU, MEMORY, Resource
from kubesched.framework.affinity_term import (
    AffinityTerm,
    WeightedAffinityTerm,
    affinity_terms,
    weighted_affinity_terms,
)

_generation = itertools.count(1)


def next_generation() -> int:
    """The next value of the global generation counter."""
    return next(_generation)


class PodInfo:
    """A pod plus its pre-processed affinity terms (built once per pod object)."""

    __slots__ = (
        "pod",
        "required_affinity_terms",
        "required_anti_affinity_terms",
        "preferred_affinity_terms",
        "preferred_anti_affinity_terms",
    )

    def __init__(self, pod: Pod) -> None:
        self.pod = pod
        if pod.has_affinity:
            self.required_affinity_terms: tuple[AffinityTerm, ...] = affinity_terms(
                pod, pod.pod_affinity_required
            )
            self.required_anti_affinity_terms: tuple[AffinityTerm, ...] = affinity_terms(
                pod, pod.pod_anti_affinity_required
            )
            self.preferred_affinity_terms: tuple[WeightedAffinityTerm, ...] = weighted_affinity_terms(
                pod, pod.pod_affinity_preferred
            )
            self.preferred_anti_affinity_terms: tuple[WeightedAffinityTerm, ...] = weighted_affinity_terms(
                pod, pod.pod_anti_affinity_preferred
            )
        else:
            self.required_affinity_terms = ()
            self.required_anti_affinity_terms = ()
            self.preferred_affinity_terms = ()
            self.preferred_anti_affinity_terms = ()

    def __repr__(self) -> str:
        return f"PodInfo({self.pod.key})"


@dataclass(slots=True)
class ImageStateSummary:
    """An image on a node: ``size`` in bytes and ``num_nodes`` holding it cluster-wide."""

    size: int
    num_nodes: int


class HostPortInfo:
    """Used host ports: ``ip -> {(protocol, port)}`` with upstream's ``0.0.0.0`` wildcard rules."""

    __slots__ = ("ports",)

    def __init__(self) -> None:
        self.ports: dict[str, set[tuple[str, int]]] = {}

    def add(self, p: ContainerPort) -> None:
        """Record a host port."""
        self.ports.setdefault(p.host_ip, set()).add((p.protocol, p.host_port))

    def remove(self, p: ContainerPort) -> None:
        """Forget a host port."""
        s = self.ports.get(p.host_ip)
        if s is not None:
            s.discard((p.protocol, p.host_port))
            if not s:
                del self.ports[p.host_ip]

    def check_conflict(self, p: ContainerPort) -> bool:
        """True if ``p`` conflicts: ``0.0.0.0`` conflicts with the same (proto, port) on any IP;
        a specific IP conflicts with the same (proto, port) on that IP or on ``0.0.0.0``."""
        pp = (p.protocol, p.host_port)
        if p.host_ip == "0.0.0.0":
            return any(pp in s for s in self.ports.values())
        return pp in self.ports.get(p.host_ip, ()) or pp in self.ports.get("0.0.0.0", ())

    def __len__(self) -> int:
        return sum(len(s) for s in self.ports.values())

    def clone(self) -> HostPortInfo:
        """A deep copy."""
        h = HostPortInfo()
        h.ports = {ip: set(s) for ip, s in self.ports.items()}
        return h


class NodeInfo:
    """Node-level aggregated information (see module docstring). ``node`` may be ``None``
    for a "ghost" that still has pods after its Node was deleted."""

    __slots__ = (
        "node",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "used_ports",
        "requested",
        "non_zero_requested",
        "allocatable",
        "image_states",
        "pvc_ref_counts",
        "generation",
        "_pod_index",
    )

    def __init__(self, node: Node | None = None) -> None:
        self.node: Node | None = None
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.used_ports = HostPortInfo()
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.allocatable = Resource()
        self.image_states: dict[str, ImageStateSummary] = {}
        self.pvc_ref_counts: dict[str, int] = {}
        self.generation = next_generation()
        #: pod UID -> position in ``pods``; ``None`` until needed on a snapshot copy (built lazily)
        self._pod_index: dict[str, int] | None = {}
        if node is not None:
            self.set_node(node)

    @property
    def name(self) -> str:
        """The node's name ("" for a ghost)."""
        return self.node.name if self.node is not None else ""

    def set_node(self, node: Node) -> None:
        """Set (or replace) the Node object; refreshes allocatable."""
        self.node = node
        self.allocatable = Resource.from_list(node.allocatable)
        self.generation = next_generation()

    def remove_node(self) -> None:
        """Clear the Node object (the NodeInfo may linger as a ghost while pods remain)."""
        self.node = None
        self.generation = next_generation()

    def add_pod(self, pod: Pod) -> None:
        """Add a pod (builds its PodInfo)."""
        self.add_pod_info(PodInfo(pod))

    def add_pod_info(self, pi: PodInfo) -> None:
        """``NodeInfo.AddPodInfo``: append and account the pod's requests, ports and PVCs."""
        pod = pi.pod
        self._index()[pod.uid] = len(self.pods)
        self.pods.append(pi)
        if pod.has_affinity:
            self.pods_with_affinity.append(pi)
            if pod.pod_anti_affinity_required:
                self.pods_with_required_anti_affinity.append(pi)
        self._update(pod, 1)
        self.generation = next_generation()

    def _update(self, pod: Pod, sign: int) -> None:
        self.requested.add_list(pod.requests, sign)
        nz = pod.non_zero_requests
        self.non_zero_requested.milli_cpu += sign * nz.get(CPU, 0)
        self.non_zero_requested.memory += sign * nz.get(MEMORY, 0)
        for p in pod.host_ports:
            if sign > 0:
                self.used_ports.add(p)
            else:
                self.used_ports.remove(p)
        for claim in pod.pvc_names:
            key = f"{pod.namespace}/{claim}"
            n = self.pvc_ref_counts.get(key, 0) + sign
            if n > 0:
                self.pvc_ref_counts[key] = n
            else:
                self.pvc_ref_counts.pop(key, None)

    def remove_pod(self, pod: Pod) -> None:
        """``NodeInfo.RemovePod``: remove by UID and reverse its accounting.

        Raises ``KeyError`` (``no corresponding pod <name> in pods of node <node>``) if absent.
        """
        index = self._index()
        idx = index.pop(pod.uid, None)
        if idx is None:
            raise KeyError(f"no corresponding pod {pod.name} in pods of node {self.name}")
        pi = self.pods[idx]
        last = self.pods.pop()
        if last is not pi:
            self.pods[idx] = last
            index[last.pod.uid] = idx
        if pi.pod.has_affinity:
            self.pods_with_affinity = [p for p in self.pods_with_affinity if p.pod.uid != pod.uid]
            self.pods_with_required_anti_affinity = [
                p for p in self.pods_with_required_anti_affinity if p.pod.uid != pod.uid
            ]
        self._update(pi.pod, -1)
        self.generation = next_generation()

    def replace_pod(self, old: Pod, new: Pod) -> bool:
        """:meth:`remove_pod` of ``old`` then :meth:`add_pod` of ``new`` (the cache's
        ``updatePod``), done in place when both pods account for the same amounts: the same
        requests and non-zero requests, no host ports, no PVCs and no (anti-)affinity. The pods
        list ends up in the same order as the remove (the last pod moves into ``old``'s place)
        and the add (``new`` appended) leave it, and two generations are taken, as those two
        calls take. Returns False (nothing changed) when the pods differ in what they account or
        ``old`` is not on this node; the caller then removes and adds."""
        if (
            old.has_affinity
            or new.has_affinity
            or old.host_ports
            or new.host_ports
            or old.pvc_names
            or new.pvc_names
            or (old.requests is not new.requests and old.requests != new.requests)
            or (
                old.non_zero_requests is not new.non_zero_requests
                and old.non_zero_requests != new.non_zero_requests
            )
        ):
            return False
        index = self._index()
        idx = index.get(old.uid)
        if idx is None:
            return False
        pods = self.pods
        del index[old.uid]
        last = len(pods) - 1
        if idx != last:
            moved = pods[last]
            pods[idx] = moved
            index[moved.pod.uid] = idx
        pods[last] = PodInfo(new)
        index[new.uid] = last
        next_generation()
        self.generation = next_generation()
        return True

    def has_pod(self, uid: str) -> bool:
        """True if a pod with ``uid`` is on this node."""
        return uid in self._index()

    def _index(self) -> dict[str, int]:
        index = self._pod_index
        if index is None:
            index = self._pod_index = {pi.pod.uid: i for i, pi in enumerate(self.pods)}
        return index

    def snapshot(self) -> NodeInfo:
        """A copy safe to hand to a scheduling cycle (pods list, ports, requested resources and PVC
        counts copied; PodInfo objects and image states shared, as upstream; ``allocatable`` shared
        too: it is never changed in place, ``set_node`` replaces it). The copy's UID index is rebuilt only
        if the copy itself is asked about or changed by UID (snapshots rarely are), so a snapshot
        costs one list copy for a node with many pods."""
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.used_ports = self.used_ports.clone()
        c.requested = self.requested.clone()
        c.non_zero_requested = self.non_zero_requested.clone()
        c.allocatable = self.allocatable
        c.image_states = self.image_states
        c.pvc_ref_counts = dict(self.pvc_ref_counts)
        c.generation = self.generation
        c._pod_index = None
        return c

    clone = snapshot

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"
