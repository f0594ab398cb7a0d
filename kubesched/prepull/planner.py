"""``PrePullPlanner``: start image pulls on nodes with room before the pods that need them land.

The replay's ``--prepull`` loads :class:`PrePullPlanner` (hook protocol in
:mod:`kubesched.prepull.hook`); on a real cluster the same planner can run without a kubelet model
and only emit a plan (:meth:`PrePullPlanner.plan`: ``[(node, image)]``) for a pre-pull mechanism
(a node agent pulling through the CRI, e.g. OpenKruise's ``ImagePullJob``) to carry out.

Signals (no look-ahead; only what a controller watching the cluster sees):

* **arrivals**: every pod creation (``on_pod_pending``) is an arrival of its *application*, keyed
  by its image set (pods of one application share their images); the arrival count of the last
  ``window_seconds`` predicts the next ``lookahead_seconds``;
* **departures**: a bound pod of the application no longer on its node (seen in the scheduler
  cache at a tick) gave its room back on a node that holds the images;
* **pending pods**: pods created and not bound yet need their image somewhere soon;
* **holders**: nodes listing the image in ``status.images``, nodes a pod of the image was bound
  to (``on_pod_bound``) and nodes the planner pre-pulled it on; each is checked against the node's images (present, or a pull queued or
  running) when used, so images removed by image GC drop out.

Every ``tick_seconds`` (and only for applications that had an arrival or a binding since the last
tick, so an idle cluster costs nothing) the planner computes, per hot application (at least
``min_recent`` arrivals in the window, or pending pods)::

    growth   = max(0, arrivals - departures in the window)       # the application's net growth
    demand   = pending pods + growth * lookahead_seconds / window_seconds   # pods expected on new room
    room(n)  = how many more such pods (the last pod's requests) node n takes, 0 when its
               required node affinity / nodeSelector rejects n
    warm     = sum of room(n) over holder nodes of every image of the application
    want     = demand - warm  pods expected beyond the warm room (they would pull)
    miss(n)  = bytes of the application's distinct layers node n lacks (what a pre-pull there costs)
    cheap    = the smallest miss(n) over the candidates (the least any of those pods could pull)

An application's turnover (pods ending and others arriving, as a steady service or a queue of
jobs has) needs no new holders: the room its ending pods give back is on nodes that hold its
images, and image-aware scoring sends the next pods there. Only growth beyond that room needs
nodes that do not hold the images yet, so only growth is pre-pulled for. (``forecast="arrivals"``
counts every arrival, as the first version did: it pre-pulled for turnover too, and on the loaded
replays of docs/image-acceleration.md those pre-pulls cost more bytes than the pod pulls they spared.)

And, while ``want > 0``, it pre-pulls the application's images on nodes with ``room > 0`` that hold
none of them yet (at most ``max_per_app_per_tick`` nodes per application, ``max_prepulls_per_tick``
per tick, ``max_warm_nodes`` warm nodes with room per application); with ``net_bytes`` (off by
default) only on a node where ``miss(n) <= min(want, room(n)) * cheap``: the pods it is expected to
spare a pull (at most ``want``, at most its room), each sparing at least ``cheap`` bytes, cover
its own bytes. So an application expected to bring less than one pod beyond its warm room gets no
pre-pull (the bytes would be spent on a pod that may not come, or that a holder takes anyway),
and a node sharing few layers is pre-pulled only for several pods. Candidates are the nodes
holding images that share layers with the application's, and the first ``max_per_app_per_tick``
usable nodes in this order: most free GPUs (they absorb the most of the coming GPU pods), the
smaller node (allocatable CPU) first among those (a pre-pull made for a few pods draws them to its
node, and the few large nodes are the only ones that pods asking for a whole large node fit; the
scheduler's own scoring keeps them for such pods too), then the most free CPU, then by name. They
are taken cheapest first, by the bytes pulled per pod the node can take::

    cost(n) = miss(n) / min(room(n), max(1, ceil(want)))

then the most room, then by name. A node sharing most of the layers (a fine-tuning image on a
holder of its base) costs a fraction of a fresh node; a node sharing only a small base layer costs
about what a fresh node does, so its room decides: the first version put every node sharing any
layer before every fresh node, and pre-pulled multi-GB images onto busy holders of other
applications for the sake of a few MB, where they took those applications' room.

A node is skipped while it runs or queues any pull (a pre-pull never competes with a pod's pull
for the node's CPU and disk, and at most one pre-pull runs per node) or when its image disk would
pass ``disk_limit_percent`` after the pull (below the kubelet's 85 % GC threshold, so pre-pulls
never evict cached images).

Cost: one pass over the nodes per tick with work (a name index and two preference orders), then
per application O(holders + nodes sharing layers + the nodes walked until enough candidates are
found) — not O(applications x nodes x layers).

Defaults are documented on :class:`PrePullPlanner`; they were chosen with the replays of
``docs/image-acceleration.md``.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kubesched.api.pod import Pod
from kubesched.api.required_node_affinity import RequiredNodeAffinity, get_required_node_affinity

if TYPE_CHECKING:
    from kubesched.framework.node_info import NodeInfo
    from kubesched.images.catalogue import CatalogueImage
    from kubesched.prepull.hook import PlannerContext

__all__ = ["PrePullPlanner", "AppDemand", "GPU", "room_for"]

GPU = "nvidia.com/gpu"
AppKey = tuple[str, ...]
#: most nodes examined per application when looking for pre-pull candidates without shared layers
_WALK_LIMIT = 400


@dataclass(slots=True)
class AppDemand:
    """What the planner knows of one application (image set): arrival times (s) in the window,
    the UIDs of its pods not bound yet, the requests of its latest pod and that pod's required
    node affinity."""

    arrivals: deque[float]
    pending: set[str]
    requests: Mapping[str, int]
    affinity: RequiredNodeAffinity | None = field(default=None)
    #: its bound pods still on their node: UID -> node name
    bound: dict[str, str] = field(default_factory=dict)
    #: times (s) in the window at which the planner saw one of its bound pods gone from its node
    departures: deque[float] = field(default_factory=deque)


def image_bytes(image: CatalogueImage) -> int:
    """Compressed bytes of ``image``'s distinct layers (what a pull on a node without any of them fetches)."""
    return sum(layer.size_bytes for layer in image.unique_layers)


