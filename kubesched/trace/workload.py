"""The workload a replay runs: nodes, and pods with an arrival time and a run time.

Times are seconds relative to the replay origin (second 0 = ``Workload.origin`` in the source
trace's own time scale, kept only for the report). A pod arrives (is created) at ``arrival``, and
once its container is running it runs for ``duration`` seconds, then finishes and is deleted
(``None``: it runs until the replay ends). The measurement interval for time-averaged metrics
(packing) is ``[0, horizon]``: the same for every config, whatever their latencies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["WorkloadPod", "Workload"]


@dataclass(frozen=True, slots=True)
class WorkloadPod:
    """One pod of the workload.

    ``manifest``: the Pod manifest created at ``arrival`` (namespace and name set; its container
    images must be in the catalogue); ``arrival`` (s, >= 0); ``duration`` (s, >= 0, or None = until
    the end of the replay); ``source``: a free label (e.g. the trace row's phase) for reports.
    """

    name: str
    namespace: str
    arrival: float
    duration: float | None
    manifest: Mapping[str, Any]
    source: str = ""

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class Workload:
    """Nodes (Node manifests, loaded before the first arrival) and pods sorted by (arrival, name).

    ``origin``: the trace time of replay second 0 (informational); ``horizon``: end of the
    measurement interval (s, >= 0); ``description``: where it came from, for the report;
    ``notes``: anything the loader wants the user to know (rows skipped, window used);
    ``kubelet``: :class:`~kubesched.embedded.kubelet.config.KubeletImageConfig` overrides that come with
    the trace (camelCase keys, e.g. ``nodeBandwidthBytesPerSecond``); ``images``: node name -> the
    images (catalogue references) on its disk at second 0 (a recorded cluster's image caches;
    empty: every node starts with none); ``status_phases``: node name -> seconds after second 0
    (mod the status period) at which its kubelet writes ``status.images`` (a recorded cluster's
    phases; empty: every node on a grid from second 0); ``running``: pods already running at
    second 0 (manifests with ``spec.nodeName``; ``arrival`` 0, ``duration`` = the run time left,
    None = until the end), which hold room and images but are no arrivals; ``objects``: other manifests
    loaded with the nodes (e.g. ResourceClaimTemplates, PriorityClasses, and workloads -
    Deployments, ReplicaSets, Jobs, DaemonSets, StatefulSets - whose pods the replay's controllers
    create); ``node_arrivals``: node name -> seconds after second 0 at which the node joins (nodes
    not listed are there from the start); ``gpu``: how pods get GPUs,
    ``device-plugin`` (``nvidia.com/gpu`` requests) or ``dra`` (claims on the fake DRA driver's
    devices, which the replay then runs).
    """

    nodes: Sequence[Mapping[str, Any]]
    pods: Sequence[WorkloadPod]
    horizon: float
    origin: float = 0.0
    description: str = ""
    notes: tuple[str, ...] = field(default=())
    kubelet: Mapping[str, Any] = field(default_factory=dict)
    images: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    status_phases: Mapping[str, float] = field(default_factory=dict)
    running: Sequence[WorkloadPod] = ()
    objects: Sequence[Mapping[str, Any]] = ()
    gpu: str = "device-plugin"
    node_arrivals: Mapping[str, float] = field(default_factory=dict)

    def with_arrival_scale(self, factor: float) -> Workload:
        """A copy whose arrival times (and horizon) are multiplied by ``factor`` (> 0); durations are
        unchanged, so ``factor < 1`` packs the same pods into less time (a heavier load). Raises
        ValueError for ``factor <= 0``. Per-node status phases are dropped (they are times of the
        unscaled trace)."""
        if not factor > 0:
            raise ValueError(f"the arrival scale must be > 0, got {factor!r}")
        if factor == 1:
            return self
        pods = [
            WorkloadPod(p.name, p.namespace, p.arrival * factor, p.duration, p.manifest, p.source)
            for p in self.pods
        ]
        return Workload(
            self.nodes,
            pods,
            horizon=self.horizon * factor,
            origin=self.origin,
            description=self.description,
            notes=(*self.notes, f"arrival times scaled by {factor:g}"),
            kubelet=self.kubelet,
            images=self.images,
            running=self.running,
            objects=self.objects,
            gpu=self.gpu,
            node_arrivals={n: t * factor for n, t in self.node_arrivals.items()},
        )

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for pod in self.pods:
            if pod.key in seen:
                raise ValueError(f"duplicate pod {pod.key} in the workload")
            seen.add(pod.key)
