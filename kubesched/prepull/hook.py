"""The pre-pull planner hook of the replay (:func:`kubesched.modes.replay.run.run_replay`).

A planner decides to start image pulls on nodes before pods land there. In the replay it acts on
the kubelet model through :meth:`~kubesched.embedded.kubelet.model.KubeletModel.prepull`; it sees the
cluster the way a controller would (the embedded cluster's objects, the scheduler's queue and
cache), never the simulator's future (no look-ahead into arrivals).

Life of a planner in one replay run (one config):

1. ``attach(ctx)`` once, before the first pod arrives, with a :class:`PlannerContext`;
2. ``on_pod_pending(pod, t)`` when a pod is created (arrives) and is not bound yet;
3. ``on_pod_bound(pod, node, t)`` when the scheduler's binding reaches the cluster;
4. ``tick(t)`` every ``tick_seconds`` of virtual time (attribute of the planner, e.g.
   :data:`DEFAULT_TICK_SECONDS`) while the replay runs, starting at the replay origin.

``pod`` is the parsed :class:`~kubesched.api.pod.Pod` (``pod.images``, ``pod.requests``,
``pod.labels``, ...). ``t`` is seconds since the replay origin (the same scale as the report).
Callbacks may call ``ctx.model.prepull(node, image)`` (returns False when the image is present or
already being pulled there) and read anything in the context; they must not write to the cluster
or move the clock. A planner object is used for one run: :func:`~kubesched.modes.replay.run.run_replays`
builds a fresh one per config from a factory.

The CLI flag ``kubesched replay --prepull`` instantiates :data:`DEFAULT_PLANNER`
(``kubesched.prepull.planner:PrePullPlanner``) with no arguments, imported lazily.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from kubesched.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from kubesched.api.pod import Pod
    from kubesched.client.client import ClusterClient
    from kubesched.clock import Clock
    from kubesched.framework.node_info import NodeInfo
    from kubesched.images.catalogue import CatalogueImage

__all__ = [
    "PlannerContext",
    "PrePullPlannerHook",
    "PlannerFactory",
    "DEFAULT_PLANNER",
    "DEFAULT_TICK_SECONDS",
    "ImageLookup",
    "NodeImageDisk",
    "NodeImageView",
    "PlannerScheduler",
    "load_planner_factory",
]

#: the planner ``--prepull`` enables (written outside the replay; imported lazily)
DEFAULT_PLANNER = "kubesched.prepull.planner:PrePullPlanner"
#: virtual seconds between two ``tick`` calls for a planner whose ``tick_seconds`` is 0
DEFAULT_TICK_SECONDS = 10.0


class NodeImageDisk(Protocol):
    """A node's image disk as a planner sees it (bytes)."""

    @property
    def usage_bytes(self) -> int: ...

    @property
    def capacity_bytes(self) -> int: ...

    def disk_bytes(self, compressed_bytes: int) -> int: ...

    def has_image(self, name: str) -> bool: ...


class NodeImageView(Protocol):
    """The images of the nodes and the way to start a pre-pull: the kubelet model in the replay
    (:class:`~kubesched.embedded.kubelet.model.KubeletModel`), the API objects on a real cluster
    (:class:`~kubesched.prepull.cluster_view.ClusterImageView`). ``image`` is a catalogue image or
    its name."""

    def prepull(self, node: str, image: str | CatalogueImage, now: float | None = None) -> bool: ...

    def has_image(self, node: str, image: str | CatalogueImage) -> bool: ...

    def pulling(self, node: str, image: str | CatalogueImage) -> bool: ...

    def pending_pulls(self, node: str) -> int: ...

    def layer_bytes(self, node: str, image: str | CatalogueImage) -> tuple[int, int]: ...

    def store(self, node: str) -> NodeImageDisk: ...


class ImageLookup(Protocol):
    """Image facts by reference (any spelling): the image catalogue in the replay
    (:class:`~kubesched.images.catalogue.ImageCatalogue`), the catalogue then the registry lookups'
    cache on a real cluster (:class:`~kubesched.prepull.image_facts.ImageFacts`). Never blocks."""

    def get(self, ref: str) -> CatalogueImage | None: ...


class PlannerScheduler(Protocol):
    """The part of the scheduler a planner reads, from its read surface: the cache's NodeInfos
    (``Scheduler.node_infos``; read-only)."""

    def node_infos(self) -> Iterable[NodeInfo]: ...


@dataclass(frozen=True, slots=True)
class PlannerContext:
    """What a planner may use during a run.

    ``model``: the node images (:class:`NodeImageView`: ``prepull``, ``layer_bytes``,
    ``has_image``, ``pulling``, ``pending_pulls``, ``store(node)``); ``cluster``: the cluster
    (read only: ``list("Node")``, ``list("Pod")``, ``get``); ``scheduler``: the scheduler
    (``node_infos()``); ``clock``: the clock (read ``now()`` only);
    ``catalogue``: the image facts (:class:`ImageLookup`: the image catalogue in the replay, plus
    registry lookups under ``kubesched run --prepull``); ``origin``: clock time of replay second 0, so
    ``t = clock.now() - origin``.
    """

    model: NodeImageView
    cluster: ClusterClient
    scheduler: PlannerScheduler
    clock: Clock
    catalogue: ImageLookup
    origin: float


@runtime_checkable
class PrePullPlannerHook(Protocol):
    """The callbacks a planner implements (see the module docstring). Times ``t`` are seconds
    since the replay origin. ``tick_seconds`` is the tick period (virtual seconds, > 0)."""

    tick_seconds: float

    def attach(self, ctx: PlannerContext) -> None: ...

    def on_pod_pending(self, pod: Pod, t: float) -> None: ...

    def on_pod_bound(self, pod: Pod, node: str, t: float) -> None: ...

    def tick(self, t: float) -> None: ...


#: builds a fresh planner for one run
PlannerFactory = Callable[[], PrePullPlannerHook]


def load_planner_factory(spec: str = DEFAULT_PLANNER) -> PlannerFactory:
    """Import ``"module:attribute"`` lazily and return it as a factory (a class or zero-argument
    callable). Raises :class:`~kubesched.errors.ConfigError` (path ``--prepull``) when the module
    or attribute is missing or not callable."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigError("--prepull", f"planner must be given as module:attribute, got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name is not None and module_name.startswith(e.name):
            raise ConfigError(
                "--prepull",
                f"the pre-pull planner {spec} is not available: module {module_name} is not installed",
            ) from None
        raise
    factory: Any = getattr(module, attr, None)
    if factory is None or not callable(factory):
        raise ConfigError(
            "--prepull", f"the pre-pull planner {spec} is not available: {module_name} has no callable {attr}"
        )
    return factory  # type: ignore[no-any-return]
