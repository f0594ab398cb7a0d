"""``kubesched replay``: run a workload through the real scheduler over virtual time, with a
kubelet image model, once per scheduler config, and measure pod start-up.

One run (:func:`run_replay`) is the scheduler's virtual-time lifecycle on a
:class:`~kubesched.clock.VirtualClock` against a :class:`~kubesched.embedded.store.MemoryCluster`
(``Scheduler.start`` with the queue's flushes, ``Scheduler.run_until_quiet``, ``Scheduler.stop``;
the loop is :class:`~kubesched.scheduler.virtual_time.VirtualTimeDriver`, as for ``simulate`` and
``bench``). Everything the run adds is a timer on that clock:

1. the workload's nodes are loaded, the scheduler (:func:`~kubesched.scheduler.factory.new_scheduler`:
   queue, cycle, cache, binding, exactly as ``simulate`` and ``run`` use it) is started;
2. each pod is created at its arrival time (a timer of phase ``ARRIVAL``);
3. while the queue has a poppable pod, one scheduling cycle runs (binding inline). Scheduling
   takes no virtual time unless ``attempt_seconds`` > 0: then the scheduler is busy for that long
   after each attempt (the driver's ``ready`` hook: it pops the next pod only then, and the clock
   stops at the end of the busy time while pods wait in activeQ); events during that time still
   happen on time;
4. otherwise the clock advances to its next timer: an arrival, the kubelet model's pull phases,
   container starts, image GC ticks, pod finishes, node status refreshes, Permit timeouts, the
   queue's own backoff flush (``PriorityQueue.run``: at the first whole second after the earliest
   backoff expiry) and unschedulable-pods flush (on a 30 s grid from the origin, while
   unschedulable pods exist), the planners' ticks. Timers of one instant fire in
   :class:`~kubesched.clock.Phase` order (events, backoff flush, unschedulable flush, arrivals,
   ticks), then that instant's cycles run. The time series is sampled before each move;
5. a bound pod (seen on the cluster watch) is handed to the kubelet model (``pod_bound``); its
   container starts after its pulls (``on_container_started``) and its status is patched to
   ``Running`` then, as a kubelet writes it (the scheduler's cache sees that phase: a started
   pod's images are on its node, :func:`~kubesched.images.layer_index.pod_started`); it then runs
   for its duration and finishes: ``pod_finished`` in the model and the Pod is deleted, freeing
   its resources;
6. every ``status_update_seconds`` (10 s, the kubelet's ``nodeStatusUpdateFrequency``) the nodes
   whose images changed get their ``status.images`` patched (``refresh_node_status``) - the only
   image information the scheduler sees; on a grid from the origin, or, when the workload gives
   per-node phases (``Workload.status_phases``: a recorded cluster's kubelets each write on a grid
   of their own), at ``origin + phase + k * period`` per node. Every
   :data:`~kubesched.embedded.kubelet.heartbeat.STATUS_REPORT_SECONDS` (5 min, the kubelet's
   ``nodeStatusReportFrequency``, on one grid from the origin, as ``serve --kubelet``'s kubelets
   post) every node reports its conditions with a new ``lastHeartbeatTime``
   (:func:`~kubesched.embedded.kubelet.heartbeat.ready_conditions`), whatever else changed. Each
   report is a Node update, which makes the scheduler's cache clone the node into the next
   snapshot with the image counts of that moment (``ImageStateSummary.NumNodes``, which
   ImageLocality scales by; a node that is never updated keeps the counts of its last clone). A
   node's first report is posted (its conditions appear); the later ones would change nothing
   but ``lastHeartbeatTime``, which no scheduler plugin or event reads (upstream
   ``nodeSchedulingPropertiesChange`` compares condition types and statuses), so they are not
   written: the cache re-clones at the next snapshot only the nodes whose image counts the
   re-clone changes (``Scheduler.refresh_image_counts``), and every scheduling decision is the one
   the posts give. The reports stop
   while nothing is left to schedule (every arrival created, no pod pending) and resume with the
   next pod. Pods the workload gives as already
   running at second 0 (``Workload.running``: a recording's) are stored bound before the scheduler
   starts, hold their requests and images, and are deleted after their remaining run time; they
   are no arrivals and have no timeline;
7. the run ends when it is quiet: no poppable pod and no timer left but daemon ones (the
   unschedulable flush, planner ticks). Pods still pending then are "never scheduled"; pods
   running until the end stay running.

A pod deleted by the scheduler (preemption victim) is finished in the model and marked
``preempted``; it is not recreated. The workloads among the trace's objects (Deployments,
ReplicaSets, Jobs, DaemonSets, StatefulSets) get their pods from the workload controllers, which
run on the same clock (:mod:`kubesched.modes.replay.controllers`: their pods are measured from
their creation, finish after their ``kubesched.io/run-seconds`` as ``Succeeded``, and a
preempted one is replaced by its ReplicaSet); nodes with a later arrival
(``Workload.node_arrivals``) join at that time (a DaemonSet then gets a pod on them).

Pre-pull planners (:mod:`kubesched.prepull.hook`) get ``attach`` / ``on_pod_pending`` /
``on_pod_bound`` / ``tick`` callbacks and act through ``KubeletModel.prepull``. The replay plays the
pre-pull agent's part on the cluster: a node's ``kubesched.io/prepulls-in-flight`` annotation lists
its pre-pulls from the moment they start until the status update that lists the image.

The public API: :func:`run_replay` (one config), :func:`run_replays` (several configs, same
workload and seed), :class:`~kubesched.modes.report.result.ReplayResult` (timelines, metrics, series;
``summary()`` gives the ``report.json`` entry).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.client.client import WatchEvent
from kubesched.clock import Phase, VirtualClock
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.embedded.controllers.manager import WORKLOAD_KINDS, ControllerManager
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.embedded.kubelet.dra_driver import FakeGPUDriver, node_gpus
from kubesched.embedded.kubelet.heartbeat import STATUS_REPORT_SECONDS, ready_conditions
from kubesched.embedded.kubelet.live import exit_code
from kubesched.embedded.kubelet.model import KubeletModel
from kubesched.embedded.kubelet.pod_status import exited_status, running_status
from kubesched.embedded.kubelet.pull_policy import pod_pull_policies
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import ManifestError, NotFoundError
from kubesched.framework.queued_pod_info import QueuedPodInfo
from kubesched.images.catalogue import ImageCatalogue
from kubesched.images.layer_index import PREPULLS_IN_FLIGHT_ANNOTATION
from kubesched.modes.replay.controllers import (
    ReplayControllers,
    check_workload_images,
    deletion_due,
    preempted_by_scheduler,
    run_seconds,
)
from kubesched.modes.replay.dra_gpus import allocated_devices
from kubesched.modes.report.metrics import DRA_DEVICES_RESOURCE, AllocationTracker, PodTimeline, SeriesPoint
from kubesched.modes.report.result import ReplayResult
from kubesched.prepull.hook import DEFAULT_TICK_SECONDS, PlannerContext, PlannerFactory, PrePullPlannerHook
from kubesched.scheduler import Scheduler, new_scheduler
from kubesched.trace.workload import Workload

__all__ = ["run_replay", "run_replays", "ReplayProgress", "ConfigSpec", "CLOCK_ORIGIN", "check_images"]

#: virtual clock time of replay second 0 (2025-01-01T00:00:00Z; a multiple of every period used)
CLOCK_ORIGIN = 1735689600.0
#: kubelet ``nodeStatusUpdateFrequency`` default (s)
STATUS_UPDATE_SECONDS = 10.0
#: samples taken for the time series (plots)
SAMPLE_POINTS = 400

#: ``progress(virtual seconds since origin, pods created, pods total)``
ReplayProgress = Callable[[float, int, int], None]


@dataclass(frozen=True, slots=True)
class ConfigSpec:
    """One scheduler config to replay: ``name`` (as reported, e.g. the file name) and the parsed
    config (None = the upstream default profile)."""

    name: str
    config: KubeSchedulerConfiguration | None


def check_images(workload: Workload, catalogue: ImageCatalogue) -> None:
    """Raise :class:`~kubesched.errors.ManifestError` (``Pod ns/name: spec.containers[i].image``)
    for the first workload pod whose image is not in ``catalogue``."""
    for wp in workload.pods:
        spec = wp.manifest.get("spec") or {}
        for field_name in ("initContainers", "containers"):
            for i, c in enumerate(spec.get(field_name) or []):
                image = c.get("image") if isinstance(c, Mapping) else None
                if not isinstance(image, str) or catalogue.get(image) is None:
                    raise ManifestError(
                        f"spec.{field_name}[{i}].image",
                        f"image {image!r} is not in the image catalogue {catalogue.where}",
                        f"Pod {wp.key}",
                    )
    check_workload_images(workload.objects, catalogue)


class _Run:
    """State of one replay run (see the module docstring for the loop)."""

    def __init__(
        self,
        workload: Workload,
        spec: ConfigSpec,
        catalogue: ImageCatalogue,
        kubelet_config: KubeletImageConfig,
        seed: int | None,
        planners: Sequence[PrePullPlannerHook],
        attempt_seconds: float,
        status_update_seconds: float,
        sample_points: int,
        progress: ReplayProgress | None,
    ) -> None:
        self.workload = workload
        self.spec = spec
        self.seed = seed
        self.origin = CLOCK_ORIGIN
        self.clock = VirtualClock(self.origin)
        self.cluster = MemoryCluster(self.clock, history_limit=1000, event_limit=1000)
        self.controllers = ControllerManager(self.cluster, self.clock).start()
        self.catalogue = catalogue
        self.model = KubeletModel(
            self.clock,
            catalogue,
            kubelet_config,
            on_container_started=self._container_started,
            on_images_changed=self._images_changed,
        )
        self.model.on_prepull_started = self._prepull_started
        self.planners = list(planners)
        self.attempt_seconds = attempt_seconds
        self.status_period = status_update_seconds
        self.progress = progress
        self.timelines: dict[str, PodTimeline] = {
            wp.key: PodTimeline(wp.key, wp.arrival) for wp in workload.pods
        }
        self.durations = {wp.key: wp.duration for wp in workload.pods}
        #: pods the workload controllers created, in creation order (measured after the trace's)
        self.controlled: list[str] = []
        self.controlled_keys: set[str] = set()
        self.workload_controllers: ReplayControllers | None = None
        self.requests: dict[str, Mapping[str, int]] = {}
        self.finish_timers: dict[str, Any] = {}
        self.status_timer: Any = None
        self.status_due: dict[str, float] = {}  # per-node phases: node -> its next status write
        self.status_ticks: dict[float, Any] = {}  # per-node phases: tick time -> timer
        self.report_timer: Any = None  # the next nodeStatusReportFrequency post (None: stopped)
        self.reported: set[str] = set()  # nodes whose kubelet posted its conditions
        self.current: str | None = None
        self.attempts = 0
        self.busy_until = -math.inf
        self.arrivals: list[float] = []
        self.created = 0
        self.loops = 0
        self.tick_periods: list[float] = []
        self.next_tick: list[float] = []
        self.pending = 0
        self.running = 0
        self.running_keys = {wp.key for wp in workload.running}
        allocatable: dict[str, int] = {}
        for obj in workload.nodes:
            try:
                node = Node.from_manifest(obj)
            except ManifestError as e:
                raise e.located(f"Node {(obj.get('metadata') or {}).get('name')}") from None
            for r, v in node.allocatable.items():
                allocatable[r] = allocatable.get(r, 0) + v
        self.dra = workload.gpu == "dra"
        if self.dra:  # GPUs are the fake DRA driver's devices, counted from the claims' allocations
            allocatable[DRA_DEVICES_RESOURCE] = sum(node_gpus(obj)[0] for obj in workload.nodes)
        self.tracker = AllocationTracker(allocatable, workload.horizon)
        self.series: list[SeriesPoint] = []
        self.sample_points = sample_points if workload.horizon > 0 else 0
        self.sample_index = 0

    # ------------------------------------------------------------------ helpers

    def t(self) -> float:
        """Seconds since the origin."""
        return self.clock.now() - self.origin

    def _sample(self, t: float) -> None:
        m = self.model.metrics
        self.series.append(
            SeriesPoint(
                t,
                m.bytes_pulled,
                m.bytes_requested,
                m.bytes_cache_hit,
                self.pending,
                self.running,
                self.tracker.fractions(),
            )
        )

    def _samples_before(self, limit: float) -> None:
        """Take the samples due strictly before clock time ``limit``: sample k of
        ``sample_points`` is at ``horizon * k / sample_points`` seconds since the origin."""
        points = self.sample_points
        horizon = self.workload.horizon
        while self.sample_index <= points:
            at = horizon * self.sample_index / points if points else 0.0
            if self.origin + at >= limit:
                return
            self._sample(at)
            self.sample_index += 1

    # ------------------------------------------------------------------ callbacks

    def _on_pod_event(self, ev: WatchEvent) -> None:
        obj = ev.object
        meta = obj.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
        tl = self.timelines.get(key)
        if tl is None:
            if ev.type == "ADDED" and key not in self.running_keys:
                self._controlled_pod(key, obj)
            return
        node = (obj.get("spec") or {}).get("nodeName")
        controlled = key in self.controlled_keys
        if ev.type == "MODIFIED":
            old = ev.old_object or {}
            if node and not (old.get("spec") or {}).get("nodeName"):
                self._bound(key, tl, obj, node)
            if (
                controlled
                and meta.get("deletionTimestamp")
                and not (old.get("metadata") or {}).get("deletionTimestamp")
            ):
                self._terminating(key, tl, obj)
        elif ev.type == "DELETED" and node and tl.finished is None and tl.bound is not None:
            # deleted by someone else than the replay (a preemption victim; for a controller's
            # pod, only when the scheduler says so)
            tl.preempted = not controlled or preempted_by_scheduler(obj)
            self._finish(key, tl, node, delete=False)
        elif ev.type == "DELETED" and controlled and tl.bound is None:
            self.pending -= 1  # deleted while pending (a Job done, a scale-down)

    def _controlled_pod(self, key: str, obj: Mapping[str, Any]) -> None:
        """A pod a workload controller created: measured from now, running its ``run-seconds``."""
        t = self.t()
        self.timelines[key] = PodTimeline(key, t)
        self.durations[key] = run_seconds(obj)
        self.controlled.append(key)
        self.controlled_keys.add(key)
        self.pending += 1
        self._arm_status_report()
        if self.planners:
            pod = Pod.from_manifest(obj)
            for planner in self.planners:
                planner.on_pod_pending(pod, t)

    def _terminating(self, key: str, tl: PodTimeline, obj: Mapping[str, Any]) -> None:
        """A controller's pod deleted gracefully: its containers stop now, the pod goes when its
        grace period is over (no kubelet confirms it)."""
        meta = obj.get("metadata") or {}
        node = (obj.get("spec") or {}).get("nodeName")
        if node and tl.bound is not None and tl.finished is None:
            tl.preempted = preempted_by_scheduler(obj)
            self._finish(key, tl, str(node), delete=False)
        due = deletion_due(obj)
        ns, name = str(meta.get("namespace") or "default"), str(meta.get("name"))

        def remove() -> None:
            try:
                self.cluster.delete("Pod", ns, name, grace=True, grace_period_seconds=0)
            except NotFoundError:
                pass

        self.clock.call_at(self.clock.now() if due is None else due, remove)

    def _bound(self, key: str, tl: PodTimeline, obj: Mapping[str, Any], node: str) -> None:
        t = self.t()
        if self.current == key:
            tl.assumed = t
        tl.bound = t
        tl.node = node
        pod = Pod.from_manifest(obj)
        requests = pod.requests
        if self.dra:
            requests = {**requests, DRA_DEVICES_RESOURCE: allocated_devices(self.cluster, obj)}
        self.requests[key] = requests
        self.tracker.add(requests, t)
        self.pending -= 1
        self.running += 1
        tl.images = tuple(self.catalogue[i].name for i in pod.images)
        self.model.pod_bound(node, key, pod.images, pull_policies=pod_pull_policies(obj))
        for planner in self.planners:
            planner.on_pod_bound(pod, node, t)

    def _container_started(self, key: str, node: str, when: float) -> None:
        tl = self.timelines.get(key)
        if tl is None:
            return  # a pod already running at second 0 (Workload.running)
        t = when - self.origin
        tl.started = t
        record = self.model.records[key]
        tl.pulls_done = None if record.pulls_done_at is None else record.pulls_done_at - self.origin
        tl.pull_wait_seconds = record.pull_wait_seconds
        tl.pull_seconds = record.pull_seconds
        tl.bytes_requested = record.bytes_requested
        tl.bytes_cache_hit = record.bytes_cache_hit
        tl.bytes_pulled = record.bytes_pulled
        # the kubelet writes Running once every container started, and the scheduler's pod informer
        # sees it (ImagePullTimeSaved counts a started pod's images as present on its node)
        ns, _, name = key.partition("/")
        pod = self.cluster.get("Pod", ns, name)
        self.cluster.patch_status("Pod", ns, name, running_status(pod, when, {}))
        duration = self.durations[key]
        if duration is not None:
            self.finish_timers[key] = self.clock.call_at(when + duration, lambda: self._finish(key, tl, node))

    def _finish(self, key: str, tl: PodTimeline, node: str, delete: bool = True) -> None:
        t = self.t()
        tl.finished = t
        timer = self.finish_timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        self.model.pod_finished(node, key)
        self.tracker.remove(self.requests.pop(key), t)
        self.running -= 1
        if delete:
            ns, _, name = key.partition("/")
            if (
                key in self.controlled_keys
            ):  # a controller's pod ends (Succeeded, or Failed with a non-zero exit code) and stays
                pod = self.cluster.get("Pod", ns, name)
                started = self.origin + (tl.started if tl.started is not None else t)
                code = exit_code(pod) or 0  # an invalid annotation: exit 0, as the live kubelets
                status = exited_status(pod, started, self.clock.now(), {}, code)
                self.cluster.patch_status("Pod", ns, name, status)
            else:
                self.cluster.delete("Pod", ns, name)

    def _prepull_started(self, node: str, image: str, when: float) -> None:
        """A planner started a pre-pull: the agent announces it on the node at once."""
        self._sync_prepulls(node)

    def _sync_prepulls(self, node: str) -> None:
        """Write ``node``'s pre-pulls in flight (:meth:`KubeletModel.prepulls_in_flight`) into its
        :data:`~kubesched.images.layer_index.PREPULLS_IN_FLIGHT_ANNOTATION`, as a pre-pull agent
        does: set when a pull starts, an image dropped with the status update that lists it."""
        value = ",".join(self.model.prepulls_in_flight(node))
        obj = self.cluster.get("Node", None, node)
        meta = obj.get("metadata") or {}
        annotations = dict(meta.get("annotations") or {})
        if annotations.get(PREPULLS_IN_FLIGHT_ANNOTATION, "") == value:
            return
        if value:
            annotations[PREPULLS_IN_FLIGHT_ANNOTATION] = value
        else:
            annotations.pop(PREPULLS_IN_FLIGHT_ANNOTATION, None)
        self.cluster.update({**obj, "metadata": {**meta, "annotations": annotations}})

    def _images_changed(self, node: str, when: float) -> None:
        phases = self.workload.status_phases
        if phases:
            self._node_status_due(node, when, phases.get(node, 0.0))
            return
        if self.status_timer is None:
            period = self.status_period
            rel = when - self.origin
            tick = self.origin + (math.floor(rel / period) + 1) * period if period > 0 else when
            self.status_timer = self.clock.call_at(tick, self._refresh_status)

    def _node_status_due(self, node: str, when: float, phase: float) -> None:
        """With per-node status phases: ``node``'s status is written at its next tick after
        ``when`` (``origin + phase + k * period``), one timer per tick time."""
        if node in self.status_due:
            return
        period = self.status_period
        rel = when - self.origin - phase
        tick = self.origin + phase + (math.floor(rel / period) + 1) * period
        self.status_due[node] = tick
        if tick not in self.status_ticks:
            self.status_ticks[tick] = self.clock.call_at(tick, lambda: self._refresh_due(tick))

    def _refresh_due(self, tick: float) -> None:
        self.status_ticks.pop(tick, None)
        due = [n for n, t in self.status_due.items() if t <= tick]
        for node in due:
            del self.status_due[node]
            self.model.refresh_node_status(self.cluster, node)
            self._sync_prepulls(node)

    def _arm_status_report(self) -> None:
        """Resume the kubelets' status reports (stopped while nothing was left to schedule) at the
        next ``origin + k * STATUS_REPORT_SECONDS``."""
        if self.report_timer is not None:
            return
        k = math.floor((self.clock.now() - self.origin) / STATUS_REPORT_SECONDS) + 1
        self.report_timer = self.clock.call_at(
            self.origin + k * STATUS_REPORT_SECONDS, self._report_status, daemon=True
        )

    def _report_status(self) -> None:
        """Every node's kubelet reports its conditions (``lastHeartbeatTime`` now), as the kubelet
        does every ``nodeStatusReportFrequency`` whether its status changed or not
        (``pkg/kubelet/kubelet_node_status.go: tryUpdateNodeStatus``); then the next report, unless
        nothing is left to schedule. A node's first report is posted; a later one changes nothing
        but ``lastHeartbeatTime`` (nothing else in a replay writes node conditions), so instead of
        a Node update per node the scheduler's cache re-clones, at its next snapshot, the nodes
        whose image counts those updates would recount (``Scheduler.refresh_image_counts``)."""
        self.report_timer = None
        now = self.clock.now()
        for node in self.model.node_names():
            if node in self.reported:
                continue
            try:
                obj = self.cluster.get("Node", None, node)
            except NotFoundError:
                continue
            self.cluster.patch_status("Node", None, node, {"conditions": ready_conditions(obj, now)})
            self.reported.add(node)
        self.scheduler.refresh_image_counts()
        if self.created < len(self.workload.pods) or self.pending > 0:
            self._arm_status_report()

    def _refresh_status(self) -> None:
        self.status_timer = None
        for node in self.model.pop_dirty_nodes():
            self.model.refresh_node_status(self.cluster, node)
            self._sync_prepulls(node)

    # ------------------------------------------------------------------ the run

    def _before_attempt(self, qpi: QueuedPodInfo) -> None:
        key = qpi.pod.key
        tl = self.timelines.get(key)
        t = self.t()
        if tl is not None:
            if tl.first_attempt is None:
                tl.first_attempt = t
            tl.attempts += 1
        self.attempts += 1
        self.current = key
        if self.attempt_seconds > 0:
            self.busy_until = self.clock.now() + self.attempt_seconds
        self._report_progress()

    def _after_attempt(self, qpi: QueuedPodInfo) -> None:
        self.current = None
        tl = self.timelines.get(qpi.pod.key)
        if tl is not None and tl.bound is None and self.scheduler.is_assumed(qpi.pod):
            tl.assumed = self.t()  # reserved, waiting in Permit: bound later

    def _ready(self) -> bool:
        """``attempt_seconds``: no cycle starts before the previous one is over."""
        return self.clock.now() >= self.busy_until

    def _idle(self, next_timer: float | None) -> float | None:
        """Where the clock goes when no cycle runs: the next timer while work is pending (arrivals,
        kubelet events, pod completions, the backoff flush), or the end of the busy time when
        pods wait in activeQ; None (the end of the run) when only daemon timers are left, or when
        the one timer left is the backoff flush of pods whose retries would meet the cluster as
        their last failed attempt did (``Scheduler.retries_would_repeat``: a plugin that fails on a
        pod would otherwise keep the run going for ever)."""
        now = self.clock.now()
        waiting = now < self.busy_until and self.scheduler.pending_pods().active > 0
        if not waiting:
            if self.clock.pending_work() == 1 and self.scheduler.retries_would_repeat():
                return None
            return next_timer if self.clock.has_pending_work() else None
        return self.busy_until if next_timer is None else min(next_timer, self.busy_until)

    def _before_advance(self, now: float, target: float) -> None:
        self._samples_before(target)
        self._report_progress()

    def _report_progress(self) -> None:
        self.loops += 1
        if self.progress is not None and self.loops % 256 == 0:
            self.progress(self.t(), self.created, len(self.workload.pods))

    def _arrive(self) -> None:
        """Create every pod that has arrived by now, then wait for the next arrival."""
        pods, arrivals = self.workload.pods, self.arrivals
        now = self.clock.now()
        i = self.created
        while i < len(pods) and arrivals[i] <= now:
            self._create(pods[i])
            i += 1
        self.created = i
        if i < len(pods):
            self.clock.call_at(arrivals[i], self._arrive, phase=Phase.ARRIVAL)

    def _tick_planners(self) -> None:
        """``tick`` of each planner due now, in planner order, each on its own grid from the origin;
        then wait for the next one (a daemon timer: ticks do not keep the run going)."""
        now, origin = self.clock.now(), self.origin
        for j, planner in enumerate(self.planners):
            if self.next_tick[j] <= now:
                planner.tick(now - origin)
                period = self.tick_periods[j]
                self.next_tick[j] = origin + (math.floor((now - origin) / period) + 1) * period
        self.clock.call_at(min(self.next_tick), self._tick_planners, daemon=True, phase=Phase.TICK)

    def run(self) -> ReplayResult:
        wall0 = time.perf_counter()
        wl = self.workload
        late = wl.node_arrivals
        self.cluster.load([dict(n) for n in wl.nodes if (n.get("metadata") or {}).get("name") not in late])
        self.cluster.load([dict(o) for o in wl.objects])
        if self.dra:
            FakeGPUDriver(self.cluster).start()
        for obj in wl.nodes:
            name = str((obj.get("metadata") or {}).get("name"))
            if name in late:
                self.clock.call_at(
                    self.origin + late[name], functools.partial(self._node_joins, obj), phase=Phase.ARRIVAL
                )
                continue
            self.model.add_node(name)
            if wl.images.get(name):
                self.model.preload(name, wl.images[name], self.origin)
        for wp in wl.running:
            self._start_running(wp)
        if wl.images or wl.running:
            for name in self.model.pop_dirty_nodes():
                self.model.refresh_node_status(self.cluster, name)
                self._sync_prepulls(name)
            self.status_due.clear()
            for timer in self.status_ticks.values():
                timer.cancel()
            self.status_ticks.clear()
        self.scheduler: Scheduler = new_scheduler(
            self.cluster, self.spec.config, clock=self.clock, seed=self.seed, record=False
        )
        self.scheduler.start(queue_flushes=True)
        self.cluster.watch("Pod", self.cluster.resource_version, self._on_pod_event)
        if any(o.get("kind") in WORKLOAD_KINDS for o in wl.objects):
            self.workload_controllers = ReplayControllers(self.cluster, self.clock, wl.objects).start()
        ctx = PlannerContext(
            self.model, self.cluster, self.scheduler, self.clock, self.catalogue, self.origin
        )
        origin = self.origin
        # absolute clock times (floats compared exactly with the clock's own values); turned into
        # seconds since the origin only for recording
        self.arrivals = [origin + p.arrival for p in wl.pods]
        for planner in self.planners:
            planner.attach(ctx)
            self.tick_periods.append(float(planner.tick_seconds or DEFAULT_TICK_SECONDS))
            self.next_tick.append(origin)
        # second 0: the arrivals and planner ticks due at the origin, before its cycles
        self._arrive()
        if self.planners:
            self._tick_planners()
        self.scheduler.run_until_quiet(
            before_attempt=self._before_attempt,
            after_attempt=self._after_attempt,
            ready=self._ready,
            idle=self._idle,
            before_advance=self._before_advance,
        )
        end = self.t()
        self._samples_before(math.inf)
        self.scheduler.stop()
        if self.workload_controllers is not None:
            self.workload_controllers.stop()
        if self.progress is not None:
            self.progress(end, self.created, len(wl.pods))
        mean = self.tracker.mean_fractions()
        return ReplayResult(
            config=self.spec.name,
            profiles=self.scheduler.profile_names(),
            workload=wl.description,
            seed=self.seed,
            horizon=wl.horizon,
            timelines=[self.timelines[key] for key in [*(wp.key for wp in wl.pods), *self.controlled]],
            pull_metrics=self.model.metrics,
            mean_allocated_fraction=mean,
            series=self.series,
            attempts=self.attempts,
            end_time=end,
            wall_seconds=time.perf_counter() - wall0,
            planners=[type(p).__name__ for p in self.planners],
        )

    def _node_joins(self, obj: Mapping[str, Any]) -> None:
        """A node with a later arrival joins the cluster (its kubelet model starts empty)."""
        name = str((obj.get("metadata") or {}).get("name"))
        self.model.add_node(name)
        self.cluster.create(dict(obj))

    def _start_running(self, wp: Any) -> None:
        """A pod already running at second 0 on ``spec.nodeName``: stored bound and ``Running`` (the
        scheduler lists it with the nodes), its images present, its requests allocated, deleted
        after its remaining ``duration``; it has no timeline (it is no arrival of the replay)."""
        obj = self.cluster.create(dict(wp.manifest))
        node = str(obj["spec"]["nodeName"])
        if (obj.get("status") or {}).get("phase") != "Running":
            obj = self.cluster.patch_status(
                "Pod", wp.namespace, wp.name, running_status(obj, self.origin, {})
            )
        pod = Pod.from_manifest(obj)
        self.model.preload(node, pod.images, self.origin)
        self.model.pod_bound(node, wp.key, pod.images, self.origin)
        self.tracker.add(pod.requests, 0.0)
        if wp.duration is not None:

            def finish() -> None:
                self.model.pod_finished(node, wp.key)
                self.tracker.remove(pod.requests, self.t())
                self.cluster.delete("Pod", wp.namespace, wp.name)

            self.clock.call_at(self.origin + wp.duration, finish)

    def _create(self, wp: Any) -> None:
        now = self.t()
        # the arrival as the clock sees it (same float rounding as every other recorded time)
        self.timelines[wp.key].arrival = now
        obj = self.cluster.create(dict(wp.manifest))
        self.pending += 1
        self._arm_status_report()
        if self.planners:
            pod = Pod.from_manifest(obj)
            for planner in self.planners:
                planner.on_pod_pending(pod, now)


def run_replay(
    workload: Workload,
    spec: ConfigSpec | KubeSchedulerConfiguration | None = None,
    *,
    catalogue: ImageCatalogue,
    kubelet_config: KubeletImageConfig | None = None,
    seed: int | None = 0,
    planners: Sequence[PrePullPlannerHook] = (),
    attempt_seconds: float = 0.0,
    status_update_seconds: float = STATUS_UPDATE_SECONDS,
    sample_points: int = SAMPLE_POINTS,
    progress: ReplayProgress | None = None,
) -> ReplayResult:
    """Replay ``workload`` once with scheduler config ``spec`` (a :class:`ConfigSpec`, a parsed
    config, or None for the upstream default profile).

    ``catalogue``: images of the pods (every pod image must be in it); ``kubelet_config``: the
    kubelet image model settings (default: :class:`KubeletImageConfig` defaults updated with the
    workload's ``kubelet`` overrides); ``seed``: the scheduler's tie-breaking seed;
    ``planners``: pre-pull planner objects for this run (:mod:`kubesched.prepull.hook`);
    ``attempt_seconds``: virtual time one scheduling attempt keeps the scheduler busy (>= 0);
    ``status_update_seconds``: period of the node ``status.images`` refresh (> 0);
    ``sample_points``: samples of the time series over ``[0, horizon]``; ``progress``: called
    now and then with (virtual seconds, pods created, pods total).

    Raises ManifestError for a pod image missing from the catalogue or a malformed node,
    ConfigError for a bad config, ValueError for a negative ``attempt_seconds`` or a non-positive
    ``status_update_seconds``.
    """
    if not attempt_seconds >= 0:
        raise ValueError(f"attempt_seconds must be >= 0, got {attempt_seconds!r}")
    if not status_update_seconds > 0:
        raise ValueError(f"status_update_seconds must be > 0, got {status_update_seconds!r}")
    if not isinstance(spec, ConfigSpec):
        spec = ConfigSpec("upstream-default" if spec is None else "config", spec)
    check_images(workload, catalogue)
    if kubelet_config is None:
        kubelet_config = (
            KubeletImageConfig.from_mapping(workload.kubelet, workload.description)
            if workload.kubelet
            else KubeletImageConfig()
        )
    run = _Run(
        workload,
        spec,
        catalogue,
        kubelet_config,
        seed,
        planners,
        attempt_seconds,
        status_update_seconds,
        sample_points,
        progress,
    )
    return run.run()


def run_replays(
    workload: Workload,
    specs: Sequence[ConfigSpec],
    *,
    catalogue: ImageCatalogue,
    kubelet_config: KubeletImageConfig | None = None,
    seed: int | None = 0,
    planners: Sequence[PlannerFactory] = (),
    attempt_seconds: float = 0.0,
    status_update_seconds: float = STATUS_UPDATE_SECONDS,
    sample_points: int = SAMPLE_POINTS,
    progress: Callable[[ConfigSpec], ReplayProgress | None] | None = None,
) -> list[ReplayResult]:
    """:func:`run_replay` for each spec in order, same workload and seed; ``planners`` are
    factories called once per run (a fresh planner per config); ``progress(spec)`` returns the
    progress callback of that run."""
    results = []
    for spec in specs:
        results.append(
            run_replay(
                workload,
                spec,
                catalogue=catalogue,
                kubelet_config=kubelet_config,
                seed=seed,
                planners=[make() for make in planners],
                attempt_seconds=attempt_seconds,
                status_update_seconds=status_update_seconds,
                sample_points=sample_points,
                progress=progress(spec) if progress is not None else None,
            )
        )
    return results
