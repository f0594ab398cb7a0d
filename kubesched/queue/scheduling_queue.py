"""``PriorityQueue``: the scheduling queue (``pkg/scheduler/backend/queue/scheduling_queue.go``,
``active_queue.go``, ``backoff_queue.go``).

Three sub-queues keyed by ``namespace/name``:

* **activeQ** – heap ordered by the profile's QueueSort ``less`` (pods ready to be tried);
* **backoffQ** – regular and error heaps ordered by window-aligned backoff expiration
  (:mod:`kubesched.queue.backoff`);
* **unschedulablePods** – pods rejected by plugins waiting for a cluster event, and pods
  gated by a PreEnqueue plugin (:mod:`kubesched.queue.unschedulable_pods`).

Pods popped for scheduling are *in flight* until ``done(uid)``; cluster events seen meanwhile
are kept and replayed through the queueing hints when the pod comes back via
``add_unschedulable_if_not_present`` (:mod:`kubesched.queue.in_flight`). Feature gates as
upstream v1.34 defaults: SchedulerQueueingHints and SchedulerPopFromBackoffQ on.

Thread safety: every public method takes one re-entrant lock; ``pop_blocking`` waits on a
``threading.Condition`` over it. Plugins' PreEnqueue and hint functions run under the lock and
must not call back into the queue. Times are seconds on the given clock.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubesched.api.pod import Pod
from kubesched.clock import Clock, Phase, Timer
from kubesched.framework.events import (
    ASSIGNED_POD_ADD,
    EVENT_FORCE_ACTIVATE,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    UNSCHEDULED_POD_ADD,
    UNSCHEDULED_POD_UPDATE,
    ActionType,
    ClusterEvent,
    EventResource,
)
from kubesched.framework.interfaces import PreEnqueuePlugin
from kubesched.framework.node_info import PodInfo
from kubesched.framework.queued_pod_info import QueuedPodInfo
from kubesched.framework.results import NominatingInfo
from kubesched.framework.status import Code, Status
from kubesched.queue.backoff import BackoffQueue, has_rejectors
from kubesched.queue.heap import Heap, LessKey
from kubesched.queue.in_flight import InFlightTracker
from kubesched.queue.metrics import (
    ACTIVE,
    BACKOFF,
    EXTENSION_POINT_DURATION,
    GATED,
    INFLIGHT_EVENTS,
    PENDING_PODS,
    POD_POPPED,
    QUEUE_INCOMING_PODS,
    UNSCHEDULABLE,
    UNSCHEDULABLE_PODS,
    NullQueueMetrics,
    QueueMetrics,
)
from kubesched.queue.nominator import Nominator, PodLister
from kubesched.queue.pod_events import pod_scheduling_properties_change
from kubesched.queue.queueing_hints import HintMap, QueueingHints, QueueingStrategy
from kubesched.queue.unschedulable_pods import POD_TOPOLOGY_SPREAD, UnschedulablePods

_log = logging.getLogger(__name__)

# Event labels used by the queue itself (``pkg/scheduler/framework/events.go``).
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
POP_FROM_BACKOFF_Q = "PopFromBackoffQ"
FORCE_ACTIVATE = EVENT_FORCE_ACTIVATE.label
UNSCHEDULABLE_TIMEOUT = EVENT_UNSCHEDULABLE_TIMEOUT.label

#: Period of the backoff flush (aligned to whole seconds) and of the unschedulable flush, seconds.
BACKOFF_FLUSH_PERIOD = 1.0
UNSCHEDULABLE_FLUSH_PERIOD = 30.0

_POD_SCALE_DOWN = ClusterEvent(EventResource.Pod, ActionType.UpdatePodScaleDown)
_UNSCHEDULED_POD_ADD = UNSCHEDULED_POD_ADD.label
_UNSCHEDULED_POD_UPDATE = UNSCHEDULED_POD_UPDATE.label
_NOMINATE_ON = (_UNSCHEDULED_POD_ADD, _UNSCHEDULED_POD_UPDATE)
#: the ``queue`` label of each ``scheduler_pending_pods`` series, in the order of ``_changed``'s sizes
_PENDING_QUEUES = (ACTIVE, BACKOFF, UNSCHEDULABLE, GATED)


@functools.lru_cache(maxsize=1024)
def _label(event: ClusterEvent) -> str:
    """``event.label``, cached (computing an action string is slow)."""
    return event.label


Less = Callable[[QueuedPodInfo, QueuedPodInfo], bool]


class QueueError(Exception):
    """A queue invariant was violated by the caller (e.g. requeueing a pod already queued)."""


class PriorityQueue:
    """The scheduling queue (see module docstring).

    Args:
        clock: time source (``now()``, ``call_later``).
        less: QueueSort ``less(a, b)``; e.g. PrioritySort (higher priority, then older timestamp).
        pod_initial_backoff / pod_max_backoff: seconds (defaults 1 and 10; max 0 disables backoff).
        pod_max_in_unschedulable_pods_duration: seconds before an unschedulable pod is retried
            regardless of events (default 300).
        pre_enqueue_plugins: ``profile -> [PreEnqueuePlugin]`` in configured order.
        queueing_hints: ``profile -> [(registered ClusterEvent, [(plugin name, hint fn | None)])]``.
        profile_of: the profile name of a pod (default ``pod.scheduler_name``); ``None`` = no
            PreEnqueue plugins and every event requeues it.
        metrics: a :class:`~kubesched.queue.metrics.QueueMetrics` recorder (default no-op).
        pod_lister: ``namespace/name -> Pod | None`` (informer copy) for the nominator.
        namespace_labels: ``namespace -> labels`` for affinity namespace selectors
            (AssignedPod events); default: no labels.
        sort_key: optional fast path, ``sort_key(qpi) -> tuple`` ordering exactly like ``less``
            (PrioritySort: ``(-priority, timestamp)``).
    """

    def __init__(
        self,
        clock: Clock,
        less: Less,
        *,
        pod_initial_backoff: float = 1.0,
        pod_max_backoff: float = 10.0,
        pod_max_in_unschedulable_pods_duration: float = 300.0,
        pre_enqueue_plugins: Mapping[str, Sequence[PreEnqueuePlugin]] | None = None,
        queueing_hints: HintMap | None = None,
        profile_of: Callable[[Pod], str | None] | None = None,
        metrics: QueueMetrics | None = None,
        pod_lister: PodLister | None = None,
        namespace_labels: Callable[[str], Mapping[str, str] | None] | None = None,
        sort_key: Callable[[QueuedPodInfo], tuple[Any, ...]] | None = None,
    ) -> None:
        self._clock = clock
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._metrics: QueueMetrics = metrics if metrics is not None else NullQueueMetrics()
        self._metrics_on = metrics is not None and not isinstance(metrics, NullQueueMetrics)
        #: the ``scheduler_pending_pods`` values last set (active, backoff, unschedulable, gated)
        self._pending_gauges: tuple[int, int, int, int] | None = None
        self._profile_of: Callable[[Pod], str | None] = profile_of or _scheduler_name
        self._max_unschedulable_duration = pod_max_in_unschedulable_pods_duration
        self._namespace_labels = namespace_labels

        if sort_key is not None:
            sk = sort_key

            def active_key(p: QueuedPodInfo, seq: int) -> Any:
                return (*sk(p), seq)
        else:

            def active_key(p: QueuedPodInfo, seq: int) -> Any:
                return LessKey(p, seq, less)

        self._active: Heap[QueuedPodInfo] = Heap(_key, active_key)
        self._backoff = BackoffQueue(clock, pod_initial_backoff, pod_max_backoff, less, sort_key)
        self._unsched = UnschedulablePods()
        self._in_flight = InFlightTracker()
        self._nominator = Nominator(pod_lister)
        self._hints = QueueingHints(queueing_hints or {}, self._profile_of, self._metrics, self._metrics_on)
        self._pre_enqueue: dict[str, list[PreEnqueuePlugin]] = {
            p: list(pls) for p, pls in (pre_enqueue_plugins or {}).items()
        }
        self._pre_enqueue_by_name: dict[str, dict[str, PreEnqueuePlugin]] = {
            p: {pl.name(): pl for pl in pls} for p, pls in self._pre_enqueue.items()
        }
        self._sched_cycle = 0
        self._closed = False
        self._running = False
        self._backoff_timer: Timer | None = None
        self._leftover_timer: Timer | None = None
        self._flush_origin = 0.0  # clock time of run(): the unschedulable flush grid starts there
        self._last_leftover = -math.inf  # time of the last unschedulable flush
        self._event_seq = 0  # cluster events received (see retries_would_repeat)

    # ------------------------------------------------------------------------------------------
    # informer-driven changes of unscheduled pods

    def add(self, pod: Pod) -> None:
        """A new unscheduled pod: PreEnqueue, then activeQ (or the gated pool); event ``UnscheduledPodAdd``."""
        with self._lock:
            self._event_seq += 1
            p = self._new_qpi(pod)
            if self._move_to_active(p, _UNSCHEDULED_POD_ADD):
                self._cond.notify_all()
            self._changed()

    def update(self, old_pod: Pod | None, new_pod: Pod) -> None:
        """An unscheduled pod changed (``pkg/scheduler/backend/queue/scheduling_queue.go``
        ``MoveAllToActiveOrBackoffQueue``): in-flight -> record the derived events; in
        activeQ/backoffQ -> update in place; in unschedulablePods -> update and evaluate the derived
        events; unknown -> add to activeQ (event ``UnscheduledPodUpdate``)."""
        with self._lock:
            self._event_seq += 1
            events = pod_scheduling_properties_change(new_pod, old_pod)
            if new_pod.uid in self._in_flight:
                for ev in events:
                    self._add_in_flight_event(ev, old_pod, new_pod)
                return
            if old_pod is not None:
                k = old_pod.key
                p = self._active.get(k)
                if p is not None:
                    _set_pod(p, new_pod)
                    self._active.add_or_update(p)
                    self._nominator.update_nominated_pod(old_pod, p.pod_info)
                    return
                p = self._backoff.update(k, new_pod)
                if p is not None:
                    self._nominator.update_nominated_pod(old_pod, p.pod_info)
                    return
            p = self._unsched.get(new_pod.key)
            if p is not None:
                _set_pod(p, new_pod)
                self._unsched.reindex(p)
                self._nominator.update_nominated_pod(old_pod, p.pod_info)
                for ev in events:
                    strategy = self._hints.worth_requeuing(p, ev, old_pod, new_pod)
                    queue = self._requeue(p, strategy, _label(ev))
                    if queue != UNSCHEDULABLE:
                        self._unsched.delete(p.key)
                    if queue in (ACTIVE, BACKOFF):
                        self._cond.notify_all()
                        break
                self._changed()
                return
            p = self._new_qpi(new_pod)
            if self._move_to_active(p, _UNSCHEDULED_POD_UPDATE):
                self._cond.notify_all()
            self._changed()

    def delete(self, pod: Pod) -> None:
        """An unscheduled pod was deleted: forget its nomination and remove it from whichever
        sub-queue holds it (an in-flight pod is not affected)."""
        with self._lock:
            self._event_seq += 1
            self._nominator.delete_nominated_pod_if_exists(pod)
            k = pod.key
            if self._active.delete(k) is None and self._backoff.delete(k) is None:
                self._unsched.delete(k)
            self._changed()

    # ------------------------------------------------------------------------------------------
    # scheduling loop

    def pop(self) -> QueuedPodInfo | None:
        """Non-blocking pop: the activeQ head, else the regular backoffQ head even if it is still
        backing off (``PopFromBackoffQ``), else ``None``. The pod becomes in flight; ``attempts``
        and the scheduling cycle are incremented and its rejector plugin sets cleared."""
        with self._lock:
            p = self._pop_locked()
            if p is not None:
                self._changed()
            return p

    def pop_blocking(self, timeout: float | None = None) -> QueuedPodInfo | None:
        """Like :meth:`pop` but waits (real time, at most ``timeout`` seconds; ``None`` = forever)
        for a pod. Returns ``None`` on timeout or once the queue is closed and empty."""
        with self._cond:
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                p = self._pop_locked()
                if p is not None:
                    self._changed()
                    return p
                if self._closed:
                    return None
                if deadline is None:
                    self._cond.wait()
                else:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return None
                    self._cond.wait(remaining)

    def done(self, uid: str) -> None:
        """The pod's scheduling (and binding) attempt is over: stop tracking it as in flight and
        prune events no in-flight pod needs."""
        with self._lock:
            self._done_locked(uid)

    def scheduling_cycle(self) -> int:
        """Number of pods popped so far."""
        with self._lock:
            return self._sched_cycle

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo, scheduling_cycle: int) -> None:
        """Requeue a pod after a failed attempt (``pkg/scheduler/backend/queue/scheduling_queue.go``
        ``AddUnschedulableIfNotPresent``; ``scheduling_cycle`` is informational).

        Bumps ``consecutive_errors_count`` (no rejector plugins) or ``unschedulable_count``,
        refreshes ``timestamp``, then places the pod by the strategy derived from the events seen
        while it was in flight. Always ends the pod's flight (``done``).

        Raises :class:`QueueError` if the pod is already in a sub-queue.
        """
        with self._lock:
            try:
                k = qpi.key
                if k in self._unsched:
                    raise QueueError(f"Pod {k} is already present in unschedulable queue")
                if k in self._active:
                    raise QueueError(f"Pod {k} is already present in the active queue")
                if k in self._backoff:
                    raise QueueError(f"Pod {k} is already present in the backoff queue")
                rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
                if not rejectors:
                    qpi.consecutive_errors_count += 1
                else:
                    qpi.unschedulable_count += 1
                    qpi.consecutive_errors_count = 0
                qpi.timestamp = self._clock.now()
                qpi.backoff_expiration = None
                if self._metrics_on:
                    profile = qpi.pod.scheduler_name
                    for plugin in sorted(rejectors):
                        self._metrics.inc(UNSCHEDULABLE_PODS, {"plugin": plugin, "profile": profile}, 1)
                strategy = self._strategy_for_in_flight(qpi)
                queue = self._requeue(qpi, strategy, SCHEDULE_ATTEMPT_FAILURE)
                if queue in (ACTIVE, BACKOFF):
                    self._cond.notify_all()
            finally:
                self._done_locked(qpi.pod.uid)
                self._changed()

    # ------------------------------------------------------------------------------------------
    # cluster events

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old_obj: Any = None,
        new_obj: Any = None,
        pre_check: Callable[[Pod], bool] | None = None,
    ) -> None:
        """A cluster event (``pkg/scheduler/backend/queue/scheduling_queue.go``
        ``MoveAllToActiveOrBackoffQueue``): re-evaluate unschedulable pods (optionally only those
        passing ``pre_check(pod)``) through the queueing hints and move the worthy ones.
        No-op when no profile registered a matching event (and it is not the wildcard)."""
        with self._lock:
            self._event_seq += 1
            self._move_all_locked(event, old_obj, new_obj, pre_check)
            self._changed()

    def assigned_pod_added(self, pod: Pod) -> None:
        """A bound pod appeared (``AssignedPodAdd``): only unschedulable pods rejected by
        PodTopologySpread in the same namespace, or with a required affinity term matching
        ``pod``, are considered."""
        with self._lock:
            self._event_seq += 1
            if self._hints.is_event_of_interest(ASSIGNED_POD_ADD):
                self._move_pods(self._cross_topology_pods(pod), ASSIGNED_POD_ADD, None, pod)
                self._changed()

    def assigned_pod_updated(self, old_pod: Pod | None, new_pod: Pod, event: ClusterEvent) -> None:
        """A bound pod changed with derived ``event``: a scale-down considers every unschedulable
        pod, other updates only the cross-topology candidates (as :meth:`assigned_pod_added`)."""
        with self._lock:
            self._event_seq += 1
            if _POD_SCALE_DOWN.match(event):
                self._move_all_locked(event, old_pod, new_pod, None)
            elif self._hints.is_event_of_interest(event):
                self._move_pods(self._cross_topology_pods(new_pod), event, old_pod, new_pod)
            self._changed()

    def activate(self, pods: Mapping[str, Pod]) -> None:
        """Move the given pods (``namespace/name -> Pod``) from unschedulablePods/backoffQ to
        activeQ (event ``ForceActivate``); an in-flight pod gets a targeted wildcard event instead."""
        with self._lock:
            self._event_seq += 1
            activated = False
            for pod in pods.values():
                if self._activate_one(pod):
                    activated = True
                    continue
                if pod.uid in self._in_flight:
                    self._add_in_flight_event(EVENT_FORCE_ACTIVATE, None, pod)
            if activated:
                self._cond.notify_all()
            self._changed()

    # ------------------------------------------------------------------------------------------
    # background loops

    def flush_backoff_q_completed(self) -> None:
        """Move every pod whose backoff completed (both heaps) to activeQ (``BackoffComplete``;
        PreEnqueue is not re-run)."""
        with self._lock:
            activated = False
            for p in self._backoff.pop_all_completed():
                if self._move_to_active(p, BACKOFF_COMPLETE):
                    activated = True
            if activated:
                self._cond.notify_all()
            self._changed()

    def flush_unschedulable_pods_leftover(self) -> None:
        """Retry pods that stayed unschedulable longer than the maximum duration (wildcard event
        ``UnschedulableTimeout``)."""
        with self._lock:
            now = self._clock.now()
            limit = self._max_unschedulable_duration
            to_move = [p for p in self._unsched.values() if now - p.timestamp > limit]
            if to_move:
                self._move_pods(to_move, EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
                self._changed()

    def run(self) -> None:
        """Start the two background loops on the clock (``pkg/scheduler/backend/queue/scheduling_queue.go``
        ``Run``: ``flushBackoffQCompleted`` every second, ``flushUnschedulablePodsLeftover`` every
        30 s).

        A flush that has nothing to do does nothing, so each loop's timer is armed only while its
        sub-queue holds pods, at the tick that can do something: the backoff flush at the first
        whole second after the earliest backoff expiry (``floor(expiry) + 1``, at least the next
        whole second; a timer that keeps a virtual-time run going, since a pod waits for it), the
        unschedulable flush at the next point of a 30 s grid starting now, while unschedulable
        (not gated) pods exist (a daemon timer: the flush of a pod nobody waits for does not keep a
        run alive). Timer phases: :attr:`~kubesched.clock.Phase.BACKOFF_FLUSH`,
        :attr:`~kubesched.clock.Phase.UNSCHEDULABLE_FLUSH`.
        """
        with self._lock:
            if self._running or self._closed:
                return
            self._running = True
            self._flush_origin = self._clock.now()
            self._arm_flushes()

    def close(self) -> None:
        """Stop the loops and wake every :meth:`pop_blocking` waiter."""
        with self._lock:
            self._closed = True
            for t in (self._backoff_timer, self._leftover_timer):
                if t is not None:
                    t.cancel()
            self._backoff_timer = self._leftover_timer = None
            self._cond.notify_all()

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._closed

    # ------------------------------------------------------------------------------------------
    # nominator

    def add_nominated_pod(self, pod_info: PodInfo, nominating_info: NominatingInfo | None) -> None:
        """See :meth:`Nominator.add_nominated_pod`."""
        with self._lock:
            self._nominator.add_nominated_pod(pod_info, nominating_info)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        """See :meth:`Nominator.delete_nominated_pod_if_exists`."""
        with self._lock:
            self._nominator.delete_nominated_pod_if_exists(pod)

    def update_nominated_pod(self, old_pod: Pod | None, new_pod_info: PodInfo) -> None:
        """See :meth:`Nominator.update_nominated_pod`."""
        with self._lock:
            self._nominator.update_nominated_pod(old_pod, new_pod_info)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """PodInfos nominated to ``node_name``, resolved to the queued version of each pod when
        it is in a sub-queue (otherwise the PodInfo given at nomination)."""
        with self._lock:
            out = []
            for pi in self._nominator.nominated_pods_for_node(node_name):
                k = pi.pod.key
                q = self._active.get(k) or self._unsched.get(k) or self._backoff.get(k)
                out.append(q.pod_info if q is not None and q.pod.uid == pi.pod.uid else pi)
            return out

    def nominated_node_names(self) -> list[str]:
        """Names of the nodes that have nominated pods (lets the vectorised filter path route
        exactly those nodes through the nominated-pods filter)."""
        with self._lock:
            return self._nominator.nominated_node_names()

    @property
    def nominator(self) -> Nominator:
        """The nominator (not locked: use the queue's methods from other threads)."""
        return self._nominator

    # ------------------------------------------------------------------------------------------
    # introspection

    def pending_pods(self) -> tuple[list[Pod], str]:
        """All queued pods (activeQ, backoffQ, unschedulablePods) and the summary
        ``activeQ:<n>; backoffQ:<n>; unschedulablePods:<n>`` (gated pods count as unschedulable)."""
        with self._lock:
            active = [p.pod for p in self._active.items()]
            backoff = [p.pod for p in self._backoff.items()]
            unsched = [p.pod for p in self._unsched.values()]
            summary = f"activeQ:{len(active)}; backoffQ:{len(backoff)}; unschedulablePods:{len(unsched)}"
            return active + backoff + unsched, summary

    def retries_would_repeat(self) -> bool:
        """Whether the only queued work is pods in backoff whose last attempt failed with an error
        (no rejector plugin) and started after the last cluster event this queue received: nothing
        is in activeQ or in flight, so retrying them meets the cluster exactly as their last attempt
        did. A run on virtual time ends there instead of retrying for ever (on wall time upstream
        keeps retrying, and so does ``run``)."""
        with self._lock:
            if not len(self._backoff) or len(self._active) or len(self._in_flight):
                return False
            seq = self._event_seq
            return all(
                p.consecutive_errors_count > 0 and p.event_seq_at_pop == seq for p in self._backoff.items()
            )

    def len_active(self) -> int:
        """Pods in activeQ."""
        return len(self._active)

    def len_backoff(self) -> int:
        """Pods in both backoff heaps."""
        return len(self._backoff)

    def len_unschedulable(self) -> int:
        """Pods in unschedulablePods that are not gated."""
        return self._unsched.unschedulable_count

    def len_gated(self) -> int:
        """Gated pods (held in unschedulablePods)."""
        return self._unsched.gated_count

    def in_flight_count(self) -> int:
        """Pods popped and not yet ``done``."""
        return len(self._in_flight)

    def next_backoff_expiry(self) -> float | None:
        """Earliest window-aligned backoff expiration across both heaps (seconds), or ``None``.
        The backoff flush releases that pod at its first tick ``t`` with ``floor(t) > expiry``."""
        with self._lock:
            return self._backoff.next_expiry()

    def unschedulable_pods_info(self) -> list[QueuedPodInfo]:
        """Entries of unschedulablePods (including gated ones), insertion order."""
        with self._lock:
            return self._unsched.values()

    def is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        """Whether ``qpi`` is still within its backoff (``expiration >= floor(now)``)."""
        with self._lock:
            return self._backoff.is_backing_off(qpi)

    def backoff_expiration(self, qpi: QueuedPodInfo) -> float | None:
        """The window-aligned backoff expiration of ``qpi`` (``None`` when never penalised)."""
        with self._lock:
            t = self._backoff.backoff_time(qpi)
            return None if t == -math.inf else t

    def get(self, key: str) -> QueuedPodInfo | None:
        """The queued entry for ``namespace/name`` in any sub-queue (not in-flight pods)."""
        with self._lock:
            return self._active.get(key) or self._backoff.get(key) or self._unsched.get(key)

    # ------------------------------------------------------------------------------------------
    # internals (lock held)

    def _new_qpi(self, pod: Pod) -> QueuedPodInfo:
        return QueuedPodInfo(PodInfo(pod), timestamp=self._clock.now())

    def _pop_locked(self) -> QueuedPodInfo | None:
        while True:
            p = self._active.pop()
            if p is None:
                p = self._backoff.pop_regular()
                if p is None:
                    return None
                self._incoming(ACTIVE, POP_FROM_BACKOFF_Q)
            p.attempts += 1
            p.event_seq_at_pop = self._event_seq
            uid = p.pod.uid
            if uid in self._in_flight:
                _log.error(
                    "the same pod %s is tracked in multiple places in the scheduler; discarding it", p.key
                )
                continue
            self._in_flight.pop_marker(uid)
            self._sched_cycle += 1
            if self._metrics_on:
                self._metrics.inc(INFLIGHT_EVENTS, {"event": POD_POPPED}, 1)
                profile = p.pod.scheduler_name
                for plugin in sorted(p.unschedulable_plugins | p.pending_plugins):
                    self._metrics.inc(UNSCHEDULABLE_PODS, {"plugin": plugin, "profile": profile}, -1)
            p.unschedulable_plugins = set()
            p.pending_plugins = set()
            p.gating_plugin = ""
            p.gating_plugin_events = []
            return p

    def _done_locked(self, uid: str) -> None:
        was_in_flight = uid in self._in_flight
        pruned = self._in_flight.done(uid)
        if self._metrics_on:
            if was_in_flight:
                self._metrics.inc(INFLIGHT_EVENTS, {"event": POD_POPPED}, -1)
            for e in pruned:
                self._metrics.inc(INFLIGHT_EVENTS, {"event": _label(e.event)}, -1)

    def _add_in_flight_event(self, event: ClusterEvent, old: Any, new: Any) -> None:
        if self._in_flight.add_event(event, old, new) and self._metrics_on:
            self._metrics.inc(INFLIGHT_EVENTS, {"event": _label(event)}, 1)

    def _strategy_for_in_flight(self, p: QueuedPodInfo) -> QueueingStrategy:
        """``determineSchedulingHintForInFlightPod``."""
        if not has_rejectors(p):
            return QueueingStrategy.AFTER_BACKOFF
        events = self._in_flight.events_since(p.pod.uid)
        if events is None:
            _log.error("in-flight pod %s isn't found in the scheduling queue", p.key)
            return QueueingStrategy.AFTER_BACKOFF
        strategy = QueueingStrategy.SKIP
        for e in events:
            s = self._hints.worth_requeuing(p, e.event, e.old_obj, e.new_obj)
            if s == QueueingStrategy.SKIP:
                continue
            if s == QueueingStrategy.IMMEDIATELY:
                return s
            strategy = QueueingStrategy.AFTER_BACKOFF
            if not p.pending_plugins:
                return strategy
        return strategy

    def _move_all_locked(
        self, event: ClusterEvent, old: Any, new: Any, pre_check: Callable[[Pod], bool] | None
    ) -> None:
        interested = self._hints.interested_plugins(event)
        if interested is None:
            return
        if event.is_wildcard():
            candidates = self._unsched.values()
        else:
            candidates = self._unsched.rejected_by(interested)
        if pre_check is not None:
            candidates = [p for p in candidates if pre_check(p.pod)]
        self._move_pods(candidates, event, old, new)

    def _move_pods(self, pods: list[QueuedPodInfo], event: ClusterEvent, old: Any, new: Any) -> None:
        """``movePodsToActiveOrBackoffQueue``."""
        if not self._hints.is_event_of_interest(event):
            return
        activated = False
        label = _label(event)
        for p in pods:
            if p.gating_plugin and not any(ev.match(event) for ev in p.gating_plugin_events):
                continue
            strategy = self._hints.worth_requeuing(p, event, old, new)
            if strategy == QueueingStrategy.SKIP:
                continue
            self._unsched.delete(p.key)
            if self._requeue(p, strategy, label) in (ACTIVE, BACKOFF):
                activated = True
        self._add_in_flight_event(event, old, new)
        if activated:
            self._cond.notify_all()

    def _cross_topology_pods(self, pod: Pod) -> list[QueuedPodInfo]:
        """``getUnschedulablePodsWithCrossTopologyTerm``."""
        candidates = self._unsched.cross_topology_candidates()
        if not candidates:
            return candidates
        ns_labels = (
            self._namespace_labels(pod.namespace) if self._namespace_labels is not None else None
        ) or {}
        out = []
        for p in candidates:
            if POD_TOPOLOGY_SPREAD in p.unschedulable_plugins and p.pod.namespace == pod.namespace:
                out.append(p)
                continue
            for term in p.pod_info.required_affinity_terms:
                if term.matches(pod, ns_labels):
                    out.append(p)
                    break
        return out

    def _activate_one(self, pod: Pod) -> bool:
        k = pod.key
        p = self._unsched.get(k)
        if p is None:
            p = self._backoff.delete(k)
            if p is None:
                return False
        return self._move_to_active(p, FORCE_ACTIVATE)

    def _requeue(self, p: QueuedPodInfo, strategy: QueueingStrategy, event: str) -> str:
        """``requeuePodWithQueueingStrategy``; returns the queue label the pod ended in."""
        if strategy == QueueingStrategy.SKIP:
            self._add_unschedulable(p, event)
            return UNSCHEDULABLE
        if strategy == QueueingStrategy.AFTER_BACKOFF and self._backoff.is_backing_off(p):
            return BACKOFF if self._move_to_backoff(p, event) else UNSCHEDULABLE
        return ACTIVE if self._move_to_active(p, event) else UNSCHEDULABLE

    def _move_to_active(self, p: QueuedPodInfo, event: str) -> bool:
        if event != BACKOFF_COMPLETE:
            self._run_pre_enqueue(p)
        k = p.key
        if p.gating_plugin:
            if k in self._active or k in self._backoff:
                return False
            existing = self._unsched.get(k)
            if existing is not None:
                if existing is p:
                    self._unsched.reindex(p)
                return False
            self._add_unschedulable(p, event)
            return False
        if p.initial_attempt_timestamp is None:
            p.initial_attempt_timestamp = self._clock.now()
        self._active.add_or_update(p)
        self._incoming(ACTIVE, event)
        self._unsched.delete(k)
        self._backoff.delete(k)
        if event in _NOMINATE_ON:
            self._nominator.add_nominated_pod(p.pod_info, None)
        return True

    def _move_to_backoff(self, p: QueuedPodInfo, event: str) -> bool:
        self._run_pre_enqueue(p)
        if p.gating_plugin:
            existing = self._unsched.get(p.key)
            if existing is None:
                self._add_unschedulable(p, event)
            elif existing is p:
                self._unsched.reindex(p)
            return False
        self._backoff.add(p)
        self._incoming(BACKOFF, event)
        return True

    def _add_unschedulable(self, p: QueuedPodInfo, event: str) -> None:
        if self._unsched.add_or_update(p):
            self._incoming(GATED if p.gating_plugin else UNSCHEDULABLE, event)

    def _run_pre_enqueue(self, p: QueuedPodInfo) -> None:
        """``runPreEnqueuePlugins``: the previous gating plugin first, then the others in order;
        the first non-Success gates the pod."""
        pod = p.pod
        profile = self._profile_of(pod)
        plugins = self._pre_enqueue.get(profile) if profile is not None else None
        if not plugins:
            p.gating_plugin = ""
            return
        start = time.perf_counter() if self._metrics_on else 0.0
        code = Code.Success
        gating = p.gating_plugin
        try:
            if gating:
                pl = self._pre_enqueue_by_name[profile].get(gating)  # type: ignore[index]
                if pl is not None:
                    code = self._run_pre_enqueue_plugin(pl, p)
                    if code != Code.Success:
                        return
            for pl in plugins:
                if gating and pl.name() == gating:
                    continue
                code = self._run_pre_enqueue_plugin(pl, p)
                if code != Code.Success:
                    return
            p.gating_plugin = ""
            p.gating_plugin_events = []
        finally:
            if self._metrics_on:
                self._metrics.observe(
                    EXTENSION_POINT_DURATION,
                    {"extension_point": "PreEnqueue", "status": str(code), "profile": pod.scheduler_name},
                    time.perf_counter() - start,
                )

    def _run_pre_enqueue_plugin(self, pl: PreEnqueuePlugin, p: QueuedPodInfo) -> Code:
        try:
            s: Status | None = pl.pre_enqueue(p.pod)
        except Exception as e:  # a crashing plugin gates the pod like an Error status
            _log.exception("PreEnqueue plugin %s failed for pod %s", pl.name(), p.key)
            s = Status(Code.Error, err=e)
        if s is None or s.code == Code.Success:
            return Code.Success
        name = pl.name()
        if name not in p.unschedulable_plugins:
            p.unschedulable_plugins.add(name)
            if self._metrics_on:
                self._metrics.inc(UNSCHEDULABLE_PODS, {"plugin": name, "profile": p.pod.scheduler_name}, 1)
        p.gating_plugin = name
        p.gating_plugin_events = self._hints.plugin_events.get(name, [])
        return s.code

    def _incoming(self, queue: str, event: str) -> None:
        if self._metrics_on:
            self._metrics.inc(QUEUE_INCOMING_PODS, {"queue": queue, "event": event}, 1)

    def _changed(self) -> None:
        """After a change of the sub-queues: the pending-pods gauges and the flush timers."""
        if self._running:
            self._arm_flushes()
        if self._metrics_on:
            sizes = (
                len(self._active),
                len(self._backoff),
                self._unsched.unschedulable_count,
                self._unsched.gated_count,
            )
            last = self._pending_gauges
            if sizes == last:
                return
            self._pending_gauges = sizes
            m = self._metrics
            for i, queue in enumerate(_PENDING_QUEUES):  # only the sub-queues whose size changed
                if last is None or sizes[i] != last[i]:
                    m.set(PENDING_PODS, {"queue": queue}, sizes[i])

    def _arm_flushes(self) -> None:
        """(Re)arm or cancel the two flush timers for the current sub-queues (lock held; see :meth:`run`)."""
        if self._closed:
            return
        backoff, timer = len(self._backoff), self._backoff_timer
        if (
            not backoff
            and timer is None
            and self._leftover_timer is None
            and not self._unsched.unschedulable_count
        ):
            return  # nothing to flush, nothing armed (the common case: keep it cheap)
        clock = self._clock
        now = clock.now()
        if backoff == 0:
            if timer is not None:
                timer.cancel()
                self._backoff_timer = None
        else:
            next_second = math.floor(now) + 1
            expiry = self._backoff.next_expiry()
            tick = math.floor(expiry) + 1 if expiry is not None and math.isfinite(expiry) else next_second
            due = float(max(tick, next_second))
            if timer is None or timer.when != due:
                if timer is not None:
                    timer.cancel()
                self._backoff_timer = clock.call_at(due, self._backoff_tick, phase=Phase.BACKOFF_FLUSH)
        timer = self._leftover_timer
        if self._unsched.unschedulable_count == 0:
            # a flush due right now still runs (it finds nothing): its grid point counts as flushed
            if timer is not None and timer.when > now:
                timer.cancel()
                self._leftover_timer = None
        elif timer is None:
            origin, period = self._flush_origin, UNSCHEDULABLE_FLUSH_PERIOD
            k = math.ceil((now - origin) / period)
            if origin + k * period <= self._last_leftover:
                k += 1
            self._leftover_timer = clock.call_at(
                origin + k * period, self._leftover_tick, daemon=True, phase=Phase.UNSCHEDULABLE_FLUSH
            )

    def _backoff_tick(self) -> None:
        with self._lock:
            self._backoff_timer = None
            if self._closed:
                return
            self.flush_backoff_q_completed()
            self._arm_flushes()

    def _leftover_tick(self) -> None:
        with self._lock:
            timer, self._leftover_timer = self._leftover_timer, None
            if self._closed:
                return
            self._last_leftover = timer.when if timer is not None else self._clock.now()
            self.flush_unschedulable_pods_leftover()
            self._arm_flushes()


def _key(p: QueuedPodInfo) -> str:
    return p.pod_info.pod.key


def _scheduler_name(pod: Pod) -> str | None:
    return pod.scheduler_name


def _set_pod(p: QueuedPodInfo, pod: Pod) -> None:
    """``QueuedPodInfo.Update``: swap in the new pod (re-deriving affinity terms)."""
    if p.pod_info.pod is not pod:
        p.pod_info = PodInfo(pod)
