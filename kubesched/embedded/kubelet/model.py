"""Kubelet image model for the replay: per-node image pulls, layers, disk, image GC and
``node.status.images``, on a virtual clock.

One :class:`KubeletModel` manages every node. Per-node state is plain dicts and the only timers
are pull phase ends, container starts and GC ticks of nodes above the GC threshold, so 8,000 pods
on 1,500 nodes cost about 0.2 s of wall time in the model.

A pod's life in the model (``pkg/kubelet`` behaviour it follows in brackets):

* :meth:`KubeletModel.pod_bound` -- the pod's images are needed one after the other (the kubelet
  starts a pod's containers in order and never pulls two images of one pod in parallel). An image
  already on the node costs nothing with pull policy ``IfNotPresent`` or ``Never`` (``Always``
  pulls it anyway: a pull whose layers are all present, which costs ``pull_fixed_seconds``; ``Never``
  with the image absent pulls nothing and the pod waits, ``ErrImageNeverPull``,
  ``pkg/kubelet/images/image_manager.go: EnsureImageExists``); an image whose pull is queued or
  running on the node is *joined* (the pod waits for that pull; bytes are counted once); otherwise
  a new :class:`~kubesched.embedded.kubelet.pulls.PullJob` queues for a node slot (``serializeImagePulls`` /
  ``maxParallelImagePulls``, ``pkg/kubelet/images/puller.go``) and a registry slot. See
  :mod:`kubesched.embedded.kubelet.pulls` for layer joins and bandwidth sharing.
* when its last image is present at time ``t``, the container starts at
  ``t + container_start_seconds``: the record's ``started_at`` is set and
  ``on_container_started(pod_key, node, started_at)`` is called.
* :meth:`KubeletModel.pod_finished` -- its images stop being in use (last used = now).
* :meth:`KubeletModel.prepull` -- a pull for no pod, made by a node agent through the CRI image
  service (OpenKruise's kruise-daemon ``ImagePullJob`` works this way), not by the kubelet's
  puller: it takes no kubelet pull slot, so a pod's own pull never queues behind a speculative
  pre-pull; it shares the node's bandwidth and the registry limit, and pods needing that image
  (or its layers) join it. With ``prepull_kubelet_slot`` (``kubesched run --prepull``'s puller
  pods: the kubelet pulls their images) a pre-pull queues for a kubelet pull slot like a pod's.

Image GC runs at the kubelet's ``ImageGCPeriod`` ticks (multiples of
``image_gc_period_seconds`` on the clock) for nodes whose usage reached the high threshold after a
pull (a tick on a node below the threshold does nothing, so only those ticks are simulated); see
:mod:`kubesched.embedded.kubelet.node_images` for the GC rules. Disk usage may exceed capacity between ticks
(the model has no eviction manager and pulls never fail).

Not modelled: a tag moving to new content (``Always`` on a present image re-resolves nothing),
``registryPullQPS``/``registryBurst``, containerd's 3 concurrent layer downloads within one pull
(a pull is one stream capped by single-core decompression), partial layers of a pull in progress
(a pull's layers appear on the node when its image completes), lazy pulling.

Per pod (:class:`PodPullRecord`): pull wait (queued before its pull started), pull time, container
start, and bytes requested / cache hit / joined / pulled. Per run (:class:`PullMetrics`): bytes
pulled, cache hit ratio, pulls joined, GC activity.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from kubesched.clock import Clock, Timer
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.embedded.kubelet.node_images import GCResult, NodeImageStore
from kubesched.embedded.kubelet.pull_records import PodPullRecord, PullMetrics
from kubesched.embedded.kubelet.pulls import PullJob, allocate_registry_bandwidth
from kubesched.images.catalogue import CatalogueImage, ImageCatalogue

__all__ = [
    "KubeletModel",
    "PodPullRecord",
    "PullMetrics",
    "refresh_node_status",
    "StatusPatcher",
    "PullListener",
]

ContainerStarted = Callable[[str, str, float], object]
ImagesChanged = Callable[[str, float], object]


class PullListener(Protocol):
    """Per-image steps of one pod, as the kubelet's image manager reports them in Events
    (``pkg/kubelet/images/image_manager.go: EnsureImageExists``). Times are clock seconds."""

    def image_present(self, pod_key: str, node: str, image: CatalogueImage, t: float) -> None:
        """``image`` is already on ``node`` (no pull)."""

    def image_pulling(self, pod_key: str, node: str, image: CatalogueImage, t: float) -> None:
        """The pod asks for ``image`` at ``t``: a new pull, or one it joins, queued or running."""

    def image_pulled(
        self, pod_key: str, node: str, image: CatalogueImage, requested: float, started: float, t: float
    ) -> None:
        """``image`` is ready for the pod at ``t``; ``requested`` is when it asked, ``started`` when
        the pull it waited for began transferring for it (``max(requested, pull start)``)."""

    def pulls_done(self, pod_key: str, node: str, t: float) -> None:
        """Every image of the pod is present; its containers are being created."""

    def image_never_pull(self, pod_key: str, node: str, image: CatalogueImage, t: float) -> None:
        """``image`` is not on ``node`` and its pull policy is ``Never`` (``ErrImageNeverPull``):
        the pod waits, pulling nothing, until it finishes."""


class StatusPatcher(Protocol):
    """The part of ``ClusterClient`` / ``MemoryCluster`` used to write node status."""

    def patch_status(self, kind: str, namespace: str | None, name: str, patch: dict[str, Any]) -> Any: ...


class _Pod:
    __slots__ = ("record", "images", "policies", "index", "requested_at", "job", "start_timer", "active")

    def __init__(
        self, record: PodPullRecord, images: list[CatalogueImage], policies: Sequence[str] | None = None
    ) -> None:
        self.record = record
        self.images = images
        self.policies = policies
        self.index = 0
        self.requested_at = 0.0
        self.job: PullJob | None = None
        self.start_timer: Timer | None = None
        self.active = True


class _Node:
    __slots__ = (
        "name",
        "store",
        "bandwidth",
        "queue",
        "running",
        "jobs",
        "inflight",
        "transferring",
        "gc_timer",
    )

    def __init__(self, name: str, store: NodeImageStore, bandwidth: float) -> None:
        self.name = name
        self.store = store
        self.bandwidth = bandwidth
        self.queue: deque[PullJob] = deque()
        self.running = 0
        self.jobs: dict[str, PullJob] = {}  # image name -> pull not done (queued or running)
        self.inflight: dict[str, PullJob] = {}  # layer id -> running job fetching it
        self.transferring: list[PullJob] = []
        self.gc_timer: Timer | None = None


def _unique_bytes(image: CatalogueImage) -> int:
    return sum(layer.size_bytes for layer in image.unique_layers)


class KubeletModel:
    """The image side of every node's kubelet.

    Args: ``clock`` (timers; a :class:`~kubesched.clock.VirtualClock` in the replay),
    ``catalogue`` (images by reference), ``config`` (:class:`KubeletImageConfig`),
    ``on_container_started(pod_key, node, t)`` and ``on_images_changed(node, t)`` callbacks
    (the latter after a pull completes or GC removes images: the moment to refresh the node's
    status); ``listener`` (a :class:`PullListener`) hears each pod's per-image steps. Nodes are created on first use with the config's bandwidth and disk; call
    :meth:`add_node` first to override them. Methods taking ``now`` default it to ``clock.now()``.
    Unknown images raise KeyError; unknown pods in :meth:`pod_finished` are ignored.
    """

    def __init__(
        self,
        clock: Clock,
        catalogue: ImageCatalogue,
        config: KubeletImageConfig | None = None,
        on_container_started: ContainerStarted | None = None,
        on_images_changed: ImagesChanged | None = None,
        listener: PullListener | None = None,
    ) -> None:
        self.clock = clock
        self.listener = listener
        self.catalogue = catalogue
        self.config = config or KubeletImageConfig()
        self.on_container_started = on_container_started
        self.on_images_changed = on_images_changed
        self.metrics = PullMetrics()
        self.records: dict[str, PodPullRecord] = {}
        self._nodes: dict[str, _Node] = {}
        self._pods: dict[str, _Pod] = {}
        self._registry_running = 0
        self._registry_queue: deque[PullJob] = deque()
        self._all_transferring: dict[PullJob, None] = {}
        self._dirty: dict[str, None] = {}
        #: (node, image) of pre-pulls whose image no pod has used yet there (precision bookkeeping)
        self._unused_prepulls: set[tuple[str, str]] = set()
        #: called as ``(node, image name, t)`` when :meth:`prepull` starts a pull (the moment a
        #: pre-pull agent announces it on the node)
        self.on_prepull_started: Callable[[str, str, float], None] | None = None

    # ----------------------------------------------------------------- nodes

    def add_node(
        self, name: str, *, bandwidth_bps: float | None = None, image_disk_bytes: int | None = None
    ) -> None:
        """Register node ``name`` with its download bandwidth (bytes/s) and image disk (bytes);
        None keeps the config's default. Raises ValueError if it exists or a value is not > 0."""
        if name in self._nodes:
            raise ValueError(f"node {name!r} already exists in the kubelet model")
        bandwidth = self.config.node_bandwidth_bps if bandwidth_bps is None else bandwidth_bps
        disk = self.config.image_disk_bytes if image_disk_bytes is None else image_disk_bytes
        if not bandwidth > 0 or not disk > 0:
            raise ValueError(f"node {name!r}: bandwidth and image disk must be > 0")
        self._nodes[name] = _Node(
            name, NodeImageStore(int(disk), self.config.uncompressed_ratio), float(bandwidth)
        )

    def _node(self, name: str) -> _Node:
        node = self._nodes.get(name)
        if node is None:
            self.add_node(name)
            node = self._nodes[name]
        return node

    def node_names(self) -> list[str]:
        return list(self._nodes)

    def store(self, node: str) -> NodeImageStore:
        """The node's image store (images, layer refs, disk usage); read-only use please."""
        return self._node(node).store

    def _image(self, ref: str | CatalogueImage) -> CatalogueImage:
        return ref if isinstance(ref, CatalogueImage) else self.catalogue[ref]

    def _now(self, now: float | None) -> float:
        return self.clock.now() if now is None else now

    def preload(self, node: str, images: Iterable[str | CatalogueImage], now: float | None = None) -> None:
        """Put ``images`` on ``node`` without pulling (images baked into the node's disk)."""
        t = self._now(now)
        n = self._node(node)
        for ref in images:
            if n.store.add_image(self._image(ref), t):
                self._changed(n, t)

    # ----------------------------------------------------------------- pods

    def pod_bound(
        self,
        node: str,
        pod_key: str,
        images: Sequence[str | CatalogueImage],
        now: float | None = None,
        pull_policies: Sequence[str] | None = None,
    ) -> PodPullRecord:
        """Pod ``pod_key`` was bound to ``node`` at ``now``: its images are needed in order (see the
        module docstring). ``pull_policies``: the containers' ``imagePullPolicy``, one per image
        (``Always`` / ``IfNotPresent`` / ``Never``; all ``IfNotPresent`` when None). Returns its
        :class:`PodPullRecord` (filled in as time passes). Raises ValueError if the pod is already
        active or ``pull_policies`` has another length, KeyError for an image not in the catalogue."""
        if pod_key in self._pods:
            raise ValueError(f"pod {pod_key!r} is already bound in the kubelet model")
        if pull_policies is not None and len(pull_policies) != len(images):
            raise ValueError(f"pod {pod_key!r}: {len(pull_policies)} pull policies for {len(images)} images")
        t = self._now(now)
        imgs = [self._image(ref) for ref in images]
        n = self._node(node)
        record = PodPullRecord(pod_key, node, t, tuple(i.name for i in imgs))
        self.records[pod_key] = record
        pod = _Pod(record, imgs, pull_policies)
        self._pods[pod_key] = pod
        for image in imgs:
            n.store.use(image.name, t)
        self._request_next(n, pod, t)
        return record

    def pod_finished(self, node: str, pod_key: str, now: float | None = None) -> None:
        """Pod ``pod_key`` ended (finished or deleted) at ``now``: its images are no longer in use
        (last used = now); a pending container start is cancelled; a pull it started goes on."""
        pod = self._pods.pop(pod_key, None)
        if pod is None:
            return
        t = self._now(now)
        pod.active = False
        pod.record.finished_at = t
        if pod.start_timer is not None:
            pod.start_timer.cancel()
        n = self._node(node)
        for image in pod.images:
            n.store.release(image.name, t)

    def _request_next(self, n: _Node, pod: _Pod, t: float) -> None:
        record = pod.record
        while pod.index < len(pod.images):
            image = pod.images[pod.index]
            size = _unique_bytes(image)
            record.bytes_requested += size
            self.metrics.bytes_requested += size
            if self._unused_prepulls and (n.name, image.name) in self._unused_prepulls:
                self._unused_prepulls.discard((n.name, image.name))
                self.metrics.prepulls_used += 1
            policy = pod.policies[pod.index] if pod.policies is not None else "IfNotPresent"
            present = n.store.has_image(image.name)
            if policy == "Never" and not present:
                pod.job = None
                if self.listener is not None:
                    self.listener.image_never_pull(record.pod_key, n.name, image, t)
                return
            if present and policy != "Always":
                record.bytes_cache_hit += size
                self.metrics.bytes_cache_hit += size
                pod.index += 1
                if self.listener is not None:
                    self.listener.image_present(record.pod_key, n.name, image, t)
                continue
            pod.requested_at = t
            if self.listener is not None:
                self.listener.image_pulling(record.pod_key, n.name, image, t)
            job = n.jobs.get(image.name)
            if job is None:
                job = self._new_job(n, image, t, owner=record.pod_key)
                if job.done:
                    # completed at once (every layer already on the node): _image_ready ran before
                    # pod.job was set and ignored it, so account for it now
                    pod.job = job
                    self._image_ready(record.pod_key, job, t)
                    return
            else:
                job.waiters.append(record.pod_key)
                record.pulls_joined += 1
                self.metrics.pulls_joined += 1
            pod.job = job
            return
        pod.job = None
        record.pulls_done_at = t
        if self.listener is not None:
            self.listener.pulls_done(record.pod_key, n.name, t)
        pod.start_timer = self.clock.call_at(
            t + self.config.container_start_seconds, lambda: self._container_started(pod)
        )

    def _container_started(self, pod: _Pod) -> None:
        if not pod.active:
            return
        t = self.clock.now()
        pod.record.started_at = t
        pod.start_timer = None
        if self.on_container_started is not None:
            self.on_container_started(pod.record.pod_key, pod.record.node, t)

    def _image_ready(self, pod_key: str, job: PullJob, t: float) -> None:
        pod = self._pods.get(pod_key)
        if pod is None or pod.job is not job:
            return
        record = pod.record
        assert job.started is not None
        record.pull_wait_seconds += max(0.0, job.started - pod.requested_at)
        record.pull_seconds += t - max(pod.requested_at, job.started)
        if self.listener is not None:
            self.listener.image_pulled(
                pod_key, record.node, job.image, pod.requested_at, max(pod.requested_at, job.started), t
            )
        size = _unique_bytes(job.image)
        record.bytes_cache_hit += job.present_bytes
        self.metrics.bytes_cache_hit += job.present_bytes
        if pod_key == job.owner:
            record.bytes_joined += job.joined_bytes
            record.bytes_pulled += job.own_bytes
            record.image_bytes_pulled += size
            self.metrics.bytes_joined += job.joined_bytes
            self.metrics.image_bytes_pulled += size
        else:
            record.bytes_joined += size - job.present_bytes
            self.metrics.bytes_joined += size - job.present_bytes
        pod.index += 1
        self._request_next(self._node(record.node), pod, t)

    # ----------------------------------------------------------------- pulls

    def prepull(self, node: str, image: str | CatalogueImage, now: float | None = None) -> bool:
        """Start pulling ``image`` on ``node`` for no pod (a pre-pull planner's action). Returns False
        (and does nothing) when the image is present or a pull of it is queued or running there."""
        t = self._now(now)
        img = self._image(image)
        n = self._node(node)
        if n.store.has_image(img.name) or img.name in n.jobs:
            return False
        self.metrics.prepulls += 1
        self._unused_prepulls.add((n.name, img.name))
        self._new_job(n, img, t, owner=None)
        if self.on_prepull_started is not None:
            self.on_prepull_started(n.name, img.name, t)
        return True

    def prepulls_in_flight(self, node: str) -> list[str]:
        """Image names of ``node``'s pre-pulls (pulls started by :meth:`prepull`) queued or running,
        in the order they started."""
        return [name for name, job in self._node(node).jobs.items() if job.owner is None]

    def _new_job(self, n: _Node, image: CatalogueImage, t: float, owner: str | None) -> PullJob:
        cri = owner is None and not self.config.prepull_kubelet_slot
        job = PullJob(node=n.name, image=image, requested=t, owner=owner, holds_slot=not cri)
        n.jobs[image.name] = job
        if cri:
            # a pre-pull is made by a node agent through the CRI image service (as OpenKruise's
            # kruise-daemon does for an ImagePullJob), not by the kubelet's image puller: it takes
            # no kubelet pull slot, so it never delays a pod's own pull (it still shares the
            # node's bandwidth and the registry limit). With prepull_kubelet_slot (puller pods,
            # whose images the kubelet pulls) it queues for a slot like a pod's pull.
            self._registry_admit(n, job, t)
            return job
        n.queue.append(job)
        self._pump_node(n, t)
        return job

    def _registry_admit(self, n: _Node, job: PullJob, t: float) -> None:
        limit = self.config.registry_max_concurrent_pulls
        if limit is not None and self._registry_running >= limit:
            self._registry_queue.append(job)
        else:
            self._registry_running += 1
            self._start(n, job, t)

    def _pump_node(self, n: _Node, t: float) -> None:
        slots = self.config.node_pull_slots
        while n.queue and (slots is None or n.running < slots):
            job = n.queue.popleft()
            n.running += 1
            self._registry_admit(n, job, t)

    def _pump_registry(self, t: float) -> None:
        limit = self.config.registry_max_concurrent_pulls
        while self._registry_queue and (limit is None or self._registry_running < limit):
            job = self._registry_queue.popleft()
            self._registry_running += 1
            self._start(self._nodes[job.node], job, t)

    def _start(self, n: _Node, job: PullJob, t: float) -> None:
        job.started = t
        self.metrics.pulls_started += 1
        store = n.store
        own = []
        for layer in job.image.unique_layers:
            if store.has_layer(layer.id):
                job.present_bytes += layer.size_bytes
                continue
            other = n.inflight.get(layer.id)
            if other is not None:
                job.joined_bytes += layer.size_bytes
                self.metrics.layers_joined += 1
                if not other.transfer_done and other not in job.deps:
                    job.deps.append(other)
                    other.dependents.append(job)
                continue
            own.append(layer)
            n.inflight[layer.id] = job
        job.own_layers = tuple(own)
        job.own_bytes = sum(layer.size_bytes for layer in own)
        latency = self.config.pull_fixed_seconds + len(own) * self.config.layer_latency_seconds
        if latency > 0:
            job.timer = self.clock.call_at(
                t + latency, lambda: self._begin_transfer(n, job, self.clock.now())
            )
        else:
            self._begin_transfer(n, job, t)

    def _begin_transfer(self, n: _Node, job: PullJob, t: float) -> None:
        job.timer = None
        if job.own_bytes == 0:
            self._transfer_finished(n, job, t)
            return
        job.transferring = True
        job.remaining = float(job.own_bytes)
        job.progress_at = t
        job.rate = 0.0
        n.transferring.append(job)
        self._all_transferring[job] = None
        self._reallocate(n, t)

    def _node_rate(self, n: _Node) -> float:
        return min(self.config.decompress_bps, n.bandwidth / len(n.transferring)) if n.transferring else 0.0

    def _reallocate(self, n: _Node, t: float) -> None:
        """Recompute transfer rates after the set of transferring jobs changed (on node ``n``, or
        anywhere when a registry bandwidth couples all nodes) and move their finish timers."""
        total = self.config.registry_bandwidth_bps
        if total is None:
            rate = self._node_rate(n)
            for job in n.transferring:
                self._set_rate(n, job, rate, t)
            return
        jobs = list(self._all_transferring)
        caps = [self._node_rate(self._nodes[j.node]) for j in jobs]
        for job, rate in zip(jobs, allocate_registry_bandwidth(caps, total), strict=True):
            self._set_rate(self._nodes[job.node], job, rate, t)

    def _set_rate(self, n: _Node, job: PullJob, rate: float, t: float) -> None:
        if rate == job.rate and job.timer is not None:
            return
        job.advance(t)
        job.rate = rate
        if job.timer is not None:
            job.timer.cancel()
        job.timer = self.clock.call_at(
            job.progress_at + job.remaining / rate, lambda: self._transfer_finished(n, job, self.clock.now())
        )

    def _transfer_finished(self, n: _Node, job: PullJob, t: float) -> None:
        job.timer = None
        if job.transferring:
            job.transferring = False
            job.remaining = 0.0
            n.transferring.remove(job)
            self._all_transferring.pop(job, None)
            self._reallocate(n, t)
        job.transfer_done = True
        self.metrics.bytes_pulled += job.own_bytes
        if job.owner is None:
            self.metrics.bytes_prepulled += job.own_bytes
            self.metrics.image_bytes_prepulled += _unique_bytes(job.image)
        self._maybe_done(n, job, t)
        for dependent in job.dependents:
            self._maybe_done(self._nodes[dependent.node], dependent, t)

    def _maybe_done(self, n: _Node, job: PullJob, t: float) -> None:
        if job.done or not job.transfer_done or any(not d.transfer_done for d in job.deps):
            return
        job.done = True
        job.finished = t
        self.metrics.pulls_completed += 1
        n.jobs.pop(job.image.name, None)
        for layer in job.own_layers:
            if n.inflight.get(layer.id) is job:
                del n.inflight[layer.id]
        if n.store.add_image(job.image, t):
            self._changed(n, t)
        if job.holds_slot:
            n.running -= 1  # CRI-level pre-pulls hold no kubelet pull slot (see _new_job)
        self._registry_running -= 1
        self._pump_registry(t)
        self._pump_node(n, t)
        self._check_gc(n, t)
        if job.owner is not None:
            self._image_ready(job.owner, job, t)
        for pod_key in job.waiters:
            self._image_ready(pod_key, job, t)

    # ----------------------------------------------------------------- GC and status

    def _check_gc(self, n: _Node, t: float) -> None:
        cfg = self.config
        if n.gc_timer is not None or not n.store.over_high_threshold(cfg.image_gc_high_threshold_percent):
            return
        period = cfg.image_gc_period_seconds
        if period == 0:
            self._gc(n, t)
            return
        tick = (t // period + 1) * period
        n.gc_timer = self.clock.call_at(tick, lambda: self._gc_tick(n))

    def _gc_tick(self, n: _Node) -> None:
        n.gc_timer = None
        t = self.clock.now()
        self._gc(n, t)
        self._check_gc(n, t)

    def _gc(self, n: _Node, t: float) -> GCResult:
        cfg = self.config
        result = n.store.gc(
            t,
            cfg.image_gc_high_threshold_percent,
            cfg.image_gc_low_threshold_percent,
            cfg.image_minimum_gc_age_seconds,
        )
        if result.triggered:
            self.metrics.gc_runs += 1
            self.metrics.images_removed += len(result.removed)
            self.metrics.bytes_freed += result.freed_bytes
        if result.removed:
            if self._unused_prepulls:
                for name in result.removed:  # removed before any pod used it: never counted as used
                    self._unused_prepulls.discard((n.name, name))
            self._changed(n, t)
        return result

    def run_gc(self, node: str, now: float | None = None) -> GCResult:
        """Run one image GC pass on ``node`` now (outside the periodic ticks)."""
        return self._gc(self._node(node), self._now(now))

    def _changed(self, n: _Node, t: float) -> None:
        self._dirty[n.name] = None
        if self.on_images_changed is not None:
            self.on_images_changed(n.name, t)

    def pop_dirty_nodes(self) -> list[str]:
        """Nodes whose image list changed since the last call (in order of first change); clears the set."""
        dirty = list(self._dirty)
        self._dirty.clear()
        return dirty

    def status_images(self, node: str) -> list[dict[str, Any]]:
        """``node.status.images`` for ``node``: at most ``node_status_max_images`` entries
        ``{"names": [...], "sizeBytes": n}``, largest first (see
        :meth:`~kubesched.embedded.kubelet.node_images.NodeImageStore.status_images`)."""
        return self._node(node).store.status_images(self.config.node_status_max_images)

    def refresh_node_status(self, cluster: StatusPatcher, node: str) -> None:
        """Patch ``node``'s ``status.images`` in ``cluster`` (see :func:`refresh_node_status`)."""
        refresh_node_status(cluster, self, node)

    # ----------------------------------------------------------------- queries for plugins / planners

    def has_image(self, node: str, image: str | CatalogueImage) -> bool:
        """True when ``image`` is present on ``node``."""
        return self._node(node).store.has_image(self._image(image).name)

    def layer_bytes(self, node: str, image: str | CatalogueImage) -> tuple[int, int]:
        """``(present, in_flight)`` compressed bytes of ``image``'s distinct layers on ``node``:
        already there, and not there but coming with a pull queued or running on the node."""
        n = self._node(node)
        img = self._image(image)
        coming: set[str] = set(n.inflight)
        for job in n.jobs.values():
            coming.update(layer.id for layer in job.image.unique_layers)
        present = in_flight = 0
        for layer in img.unique_layers:
            if n.store.has_layer(layer.id):
                present += layer.size_bytes
            elif layer.id in coming:
                in_flight += layer.size_bytes
        return present, in_flight

    def pulling(self, node: str, image: str | CatalogueImage) -> bool:
        """True when a pull of ``image`` is queued or running on ``node``."""
        return self._image(image).name in self._node(node).jobs

    def pending_pulls(self, node: str) -> int:
        """Pulls queued or running on ``node``."""
        return len(self._node(node).jobs)

    def bandwidth_bps(self, node: str) -> float:
        """The node's download bandwidth (bytes/s)."""
        return self._node(node).bandwidth


def refresh_node_status(cluster: StatusPatcher, model: KubeletModel, node: str) -> None:
    """Write ``model.status_images(node)`` into the Node's ``status.images`` (``PATCH nodes/status``,
    as the kubelet's node status update does). The embedded store skips a patch that changes nothing."""
    images = [
        {"names": list(entry["names"]), "sizeBytes": entry["sizeBytes"]}
        for entry in model.status_images(node)
    ]
    cluster.patch_status("Node", "", node, {"images": images})
