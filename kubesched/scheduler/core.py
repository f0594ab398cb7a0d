"""The scheduler: one scheduling cycle per pod, then an (optionally concurrent) binding cycle
(``pkg/scheduler/scheduler.go`` and ``pkg/scheduler/schedule_one.go``).

The same ``Scheduler`` serves every mode, with one lifecycle: :meth:`Scheduler.start` (informers,
and the queue's flush loops when asked), then :meth:`Scheduler.run_until_quiet` on a virtual clock
(``simulate``, ``replay``, ``bench``, the UI; the loop is
:class:`~kubesched.scheduler.virtual_time.VirtualTimeDriver`, and a run mode's own events -
arrivals, a kubelet model, planners - are timers on the same clock) or :meth:`Scheduler.run` on a
real clock against an API server (``run``), then :meth:`Scheduler.stop`. It reaches the cluster
only through a ``ClusterClient``.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api import kinds
from kubesched.api.pod import Pod
from kubesched.client.client import ClusterClient
from kubesched.client.informers import InformerSet, ResourceEventHandlerFuncs
from kubesched.clock import VirtualClock
from kubesched.config.extenders import extender_ignored_resources
from kubesched.config.feature_gates import resolve as resolve_gates
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.framework.cycle_state import PODS_TO_ACTIVATE_KEY, CycleState
from kubesched.framework.diagnosis import Diagnosis, FitError, NodeToStatus
from kubesched.framework.events import ASSIGNED_POD_DELETE
from kubesched.framework.metrics_sink import NULL_SINK, MetricsSink
from kubesched.framework.node_info import NodeInfo, PodInfo
from kubesched.framework.options import FrameworkOptions
from kubesched.framework.queued_pod_info import QueuedPodInfo
from kubesched.framework.recorder import CycleRecorder
from kubesched.framework.registry import Registry
from kubesched.framework.results import NominatingInfo, NominatingMode
from kubesched.framework.runtime import Framework
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.sort_key import QueueSortKey
from kubesched.framework.status import Code, Status
from kubesched.logs import KObj, v_info
from kubesched.scheduler.events import ClientEventRecorder
from kubesched.scheduler.placement import NoNodesAvailableError, Placement, SchedulingError
from kubesched.scheduler.virtual_time import AdvanceHook, AttemptHook, IdleHook, ReadyHook, VirtualTimeDriver

log = logging.getLogger(__name__)

CLEAR_NOMINATION = NominatingInfo("", NominatingMode.Override)


@dataclass(frozen=True)
class PendingPods:
    """Pod counts of the scheduling queue (see :meth:`Scheduler.pending_pods`)."""

    active: int
    backoff: int
    unschedulable: int
    gated: int
    in_flight: int


BindingExecutor = Callable[[Callable[[], None]], None]


def run_inline(fn: Callable[[], None]) -> None:
    """Binding executor that runs the binding cycle at once (simulation, benchmarks)."""
    fn()


class BindingPool:
    """Binding executor for a real clock: binding cycles run on at most ``max_workers`` threads,
    concurrently with the next scheduling cycles (``pkg/scheduler/schedule_one.go``: ``go bindingCycle``).
    At most ``max_in_flight`` cycles are queued or running; submitting more blocks the submitter (the
    scheduling loop), which bounds memory and API pressure. After :meth:`halt` new cycles are
    dropped (the process is going away: lost lease); :meth:`shutdown` waits for those in flight
    (graceful stop). Thread-safe.

    Threads are started on demand, as ``concurrent.futures.ThreadPoolExecutor`` starts them (a new
    one only when no started thread is free), and take cycles from one FIFO queue; a cycle is a
    plain callable (no ``Future``: nothing waits for a binding cycle's result), which keeps the
    hand-off from the scheduling thread to a few dozen bytecodes."""

    def __init__(self, max_workers: int = 16, max_in_flight: int = 256) -> None:
        self._queue: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._slots = threading.BoundedSemaphore(max_in_flight)
        self._halted = threading.Event()
        self._lock = threading.Lock()
        self._max_workers = max(1, max_workers)
        self._threads: list[threading.Thread] = []
        #: started threads that are free and not yet promised to a queued cycle
        self._idle = 0
        self._in_flight = 0
        self._closed = False

    def __call__(self, fn: Callable[[], None]) -> None:
        if self._halted.is_set():
            log.info("binding pool halted: dropping a binding cycle")
            return
        self._slots.acquire()
        with self._lock:
            if self._closed:
                self._slots.release()
                return
            self._in_flight += 1
            if self._idle:
                self._idle -= 1
            elif len(self._threads) < self._max_workers:
                t = threading.Thread(target=self._work, name=f"binding_{len(self._threads)}", daemon=True)
                self._threads.append(t)
                t.start()
        self._queue.put(fn)

    def _work(self) -> None:
        get = self._queue.get
        while True:
            fn = get()
            if fn is None:
                return
            try:
                if not self._halted.is_set():
                    fn()
            except Exception:  # noqa: BLE001 - a failing binding never kills the pool
                log.exception("binding cycle failed")
            finally:
                with self._lock:
                    self._in_flight -= 1
                    self._idle += 1
                self._slots.release()

    def in_flight(self) -> int:
        """Binding cycles queued or running."""
        with self._lock:
            return self._in_flight

    def halt(self) -> None:
        """Drop every binding cycle not started yet, and every later one."""
        self._halted.set()

    def shutdown(self, wait: bool = True) -> None:
        """Stop accepting cycles; with ``wait`` block until the running and queued ones finished."""
        with self._lock:
            if self._closed:
                threads: list[threading.Thread] = []
            else:
                self._closed = True
                threads = list(self._threads)
        for _ in threads:
            self._queue.put(None)  # after every queued cycle (FIFO)
        if wait:
            me = threading.current_thread()
            for t in threads:
                if t is not me:
                    t.join()


class Scheduler:
    """kube-scheduler's ``Scheduler``: cache, queue, profiles (one :class:`Framework` each) and the
    scheduling/binding cycles. Create with :func:`kubesched.scheduler.factory.new_scheduler`."""

    def __init__(
        self,
        client: ClusterClient,
        config: KubeSchedulerConfiguration,
        registry: Registry,
        *,
        clock: Any,
        rng: random.Random,
        record: bool | Callable[[Pod], bool] = False,
        binding_executor: BindingExecutor = run_inline,
        default_profile_fallback: bool = False,
        on_skipped_plugins: Callable[[str, list[str]], None] | None = None,
        permit_wait_timeout: float | None = None,
        extenders: list[Any] | None = None,
        metrics: MetricsSink | None = None,
        write_client: ClusterClient | None = None,
        event_sink: Callable[[dict[str, Any]], Any] | None = None,
        reporting_instance: str = "kubesched",
    ) -> None:
        from kubesched.cache.cache import Cache
        from kubesched.queue.scheduling_queue import PriorityQueue
        from kubesched.scheduler.event_handlers import EventHandlers

        #: the client of the scheduling path's writes (status patches, bindings, victim deletions;
        #: ``write_client`` when given, e.g. a write-behind client) -- informers read ``client``
        self.client: ClusterClient = write_client if write_client is not None else client
        #: synchronous writes of the binding cycle (already off the scheduling thread; ordered before the bind)
        self.binding_client: ClusterClient = client
        self.config = config
        self.clock = clock
        self.rng = rng
        self.record = record
        self.binding_executor = binding_executor
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.informers = InformerSet(client, kinds.watched_kinds())
        self.records: dict[str, list[CycleRecorder]] = {}
        #: builds the recorder of a recorded attempt (a mode may keep less than every node's verdicts)
        self.new_recorder: Callable[[Pod], CycleRecorder] = lambda pod: CycleRecorder()
        self.invalid_pods: dict[str, str] = {}
        self._lock = threading.RLock()
        self.extenders = list(extenders or [])
        #: a :class:`kubesched.metrics.SchedulerMetrics` or None (no metrics); ``sink`` is it or the null sink
        self.metrics = metrics
        self.sink: MetricsSink = metrics if metrics is not None else NULL_SINK
        self.placement = Placement(rng, self.extenders, config.percentage_of_nodes_to_score)
        ignored = extender_ignored_resources(config)
        self.profiles: dict[str, Framework] = {}
        gates = resolve_gates(config.feature_gates)
        #: ``NominatedNodeNameForExpectation`` (v1.35 default on): PreBindPreFlight and
        #: ``nominatedNodeName`` set before a binding whose PreBind or Permit has work to do
        self.nominated_node_name_for_expectation = gates["NominatedNodeNameForExpectation"]
        for i, prof in enumerate(config.profiles):
            name = prof.scheduler_name or "default-scheduler"
            fwk = Framework(
                prof,
                registry,
                FrameworkOptions(
                    profile_path=f"profiles[{i}]",
                    snapshot_provider=lambda: self.snapshot,
                    node_info_provider=self.cache.node_info,
                    clock=clock,
                    rng=rng,
                    client=self.client,
                    objects=self.informers,
                    event_recorder=ClientEventRecorder(
                        self.client, clock, name, reporting_instance, event_sink
                    ),
                    extenders=self.extenders,
                    metrics=metrics,
                    parallelism=config.parallelism,
                    percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
                    ignored_resources=ignored,
                    permit_wait_timeout=permit_wait_timeout,
                    skip_unavailable=default_profile_fallback,
                    on_skipped=_bind_profile(on_skipped_plugins, name),
                    feature_gates=gates,
                ),
            )
            self.profiles[name] = fwk
        first = next(iter(self.profiles.values()))
        self.queue = PriorityQueue(
            clock,
            first.queue_sort_plugin.less,
            pod_initial_backoff=float(config.pod_initial_backoff_seconds),
            pod_max_backoff=float(config.pod_max_backoff_seconds),
            pre_enqueue_plugins={n: f.pre_enqueue_plugins for n, f in self.profiles.items()},
            queueing_hints={n: _hint_map(f) for n, f in self.profiles.items()},
            profile_of=self.profile_name_for,
            pod_lister=self._informer_pod,
            namespace_labels=self.informers.namespace_labels,
            sort_key=qs.sort_key if isinstance(qs := first.queue_sort_plugin, QueueSortKey) else None,
            metrics=metrics,
        )
        for fwk in self.profiles.values():
            fwk.set_pod_nominator(self.queue)
            fwk.set_pod_activator(self.queue)
        self.handlers = EventHandlers(
            self.cache,
            self.queue,
            self.profiles,
            invalid_pods=self.invalid_pods,
            patch_failed_status=self.patch_failed_status,
        )

    # ---- setup ----------------------------------------------------------------------------------

    def profile_name_for(self, pod: Pod) -> str | None:
        """The profile responsible for ``pod`` (by ``spec.schedulerName``) or None."""
        return pod.scheduler_name if pod.scheduler_name in self.profiles else None

    def _informer_pod(self, key: str) -> Pod | None:
        ns, _, name = key.partition("/")
        obj = self.informers.get("Pod", ns, name)
        return self.handlers.parsed_pod(obj) if obj is not None else None

    def start(self, *, queue_flushes: bool = False) -> None:
        """Start the informers (list + watch); event handlers fill the cache and the queue. With
        ``queue_flushes`` also the queue's background flushes (``PriorityQueue.run``; upstream
        ``pkg/scheduler/scheduler.go`` ``Run`` starts ``SchedulingQueue.Run``): pods in backoff and
        long-unschedulable pods are retried on the clock (``replay``, ``bench``). Without them
        (``simulate``) every pending pod is tried until quiet, and what stays unschedulable or
        waits in the error backoff is not retried on a timer."""
        self.handlers.register(self.informers)
        self.informers.start(kinds.watched_kinds())
        if queue_flushes:
            self.queue.run()

    # ---- the loop -------------------------------------------------------------------------------

    def run_until_quiet(
        self,
        *,
        max_attempts: int | None = None,
        until: Callable[[], bool] | None = None,
        before_attempt: AttemptHook | None = None,
        after_attempt: AttemptHook | None = None,
        idle: IdleHook | None = None,
        ready: ReadyHook | None = None,
        before_advance: AdvanceHook | None = None,
    ) -> int:
        """The virtual-time lifecycle (``simulate``, ``replay``, ``bench``): schedule until quiet on
        this scheduler's :class:`~kubesched.clock.VirtualClock` (see
        :meth:`~kubesched.scheduler.virtual_time.VirtualTimeDriver.run_until_quiet` for the hooks);
        returns the cycles run. Raises TypeError on a real clock (use :meth:`run`)."""
        if not isinstance(self.clock, VirtualClock):
            raise TypeError("run_until_quiet needs a VirtualClock; on a real clock use run(stop)")
        driver = VirtualTimeDriver(self, self.clock)
        return driver.run_until_quiet(
            max_attempts=max_attempts,
            until=until,
            before_attempt=before_attempt,
            after_attempt=after_attempt,
            idle=idle,
            ready=ready,
            before_advance=before_advance,
        )

    def stop(self) -> None:
        """End the lifecycle: the queue closes (waking :meth:`run`) and the informers stop watching.
        The binding executor belongs to whoever gave it (``kubesched run`` drains its pool)."""
        self.queue.close()
        self.informers.stop()

    def schedule_next(self) -> bool:
        """Pop one pod (non-blocking) and run its scheduling cycle; False when nothing was poppable."""
        qpi = self.queue.pop()
        if qpi is None:
            return False
        self.schedule_one(qpi)
        return True

    def run(self, stop: threading.Event) -> None:
        """Blocking loop for a real clock: pop (waiting for pods) and schedule until ``stop`` is set.
        A pod popped after ``stop`` was set is left unscheduled (the process is stopping)."""
        while not stop.is_set():
            qpi = self.queue.pop_blocking(0.5)
            if qpi is None:
                continue
            if stop.is_set():
                self.queue.done(qpi.pod.uid)
                break
            try:
                self.schedule_one(qpi)
            except Exception:  # noqa: BLE001 - one pod's failure never stops the scheduler
                log.exception("scheduling %s failed", qpi.key)

    def schedule_one(self, qpi: QueuedPodInfo) -> None:
        """Upstream ``pkg/scheduler/schedule_one.go`` ``ScheduleOne`` for a popped pod."""
        pod = qpi.pod
        fwk = self.profiles.get(pod.scheduler_name)
        if fwk is None:
            log.error("unable to find profile for scheduler name %s (pod %s)", pod.scheduler_name, pod.key)
            self.queue.done(pod.uid)
            return
        if pod.deletion_timestamp:
            fwk.event_recorder.eventf(  # type: ignore[union-attr]
                pod,
                None,
                "Warning",
                "FailedScheduling",
                "Scheduling",
                f"skip schedule deleting pod: {pod.namespace}/{pod.name}",
            )
            self.queue.done(pod.uid)
            return
        if self.cache.is_assumed_pod(pod):
            self.queue.done(pod.uid)
            return
        state = CycleState()
        state.record_plugin_metrics = self.rng.randrange(100) < 10
        state.write(PODS_TO_ACTIVATE_KEY, {})
        if self.record is True or (self.record and self.record(pod)):  # type: ignore[operator]
            rec = self.new_recorder(pod)
            state.recorder = rec
            self.records.setdefault(pod.key, []).append(rec)
        start = self.clock.now()
        self.scheduling_cycle(fwk, state, qpi, start)
        if self.sink.enabled:
            self.sink.cache_size(self.cache.cache_size())

    # ---- scheduling cycle -----------------------------------------------------------------------

    def scheduling_cycle(self, fwk: Framework, state: CycleState, qpi: QueuedPodInfo, start: float) -> None:
        """Upstream ``pkg/scheduler/schedule_one.go`` ``schedulingCycle``: find a host, assume, Reserve,
        Permit; then hand over to the binding cycle."""
        pod = qpi.pod
        self.cache.update_snapshot(self.snapshot)
        try:
            result = self.placement.schedule_pod(
                fwk, state, pod, self.snapshot, self.queue.scheduling_cycle()
            )
        except NoNodesAvailableError as e:
            self.handle_failure(
                fwk, qpi, Status(Code.UnschedulableAndUnresolvable, str(e)), CLEAR_NOMINATION, start
            )
            return
        except FitError as fe:
            if not fwk.has_post_filter_plugins():
                self.handle_failure(fwk, qpi, _fit_status(fe), CLEAR_NOMINATION, start)
                return
            pf_result, pf_status = fwk.run_post_filter_plugins(state, pod, fe.diagnosis.node_to_status)
            fe.diagnosis.post_filter_msg = pf_status.message()
            if pf_status.code == Code.Error:
                log.error(
                    "status after running PostFilter plugins for pod %s: %s", pod.key, pf_status.message()
                )
            nominating = pf_result.nominating_info if pf_result is not None else None
            self.handle_failure(fwk, qpi, _fit_status(fe), nominating, start)
            return
        except SchedulingError as se:
            self.handle_failure(fwk, qpi, se.status, CLEAR_NOMINATION, start)
            return
        if self.metrics is not None:
            self.metrics.observe(
                "scheduler_scheduling_algorithm_duration_seconds", {}, self.clock.now() - start
            )
        host = result.suggested_host
        assumed = pod.with_node_name(host)
        try:
            self.cache.assume_pod(assumed)
        except Exception as e:  # noqa: BLE001
            self.handle_failure(fwk, qpi, Status(Code.Error, err=e), CLEAR_NOMINATION, start)
            return
        self.queue.delete_nominated_pod_if_exists(assumed)
        s: Status | None = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if s is not None and not s.is_success():
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self._forget(assumed)
            self.handle_failure(fwk, qpi, self._wrap_single_node(pod, host, s), CLEAR_NOMINATION, start)
            return
        s = fwk.run_permit_plugins(state, assumed, host)
        if s is not None and not s.is_success() and not s.is_wait():
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            self._forget(assumed)
            self.handle_failure(fwk, qpi, self._wrap_single_node(pod, host, s), CLEAR_NOMINATION, start)
            return
        to_activate = state.get(PODS_TO_ACTIVATE_KEY) or {}
        if to_activate:
            self.queue.activate(dict(to_activate))
            to_activate.clear()
        waiting = fwk.get_waiting_pod(assumed.uid) if s is not None and s.is_wait() else None
        metrics = self.metrics
        wait_start = self.clock.now() if metrics is not None and waiting is not None else None

        def binding() -> None:
            if metrics is None:
                self.binding_cycle(fwk, state, qpi, host, assumed, start, waiting)
                return
            metrics.inc("scheduler_goroutines", {"operation": "binding"}, 1)
            try:
                self.binding_cycle(fwk, state, qpi, host, assumed, start, waiting, wait_start)
            finally:
                metrics.inc("scheduler_goroutines", {"operation": "binding"}, -1)

        if waiting is None:
            self.binding_executor(binding)
        else:
            waiting.on_done(lambda _s: self.binding_executor(binding))

    def _wrap_single_node(self, pod: Pod, host: str, s: Status) -> Status:
        if not s.is_rejected():
            return s
        d = Diagnosis(NodeToStatus({host: s}), {s.plugin} if s.plugin else set())
        fe = FitError(pod.key, 1, d)
        return Status(s.code, err=fe, plugin=s.plugin)

    def _forget(self, assumed: Pod) -> None:
        try:
            self.cache.forget_pod(assumed)
        except Exception as e:  # noqa: BLE001
            log.error("scheduler cache forget_pod failed for %s: %s", assumed.key, e)

    # ---- binding cycle --------------------------------------------------------------------------

    def binding_cycle(
        self,
        fwk: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        host: str,
        assumed: Pod,
        start: float,
        waiting: Any,
        wait_start: float | None = None,
    ) -> None:
        """Upstream ``pkg/scheduler/schedule_one.go`` ``bindingCycle``: PreBindPreFlight (+
        nominatedNodeName), WaitOnPermit, PreBind, Bind, PostBind."""
        pod = qpi.pod
        pf: Status | None = Status(Code.Skip)
        if self.nominated_node_name_for_expectation:
            pf = fwk.run_pre_bind_pre_flights(state, assumed, host)
            if pf is not None and not pf.is_success() and not pf.is_skip():
                self._binding_failure(fwk, state, qpi, host, assumed, pf, start)
                return
        if (
            self.nominated_node_name_for_expectation
            and (pf is None or pf.is_success() or waiting is not None)
            and pod.nominated_node_name != host
        ):
            try:
                self.binding_client.patch_status("Pod", pod.namespace, pod.name, {"nominatedNodeName": host})
            except Exception as e:  # noqa: BLE001 - upstream only logs
                log.info("could not set nominatedNodeName of %s: %s", pod.key, e)
        if waiting is not None:
            s = waiting.wait(0)
            fwk.waiting_pods.remove(assumed.uid)
            if self.metrics is not None and wait_start is not None:
                self.metrics.observe(
                    "scheduler_permit_wait_duration_seconds",
                    {"result": "Success" if s is None else str(s.code)},
                    self.clock.now() - wait_start,
                )
            if s is not None and not s.is_success():
                if s.is_rejected():
                    s = self._wrap_single_node(pod, host, s)
                self._binding_failure(fwk, state, qpi, host, assumed, s, start)
                return
        self.queue.done(pod.uid)
        s = fwk.run_pre_bind_plugins(state, assumed, host)
        if s is None or s.is_success():
            s = self._bind(fwk, state, assumed, host)
        try:
            self.cache.finish_binding(assumed)
        except Exception:  # noqa: BLE001
            pass
        if s is not None and not s.is_success():
            self._binding_failure(fwk, state, qpi, host, assumed, s, start, done=True)
            return
        fwk.event_recorder.eventf(  # type: ignore[union-attr]
            pod,
            None,
            "Normal",
            "Scheduled",
            "Binding",
            f"Successfully assigned {pod.namespace}/{pod.name} to {host}",
        )
        v_info(log, 2, "Successfully bound pod to node", pod=KObj(pod.namespace, pod.name), node=host)
        if self.sink.enabled:
            now = self.clock.now()
            first = qpi.initial_attempt_timestamp
            self.sink.pod_scheduled(
                fwk.profile_name, now - start, qpi.attempts, now - first if first is not None else None
            )
        fwk.run_post_bind_plugins(state, assumed, host)
        to_activate = state.get(PODS_TO_ACTIVATE_KEY) or {}
        if to_activate:
            self.queue.activate(dict(to_activate))
            to_activate.clear()

    def _bind(self, fwk: Framework, state: CycleState, pod: Pod, host: str) -> Status | None:
        for ext in self.extenders:
            if ext.is_binder() and ext.is_interested(pod):
                try:
                    ext.bind(pod, host)
                    return None
                except Exception as e:  # noqa: BLE001
                    if ext.is_ignorable():
                        continue
                    return Status(Code.Error, err=e)
        return fwk.run_bind_plugins(state, pod, host)

    def _binding_failure(
        self,
        fwk: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        host: str,
        assumed: Pod,
        s: Status,
        start: float,
        done: bool = False,
    ) -> None:
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        forgotten = True
        try:
            self.cache.forget_pod(assumed)
        except Exception as e:  # noqa: BLE001
            forgotten = False
            log.error("scheduler cache forget_pod failed for %s: %s", assumed.key, e)
        if not done:
            pass
        if forgotten and not s.is_rejected():
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, assumed, None, None)
        self.handle_failure(fwk, qpi, s, CLEAR_NOMINATION, start)
        if forgotten and s.is_rejected():
            uid = assumed.uid
            self.queue.move_all_to_active_or_backoff(
                ASSIGNED_POD_DELETE, assumed, None, lambda p: p.uid != uid
            )

    # ---- failure handling -----------------------------------------------------------------------

    def handle_failure(
        self,
        fwk: Framework,
        qpi: QueuedPodInfo,
        status: Status,
        nominating: NominatingInfo | None,
        start: float,
    ) -> None:
        """Upstream ``pkg/scheduler/schedule_one.go`` ``handleSchedulingFailure``: requeue, nominate,
        FailedScheduling event, PodScheduled=False."""
        pod = qpi.pod
        reason = "Unschedulable" if status.is_rejected() else "SchedulerError"
        if self.sink.enabled:
            self.sink.attempt(
                "unschedulable" if status.is_rejected() else "error",
                fwk.profile_name,
                self.clock.now() - start,
            )
        err = status.err
        qpi.unschedulable_plugins = set()
        qpi.pending_plugins = set()
        if isinstance(err, FitError):
            qpi.unschedulable_plugins = set(err.diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(err.diagnosis.pending_plugins)
        cached = self.informers.get("Pod", pod.namespace, pod.name)
        current = self.handlers.parsed_pod(cached) if cached is not None else None
        if current is None or current.node_name or current.uid != pod.uid:
            self.queue.done(pod.uid)
        else:
            if current is not pod:
                qpi.pod_info = PodInfo(current)
            try:
                self.queue.add_unschedulable_if_not_present(qpi, self.queue.scheduling_cycle())
            except Exception as e:  # noqa: BLE001
                log.error("error requeueing %s: %s", pod.key, e)
            pod = current
        self.queue.add_nominated_pod(qpi.pod_info, nominating)
        msg = status.message()
        # pkg/scheduler/schedule_one.go: handleSchedulingFailure's log lines
        if isinstance(err, NoNodesAvailableError):
            v_info(
                log,
                2,
                "Unable to schedule pod; no nodes are registered to the cluster; waiting",
                pod=KObj(pod.namespace, pod.name),
            )
        elif isinstance(err, FitError) or status.is_rejected():
            v_info(
                log, 2, "Unable to schedule pod; no fit; waiting", pod=KObj(pod.namespace, pod.name), err=msg
            )
        else:
            log.error(
                "Error scheduling pod; retrying",
                extra={"kv": {"pod": KObj(pod.namespace, pod.name), "err": msg}},
            )
        fwk.event_recorder.eventf(pod, None, "Warning", "FailedScheduling", "Scheduling", msg)  # type: ignore[union-attr]
        self.patch_failed_status(pod, reason, msg, nominating)

    def patch_failed_status(self, pod: Pod, reason: str, msg: str, nominating: NominatingInfo | None) -> None:
        """``PodScheduled=False`` with ``reason``/``msg`` (and the nomination), patched only when
        it differs from the pod's current condition (``updatePod`` in ``schedule_one.go``)."""
        patch: dict[str, Any] = {}
        cond = next((c for c in pod.conditions if c.get("type") == "PodScheduled"), None)
        if (
            cond is None
            or cond.get("status") != "False"
            or cond.get("reason") != reason
            or cond.get("message") != msg
        ):
            patch["conditions"] = [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": reason,
                    "message": msg,
                    "lastProbeTime": None,
                    "lastTransitionTime": _rfc3339(self.clock.now())
                    if cond is None or cond.get("status") != "False"
                    else cond.get("lastTransitionTime"),
                }
            ]
        if (
            nominating is not None
            and nominating.mode == NominatingMode.Override
            and pod.nominated_node_name != nominating.nominated_node_name
        ):
            patch["nominatedNodeName"] = nominating.nominated_node_name or None
        if not patch:
            return
        try:
            self.client.patch_status("Pod", pod.namespace, pod.name, patch)
        except Exception as e:  # noqa: BLE001
            log.warning("could not update status of %s: %s", pod.key, e)

    # ---- introspection (what run modes read; they reach no queue, cache or informer) -------------

    def pending_pods(self) -> PendingPods:
        """The queue's pod counts, as upstream's ``scheduler_pending_pods`` gauge splits them
        (``pkg/scheduler/backend/queue/scheduling_queue.go``: activeQ, backoffQ, unschedulablePods,
        gated), plus the pods popped and not yet done (in a scheduling or binding cycle)."""
        q = self.queue
        return PendingPods(
            q.len_active(), q.len_backoff(), q.len_unschedulable(), q.len_gated(), q.in_flight_count()
        )

    def queued_pods(self) -> list[Pod]:
        """Every pod in the queue (activeQ, backoffQ, unschedulablePods, gated ones included), as
        upstream's ``PriorityQueue.PendingPods`` lists them: the parsed Pods, each with its ``raw``."""
        return self.queue.pending_pods()[0]

    def retries_would_repeat(self) -> bool:
        """Whether every pod still queued waits in backoff after an error and no cluster event
        came since its last attempt began (see ``PriorityQueue.retries_would_repeat``): a run on
        virtual time that has nothing else to do is then over."""
        return self.queue.retries_would_repeat()

    def profile_names(self) -> list[str]:
        """The profiles' ``schedulerName`` s, in the configuration's order (``profiles[]``)."""
        return list(self.profiles)

    def pre_enqueue_status(self, pod: Pod) -> Status | None:
        """Why ``pod`` waits before the queue: the first non-Success status of its profile's
        PreEnqueue plugins, with ``plugin`` set (``pkg/scheduler/framework/runtime/framework.go:
        RunPreEnqueuePlugins``); None when every plugin admits it or no profile serves it."""
        fwk = self.profiles.get(pod.scheduler_name)
        return fwk.run_pre_enqueue_plugins(pod) if fwk is not None else None

    def score_weights(self) -> dict[str, dict[str, int]]:
        """Per profile (``schedulerName``), each enabled Score plugin's weight, in the order the
        plugins run (``framework.go: NewFramework``'s ``scorePluginWeight``)."""
        return {
            name: {pl.NAME: fwk.score_weights.get(pl.NAME, 1) for pl in fwk.score_plugins}
            for name, fwk in self.profiles.items()
        }

    def gated_pods(self) -> dict[str, QueuedPodInfo]:
        """Pods held by a PreEnqueue plugin, by ``namespace/name`` (``qpi.gating_plugin`` names it)."""
        return {qpi.pod.key: qpi for qpi in self.queue.unschedulable_pods_info() if qpi.gating_plugin}

    def refresh_image_counts(self) -> None:
        """The snapshot effect of every node's kubelet status report that renews only
        ``lastHeartbeatTime`` (``replay``'s reports): the next cycle's snapshot re-clones the nodes
        whose image counts that changes (:meth:`Cache.refresh_image_counts`)."""
        self.cache.refresh_image_counts()

    def is_assumed(self, pod: Pod) -> bool:
        """Whether ``pod`` is assumed on a node in the cache (reserved, its binding not confirmed)."""
        return self.cache.is_assumed_pod(pod)

    def has_synced(self) -> bool:
        """Whether every informer has listed once (``/readyz``'s informer-sync check)."""
        return self.informers.has_synced()

    def unhealthy_informers(self) -> list[str]:
        """Kinds whose watch is failing (``/healthz`` reasons)."""
        return self.informers.unhealthy()

    def objects(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        """The informer's current objects of ``kind`` (raw API objects, never mutate them), e.g.
        ``"Pod"``; only ``namespace``'s when given."""
        return self.informers.list(kind, namespace)

    def node_infos(self) -> Iterator[NodeInfo]:
        """The cache's live NodeInfos of all nodes, assumed pods included (read-only, and only on
        the scheduling thread: ``replay``'s planners; see :meth:`Cache.node_infos`)."""
        return self.cache.node_infos()

    def node_info_copies(self) -> list[NodeInfo]:
        """Copies of the cache's NodeInfos (assumed pods included; upstream ``Cache.Dump``), for
        controllers on other threads that plan on the room the scheduler sees."""
        return list(self.cache.dump().nodes.values())

    def add_event_handlers(self, kind: str, handlers: ResourceEventHandlerFuncs) -> None:
        """Add ``handlers`` to the scheduler's informer of ``kind`` (call before :meth:`start`), as
        a controller sharing upstream's informer factory does (``Informer().AddEventHandler``)."""
        self.informers.informer(kind).add_handlers(handlers)

    def pop_pending(self, pod_key: str) -> QueuedPodInfo | None:
        """Pop pods (non-blocking) until ``pod_key`` (``namespace/name``) comes out and return it;
        the pods popped before it are set aside (``--explain``'s throw-away scheduler). None when
        the queue runs dry first."""
        while (qpi := self.queue.pop()) is not None:
            if qpi.key == pod_key:
                return qpi
        return None

    def pods_by_key(self) -> Mapping[str, Pod]:
        """Every pod the informer knows, parsed (malformed ones are left out; see ``invalid_pods``)."""
        out = {}
        for o in self.informers.list("Pod"):
            p = self.handlers.parsed_pod(o)
            if p is not None:
                out[p.key] = p
        return out


def _bind_profile(
    cb: Callable[[str, list[str]], None] | None, profile: str
) -> Callable[[list[str]], None] | None:
    """``cb`` with the profile name bound (for reporting plugins skipped in the default profile)."""
    if cb is None:
        return None

    def report(skipped: list[str]) -> None:
        cb(profile, skipped)

    return report


def _fit_status(fe: FitError) -> Status:
    return Status(Code.Unschedulable, err=fe)


def _rfc3339(t: float) -> str:
    from kubesched.api.timestamps import rfc3339

    return rfc3339(t)


def _hint_map(fwk: Framework) -> list[tuple[Any, list[tuple[str, Any]]]]:
    """``[(registered ClusterEvent, [(plugin, hint_fn), ...]), ...]`` for the queue."""
    by_event: dict[Any, list[tuple[str, Any]]] = {}
    for plugin, events in fwk.enqueue_hints():
        for ewh in events:
            by_event.setdefault(ewh.event, []).append((plugin, ewh.queueing_hint_fn))
    return list(by_event.items())