def room_for(requests: Mapping[str, int], ni: NodeInfo, affinity: RequiredNodeAffinity | None = None) -> int:
    """How many more pods with ``requests`` fit on ``ni`` by pod count and every requested resource
    (the NodeResourcesFit check; millicores, bytes, counts), 0 when ``affinity`` rejects the node."""
    node = ni.node
    if node is None or (affinity is not None and not affinity.matches(node)):
        return 0
    room = ni.allocatable.allowed_pod_number - len(ni.pods)
    for name, amount in requests.items():
        if amount > 0 and name != "pods":
            room = min(room, (ni.allocatable.get(name) - ni.requested.get(name)) // amount)
        if room <= 0:
            return 0
    return max(room, 0)


class PrePullPlanner:
    """Pre-pull planner (see the module docstring).

    Args (all keyword, defaults in brackets): ``window_seconds`` [900] arrival-count window;
    ``lookahead_seconds`` [300] how far ahead demand is predicted (about a tick plus the pull of
    a multi-GB image); ``min_recent`` [2] arrivals in the window for an application to be hot;
    ``max_warm_nodes`` [4] most nodes pre-pulled/kept warm per application;
    ``max_per_app_per_tick`` [4]; ``max_prepulls_per_tick`` [16]; ``disk_limit_percent`` [75];
    ``tick_seconds`` [15]; ``net_bytes`` [False] pre-pull only where the pulls it is expected to
    spare cover its bytes (module docstring; False: wherever demand exceeds the warm room);
    ``forecast`` ["growth"] demand from arrivals minus departures in the window, or "arrivals"
    from arrivals alone (module docstring). Raises ValueError for a negative value or another
    ``forecast``.
    """

    def __init__(
        self,
        *,
        window_seconds: float = 900.0,
        lookahead_seconds: float = 300.0,
        min_recent: int = 2,
        max_warm_nodes: int = 4,
        max_per_app_per_tick: int = 4,
        max_prepulls_per_tick: int = 16,
        disk_limit_percent: float = 75.0,
        tick_seconds: float = 15.0,
        net_bytes: bool = False,
        forecast: str = "growth",
    ) -> None:
        if forecast not in ("growth", "arrivals"):
            raise ValueError(f"forecast must be 'growth' or 'arrivals', got {forecast!r}")
        for name, value in (
            ("window_seconds", window_seconds),
            ("lookahead_seconds", lookahead_seconds),
            ("min_recent", min_recent),
            ("max_warm_nodes", max_warm_nodes),
            ("max_per_app_per_tick", max_per_app_per_tick),
            ("max_prepulls_per_tick", max_prepulls_per_tick),
            ("disk_limit_percent", disk_limit_percent),
            ("tick_seconds", tick_seconds),
        ):
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
        self.net_bytes = net_bytes
        self.forecast = forecast
        self.ctx: PlannerContext | None = None
        self.apps: dict[AppKey, AppDemand] = {}
        #: canonical image name -> nodes it was bound to or pre-pulled on (checked when used)
        self.holders: dict[str, dict[str, None]] = {}
        self._dirty: dict[AppKey, None] = {}
        #: node name -> the Node object whose status images were last read; image ref -> canonical name
        self._status_seen: dict[str, object] = {}
        self._canonical: dict[str, str | None] = {}
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
        affinity = get_required_node_affinity(pod)
        app.affinity = affinity if affinity.label_selector or affinity.node_selector else None
        self._dirty[key] = None
        self._now = t

    def on_pod_bound(self, pod: Pod, node: str, t: float) -> None:
        """A pod was bound: no longer pending; its node now holds (or pulls) its images."""
        app = self.apps.get(pod.images)
        if app is not None:
            app.pending.discard(pod.uid)
            app.bound[pod.uid] = node
            self._dirty[pod.images] = None
        for image in self._images(pod.images):
            self.holders.setdefault(image.name, {})[node] = None
        self._now = t

    def tick(self, t: float) -> None:
        """Start the pulls of :meth:`plan` in the kubelet model (no-op without a context)."""
        self._now = t
        if self.ctx is None or not self._dirty:
            return
        for node, image in self.plan(t):
            if self.ctx.model.prepull(node, image):
                self.started.append((t, node, image))
                self.holders.setdefault(image, {})[node] = None

    # ------------------------------------------------------------------ planning

    def _images(self, key: AppKey) -> list[CatalogueImage]:
        if self.ctx is None:
            return []
        out = []
        for ref in key:
            image = self.ctx.catalogue.get(ref)
            if image is not None:
                out.append(image)
        return out

    def demand(self, app: AppDemand, t: float) -> float:
        """Pods of ``app`` expected soon: pending + ``recent * lookahead / window``; 0 when not hot."""
        horizon = t - self.window_seconds
        while app.arrivals and app.arrivals[0] <= horizon:
            app.arrivals.popleft()
        while app.departures and app.departures[0] <= horizon:
            app.departures.popleft()
        recent = len(app.arrivals)
        if recent < self.min_recent and not app.pending:
            return 0
        rate = max(0, recent - len(app.departures)) if self.forecast == "growth" else recent
        expected = rate * self.lookahead_seconds / self.window_seconds if self.window_seconds else 0.0
        return len(app.pending) + expected

    def _learn_status_images(self, infos: dict[str, NodeInfo]) -> None:
        """Add the images listed in each node's ``status.images`` to the holders (what a controller
        sees of images it did not cause, e.g. baked into the node or pulled before it started)."""
        assert self.ctx is not None
        names = self._canonical
        for name, ni in infos.items():
            node = ni.node
            assert node is not None
            if node is self._status_seen.get(name):
                continue
            self._status_seen[name] = node
            for entry in node.images:
                for ref in entry.names:
                    canonical = names.get(ref, "")
                    if canonical == "":
                        image = self.ctx.catalogue.get(ref)
                        canonical = names[ref] = image.name if image is not None else None  # type: ignore[assignment]
                    if canonical is not None:
                        self.holders.setdefault(canonical, {})[name] = None
                        break

    def _live_holders(self, image: CatalogueImage) -> dict[str, None]:
        """Holder nodes of ``image`` that still hold it or are pulling it (others are dropped)."""
        assert self.ctx is not None
        model = self.ctx.model
        nodes = self.holders.get(image.name)
        if not nodes:
            return {}
        gone = [n for n in nodes if not (model.has_image(n, image) or model.pulling(n, image))]
        for n in gone:
            del nodes[n]
        return nodes

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
        infos = {ni.name: ni for ni in ctx.scheduler.node_infos() if ni.node is not None}
        if self.forecast == "growth":
            self._see_departures(infos, now)
        ranked = sorted(((self.demand(self.apps[k], now), k) for k in dirty if k in self.apps), reverse=True)
        ranked = [(d, k) for d, k in ranked if d > 0]
        if not ranked:
            return []
        self._learn_status_images(infos)
        # preference order of nodes without shared layers: most free GPUs, then the smaller node
        # (allocatable CPU), then most free CPU, by name
        by_room = sorted(
            infos.values(),
            key=lambda ni: (
                -(ni.allocatable.get(GPU) - ni.requested.get(GPU)),
                ni.allocatable.milli_cpu,
                -(ni.allocatable.milli_cpu - ni.requested.milli_cpu),
                ni.name,
            ),
        )
        out: list[tuple[str, str]] = []
        chosen: set[str] = set()
        for want_total, key in ranked:
            if len(out) >= self.max_prepulls_per_tick:
                break
            images = self._images(key)
            if len(images) != len(key):
                continue
            app = self.apps[key]
            holder_sets = [self._live_holders(image) for image in images]
            warm_nodes = set(holder_sets[0]).intersection(*holder_sets[1:]) if holder_sets else set()
            warm = roomy = 0
            for name in warm_nodes:
                ni = infos.get(name)
                room = room_for(app.requests, ni, app.affinity) if ni is not None else 0
                if room > 0:
                    warm += room
                    roomy += 1
            need = want_total - warm
            slots = min(
                self.max_per_app_per_tick, self.max_prepulls_per_tick - len(out), self.max_warm_nodes - roomy
            )
            if need <= 0 or slots <= 0:
                continue
            size = sum(image_bytes(image) for image in images)
            candidates = self._candidates(app, images, infos, by_room, warm_nodes | chosen, size, need)
            cheap = size + min((c[0] for c in candidates), default=0)  # c[0] = -present bytes
            for neg_present, _, node, room in candidates:
                if need <= 0 or slots <= 0:
                    break
                if self.net_bytes and size + neg_present > min(need, room) * cheap:
                    continue
                if not self._disk_ok(node, images):
                    continue
                chosen.add(node)
                need -= room
                slots -= 1
                for image in images:
                    out.append((node, image.name))
        return out

    def _see_departures(self, infos: dict[str, NodeInfo], now: float) -> None:
        """Record a departure at ``now`` for every bound pod no longer on its node. A pod whose node
        is gone is forgotten without one (its room did not come back on a holder)."""
        for app in self.apps.values():
            gone = [
                uid for uid, node in app.bound.items() if not ((ni := infos.get(node)) and ni.has_pod(uid))
            ]
            for uid in gone:
                if app.bound.pop(uid) in infos:
                    app.departures.append(now)

    def _usable(self, name: str, skip: set[str]) -> bool:
        assert self.ctx is not None
        return name not in skip and not self.ctx.model.pending_pulls(name)

    def _candidates(
        self,
        app: AppDemand,
        images: list[CatalogueImage],
        infos: dict[str, NodeInfo],
        by_room: list[NodeInfo],
        skip: set[str],
        size: int,
        want: float,
    ) -> list[tuple[int, int, str, int]]:
        """``(-present bytes, -room, node, room)`` of nodes that may be pre-pulled: the nodes
        holding images that share layers with ``images`` and nodes in ``by_room`` order (at most
        ``max_per_app_per_tick`` of those, examining at most ``_WALK_LIMIT`` nodes), cheapest
        first: by ``(size - present) / min(room, max(1, ceil(want)))`` bytes per pod (``size``:
        bytes of the images' distinct layers; ``want``: pods expected beyond the warm room), then
        the most room, then by name."""
        assert self.ctx is not None
        model = self.ctx.model
        layer_ids = {layer.id for image in images for layer in image.unique_layers}
        related: set[str] = set()
        for other in self.holders:
            if other in (image.name for image in images):
                continue
            other_image = self.ctx.catalogue.get(other)
            if other_image is not None and any(layer.id in layer_ids for layer in other_image.unique_layers):
                related.update(self.holders[other])
        out: list[tuple[int, int, str, int]] = []
        for name in related:
            ni = infos.get(name)
            if ni is None or not self._usable(name, skip):
                continue
            room = room_for(app.requests, ni, app.affinity)
            if room <= 0:
                continue
            present = sum(model.layer_bytes(name, image)[0] for image in images)
            if present > 0:
                out.append((-present, -room, name, room))
        extra = 0
        for ni in by_room[:_WALK_LIMIT]:
            if extra >= self.max_per_app_per_tick:
                break
            if ni.name in related or not self._usable(ni.name, skip):
                continue
            room = room_for(app.requests, ni, app.affinity)
            if room > 0:
                out.append((0, -room, ni.name, room))
                extra += 1
        pods = max(1, math.ceil(want))
        out.sort(key=lambda c: ((size + c[0]) / min(c[3], pods), c[1], c[2]))
        return out

    def _disk_ok(self, node: str, images: list[CatalogueImage]) -> bool:
        assert self.ctx is not None
        store = self.ctx.model.store(node)
        extra = sum(store.disk_bytes(image.size_bytes) for image in images if not store.has_image(image.name))
        return (store.usage_bytes + extra) * 100 <= self.disk_limit_percent * store.capacity_bytes
