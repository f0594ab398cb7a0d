"""Builders for tests and for third-party plugin authors: concise Pod/Node manifests,
NodeInfos and a minimal :class:`FakeHandle` around a snapshot.

Example::

    n = make_node("n1", cpu="4", memory="8Gi", labels={"zone": "a"})
    p = make_pod("web", cpu="500m", memory="1Gi")
    ni = node_info(n, [make_pod("old", cpu="1", node_name="n1")])
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.config.feature_gates import resolve as resolve_gates
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import FilterPlugin
from kubesched.framework.node_info import NodeInfo, PodInfo
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Status


def pod_manifest(
    name: str,
    namespace: str = "default",
    *,
    cpu: str | None = None,
    memory: str | None = None,
    requests: Mapping[str, Any] | None = None,
    limits: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    node_name: str | None = None,
    priority: int | None = None,
    image: str = "registry.k8s.io/pause:3.10.1",
    images: Sequence[str] | None = None,
    spec: Mapping[str, Any] | None = None,
    status: Mapping[str, Any] | None = None,
    uid: str | None = None,
    scheduler_name: str | None = None,
) -> dict[str, Any]:
    """A Pod manifest with one container per image (the first gets the requests/limits);
    ``spec``/``status`` entries are merged over the generated ones."""
    req: dict[str, Any] = dict(requests or {})
    if cpu is not None:
        req["cpu"] = cpu
    if memory is not None:
        req["memory"] = memory
    res: dict[str, Any] = {}
    if req:
        res["requests"] = req
    if limits:
        res["limits"] = dict(limits)
    containers: list[dict[str, Any]] = [
        {"name": f"c{i}", "image": im} for i, im in enumerate(images or [image])
    ]
    if res:
        containers[0]["resources"] = res
    s: dict[str, Any] = {"containers": containers}
    if node_name:
        s["nodeName"] = node_name
    if priority is not None:
        s["priority"] = priority
    if scheduler_name:
        s["schedulerName"] = scheduler_name
    s.update(spec or {})
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": uid or f"uid-{namespace}-{name}"}
    if labels:
        meta["labels"] = dict(labels)
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": s}
    if status:
        obj["status"] = dict(status)
    return obj


def make_pod(name: str, namespace: str = "default", **kw: Any) -> Pod:
    """Parsed :class:`Pod` built by :func:`pod_manifest`."""
    return Pod.from_manifest(pod_manifest(name, namespace, **kw))


def node_manifest(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "32Gi",
    pods: int = 110,
    allocatable: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, Any]] | None = None,
    unschedulable: bool = False,
    images: Sequence[tuple[Sequence[str], int]] | None = None,
) -> dict[str, Any]:
    """A Node manifest; ``images`` is ``[(names, size_bytes), ...]``; the hostname label is set."""
    alloc: dict[str, Any] = {"cpu": cpu, "memory": memory, "pods": str(pods)}
    alloc.update(allocatable or {})
    lab = {"kubernetes.io/hostname": name}
    lab.update(labels or {})
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
    status: dict[str, Any] = {"allocatable": alloc, "capacity": dict(alloc)}
    if images:
        status["images"] = [{"names": list(n), "sizeBytes": s} for n, s in images]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": lab, "uid": f"uid-node-{name}"},
        "spec": spec,
        "status": status,
    }


def make_node(name: str, **kw: Any) -> Node:
    """Parsed :class:`Node` built by :func:`node_manifest`."""
    return Node.from_manifest(node_manifest(name, **kw))


def node_info(node: Node, pods: Sequence[Pod] = ()) -> NodeInfo:
    """A NodeInfo with ``pods`` added (image states are not filled; see :func:`snapshot_of`)."""
    ni = NodeInfo(node)
    for p in pods:
        ni.add_pod(p)
    return ni


def snapshot_of(node_infos: Sequence[NodeInfo]) -> Snapshot:
    """A Snapshot of ``node_infos`` (in the given order) with image states computed as the cache does:
    every name in ``status.images[*].names`` maps to ``ImageStateSummary(size, num_nodes)``."""
    from kubesched.framework.node_info import ImageStateSummary

    holders: dict[str, set[str]] = {}
    sizes: dict[str, int] = {}
    for ni in node_infos:
        if ni.node is None:
            continue
        for im in ni.node.images:
            for nm in im.names:
                holders.setdefault(nm, set()).add(ni.name)
                sizes[nm] = im.size_bytes
    for ni in node_infos:
        if ni.node is None:
            continue
        ni.image_states = {
            nm: ImageStateSummary(sizes[nm], len(holders[nm])) for im in ni.node.images for nm in im.names
        }
    return Snapshot(list(node_infos))


class _NoObjects:
    def list(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        return []

    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        return None

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        return {}


class FakeHandle:
    """A minimal plugin handle over a fixed snapshot (no nominated pods, no waiting pods, no
    extenders, no metrics). ``filter_plugins`` are what ``run_filter_plugins_with_nominated_pods``
    runs, in order (none: every node passes); the PreFilter extensions are no-ops."""

    def __init__(
        self,
        snapshot: Snapshot | None = None,
        objects: Any = None,
        seed: int = 0,
        filter_plugins: Sequence[FilterPlugin] = (),
    ) -> None:
        self._snapshot = snapshot or Snapshot([])
        self.filter_plugins = list(filter_plugins)
        self.extenders: list[Any] = []
        self.metrics: Any = None
        self.profile_name = "default-scheduler"
        self.parallelism = 16
        self.rng = random.Random(seed)
        self.objects = objects or _NoObjects()
        self.client = None
        self.event_recorder = None
        self.nominator = None
        self.feature_gates = resolve_gates(None)
        self.clock = None

    def snapshot(self) -> Snapshot:
        return self._snapshot

    def cached_node_info(self, node_name: str) -> NodeInfo | None:
        return self._snapshot.get(node_name)

    def get_waiting_pod(self, uid: str) -> None:
        return None

    def reject_waiting_pod(self, uid: str) -> bool:
        return False

    def iterate_over_waiting_pods(self) -> Iterator[Any]:
        return iter(())

    def activate(self, pods: Mapping[str, Pod]) -> None:
        pass

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        for pl in self.filter_plugins:
            s = pl.filter(state, pod, node_info)
            if s is not None and not s.is_success():
                return s
        return None

    def has_pre_filter_extensions(self, state: CycleState) -> bool:
        return False

    def filter_runner(self, state: CycleState) -> Callable[[CycleState, Pod, NodeInfo], Status | None]:
        return self.run_filter_plugins_with_nominated_pods

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return None

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return None


__all__ = [
    "FakeHandle",
    "PodInfo",
    "make_node",
    "make_pod",
    "node_info",
    "node_manifest",
    "pod_manifest",
    "snapshot_of",
]
