"""``PrePullPlanner``: start image pulls on nodes with room before the pods that need them land.

The replay's ``--prepull`` loads :class:`PrePullPlanner` (hook protocol in
:mod:`kubesched.sim.planner`); on a real cluster the same planner can run without a kubelet model
and only emit a plan (:meth:`PrePullPlanner.plan`: ``[(node, image)]``) for a pre-pull mechanism
(a DaemonSet, a node agent) to carry out.

Signals (no look-ahead; only what a controller watching the cluster sees):

* **arrivals**: every pod creation (``on_pod_pending``) is an arrival of its *application*, keyed
  by its image set (pods of one application share their images); the arrival rate of the last
  ``window_seconds`` predicts the next ``lookahead_seconds``;
* **pending pods**: pods created and not bound yet need their image somewhere soon.

Every ``tick_seconds`` (and only for applications that had an arrival or a binding since the last
tick, so an idle cluster costs nothing) the planner computes, per hot application (at least
``min_recent`` arrivals in the window, or pending pods)::

    demand = pending pods + ceil(rate * lookahead_seconds)          # pods expected soon
    warm   = nodes with room for one more such pod (the last pod's requests) that hold the
             image or are pulling it
    want   = min(demand, max_warm_nodes) - warm

and, when ``want > 0``, pre-pulls the image on up to ``min(want, max_per_app_per_tick)`` nodes
with room for such a pod, ranked by bytes of the image they already hold (shared CUDA/PyTorch
layers make those pulls short), then by fewest free GPUs (pack instead of fragmenting), then by
name. A node is skipped while it runs or queues any pull (serialized pulls: a pre-pull must not
delay a pod's own pull) or when its image disk would pass ``disk_limit_percent`` after the pull
(below the kubelet's 85 % GC threshold, so pre-pulls never evict cached images). At most
``max_prepulls_per_tick`` pulls start per tick.

Defaults are documented on :class:`PrePullPlanner`; they were chosen with the replay of
``docs/image-acceleration.md``.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubesched.api.pod import Pod

if TYPE_CHECKING:
    from kubesched.framework.node_info import NodeInfo
    from kubesched.sim.planner import PlannerContext

__all__ = ["PrePullPlanner", "AppDemand", "GPU"]

GPU = "nvidia.com/gpu"
AppKey = tuple[str, ...]


@dataclass(slots=True)
class AppDemand:
    """What the planner knows of one application (image set): arrival times (s) in the window,
    the UIDs of its pods not bound yet, and the requests of its latest pod."""

    arrivals: deque[float]
    pending: set[str]
    requests: Mapping[str, int]


def _fits(requests: Mapping[str, int], ni: NodeInfo) -> bool:
    if len(ni.pods) + 1 > ni.allocatable.allowed_pod_number:
        return False
    for name, amount in requests.items():
        if amount > 0 and name != "pods" and ni.requested.get(name) + amount > ni.allocatable.get(name):
            return False
    return True


class PrePullPlanner:
    """Pre-pull planner (see the module docstring).

    Args (all keyword, defaults in brackets): ``window_seconds`` [3600] arrival-rate window;
    ``lookahead_seconds`` [1800] how far ahead demand is predicted; ``min_recent`` [2] arrivals in
    the window for an application to be hot; ``max_warm_nodes`` [8] most nodes kept warm per
    application; ``max_per_app_per_tick`` [2]; ``max_prepulls_per_tick`` [8];
    ``disk_limit_percent`` [75]; ``tick_seconds`` [60]. Raises ValueError for a negative value.
    """

    def __init__(self, *, window_seconds: float = 3600.0, lookahead_seconds: float = 1800.0, min_recent: int = 2,
                 max_warm_nodes: int = 8, max_per_app_per_tick: int = 2, max_prepulls_per_tick: int = 8,
                 disk_limit_percent: float = 75.0, tick_seconds: float = 60.0) -> None:
        for name, value in (("window_seconds", window_seconds), ("lookahead_seconds", lookahead_seconds),
                            ("min_recent", min_recent), ("max_warm_nodes", max_warm_nodes),
                            ("max_per_app_per_tick", max_per_app_per_tick),
                            ("max_prepulls_per_tick", max_prepulls_per_tick),
                            ("disk_limit_percent", disk_limit_percent), ("tick_seconds", tick_seconds)):
            if value < 0:
                raise ValueError(f"{name} must be >= 0, got {value!r}")
        self.window_seconds = window_seconds
        self.lookahead_seconds = lookahead_seconds
        self.min_recent = min_recent
        self.max_warm_nodes = max_warm_nodes
        self.max_per_app_per_tick = max_per_app_per_tick
        self.max_prepulls_per_tick = max_prepulls_per_tick
        self.disk_limit_percent = disk_limit_percent
        self.tick_seconds = tick_seconds
        self.ctx: PlannerContext | None = None
        self.apps: dict[AppKey, AppDemand] = {}
        self._dirty: dict[AppKey, None] = {}
        self._now = 0.0
        #: pulls started by this planner, ``(t, node, image)``
        self.started: list[tuple[float, str, str]] = []

    # ------------------------------------------------------------------ hook protocol

    def attach(self, ctx: PlannerContext) -> None:
        """Remember the replay context (kubelet model, scheduler cache, catalogue)."""
        self.ctx = ctx

    def on_pod_pending(self, pod: Pod, t: float) -> None:
        """A pod arrived: one more arrival of its application, one more pending pod."""
        key = pod.images
        app = self.apps.get(key)
        if app is None:
            app = self.apps[key] = AppDemand(deque(), set(), pod.requests)
        app.arrivals.append(t)
        app.pending.add(pod.uid)
        app.requests = pod.requests
        self._dirty[key] = None
        self._now = t

    def on_pod_bound(self, pod: Pod, node: str, t: float) -> None:
        """A pod was bound: no longer pending."""
        app = self.apps.get(pod.images)
        if app is not None:
            app.pending.discard(pod.uid)
            self._dirty[pod.images] = None
        self._now = t

    def tick(self, t: float) -> None:
        """Start the pulls of :meth:`plan` in the kubelet model (no-op without a context)."""
        self._now = t
        if self.ctx is None or not self._dirty:
            return
        for node, image in self.plan(t):
            if self.ctx.model.prepull(node, image):
                self.started.append((t, node, image))

    # ------------------------------------------------------------------ planning

    def demand(self, app: AppDemand, t: float) -> int:
        """Pods of ``app`` expected soon: pending + ``ceil(rate * lookahead)``; 0 when not hot."""
        horizon = t - self.window_seconds
        while app.arrivals and app.arrivals[0] <= horizon:
            app.arrivals.popleft()
        recent = len(app.arrivals)
        if recent < self.min_recent and not app.pending:
            return 0
        expected = math.ceil(recent * self.lookahead_seconds / self.window_seconds) if self.window_seconds else 0
        return len(app.pending) + expected

    def plan(self, t: float | None = None) -> list[tuple[str, str]]:
        """``[(node, image)]`` pulls to start now (each image a canonical catalogue name), for the
        applications that changed since the last call. Needs :meth:`attach` (a context with the
        kubelet model and the scheduler cache); returns [] without one."""
        now = self._now if t is None else t
        dirty = list(self._dirty)
        self._dirty.clear()
        if self.ctx is None or not dirty:
            return []
        ctx = self.ctx
        model = ctx.model
        infos = [ni for ni in ctx.scheduler.cache.node_infos() if ni.node is not None]
        busy = {ni.name for ni in infos if model.pending_pulls(ni.name)}
        out: list[tuple[str, str]] = []
        chosen: set[str] = set()
        ranked = sorted(((self.demand(self.apps[k], now), k) for k in dirty if k in self.apps), reverse=True)
        for want_total, key in ranked:
            if want_total <= 0 or len(out) >= self.max_prepulls_per_tick:
                continue
            images = [ctx.catalogue.get(ref) for ref in key]
            if any(image is None for image in images):
                continue
            app = self.apps[key]
            target = min(want_total, self.max_warm_nodes)
            warm = 0
            candidates: list[tuple[int, int, str]] = []
            for ni in infos:
                if not _fits(app.requests, ni):
                    continue
                present = 0
                complete = True
                for image in images:
                    assert image is not None
                    have, coming = model.layer_bytes(ni.name, image)
                    present += have
                    if have + coming < sum(layer.size_bytes for layer in image.unique_layers):
                        complete = False
                if complete:
                    warm += 1
                    if warm >= target:
                        break
                    continue
                if ni.name in busy or ni.name in chosen:
                    continue
                store = model.store(ni.name)
                extra = sum(store.disk_bytes(image.size_bytes) for image in images if image is not None)
                if (store.usage_bytes + extra) * 100 > self.disk_limit_percent * store.capacity_bytes:
                    continue
                free_gpu = ni.allocatable.get(GPU) - ni.requested.get(GPU)
                candidates.append((-present, free_gpu, ni.name))
            want = min(target - warm, self.max_per_app_per_tick, self.max_prepulls_per_tick - len(out))
            if want <= 0:
                continue
            candidates.sort()
            for _, _, node in candidates[:want]:
                chosen.add(node)
                for image in images:
                    assert image is not None
                    out.append((node, image.name))
        return out

