"""The pre-pull planner hook of the replay (:func:`kubesched.modes.replay.run.run_replay`).

A planner decides to start image pulls on nodes before pods land there. In the replay it acts on
the kubelet model through :meth:`~kubesched.kubelet.model.KubeletModel.prepull`; it sees the
cluster the way a controller would (the embedded cluster's objects, the scheduler's queue and
cache), never the simulator's future (no look-ahead into arrivals).

Life of a planner in one replay run (one config):

1. ``attach(ctx)`` once, before the first pod arrives, with a :class:`PlannerContext`;
2. ``on_pod_pending(pod, t)`` when a pod is created (arrives) and is not bound yet;
3. ``on_pod_bound(pod, node, t)`` when the scheduler's binding reaches the cluster;
4. ``tick(t)`` every ``tick_seconds`` of virtual time (attribute of the planner, default
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
    from kubesched.api.pod import Pod
    from kubesched.clock import VirtualClock
    from kubesched.cluster.memory import MemoryCluster
    from kubesched.images.catalogue import ImageCatalogue
    from kubesched.kubelet.model import KubeletModel
    from kubesched.scheduler.core import Scheduler

__all__ = ["PlannerContext", "PrePullPlannerHook", "PlannerFactory", "DEFAULT_PLANNER", "DEFAULT_TICK_SECONDS",
           "load_planner_factory"]

#: the planner ``--prepull`` enables (written outside the replay; imported lazily)
DEFAULT_PLANNER = "kubesched.prepull.planner:PrePullPlanner"
#: virtual seconds between two ``tick`` calls when the planner has no ``tick_seconds`` attribute
DEFAULT_TICK_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class PlannerContext:
    """What a planner may use during a run.

    ``model``: the kubelet image model (``prepull``, ``layer_bytes``, ``has_image``,
    ``pending_pulls``, ``bandwidth_bps``, ``store(node)``); ``cluster``: the embedded cluster
    (read only: ``list("Node")``, ``list("Pod")``, ``get``); ``scheduler``: the scheduler
    (``queue.pending_pods()``, ``cache``); ``clock``: the virtual clock (read ``now()`` only);
    ``catalogue``: the image catalogue; ``origin``: clock time of replay second 0, so
    ``t = clock.now() - origin``.
    """

    model: KubeletModel
    cluster: MemoryCluster
    scheduler: Scheduler
    clock: VirtualClock
    catalogue: ImageCatalogue
    origin: float


@runtime_checkable
class PrePullPlannerHook(Protocol):
    """The callbacks a planner implements (see the module docstring). Times ``t`` are seconds
    since the replay origin. An optional ``tick_seconds: float`` attribute sets the tick period."""

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
            raise ConfigError("--prepull", f"the pre-pull planner {spec} is not available: "
                                           f"module {module_name} is not installed") from None
        raise
    factory: Any = getattr(module, attr, None)
    if factory is None or not callable(factory):
        raise ConfigError("--prepull", f"the pre-pull planner {spec} is not available: "
                                       f"{module_name} has no callable {attr}")
    return factory  # type: ignore[no-any-return]
