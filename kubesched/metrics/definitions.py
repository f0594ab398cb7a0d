"""The scheduler's Prometheus metrics: names, types, labels, buckets and help texts as upstream
registers them (``pkg/scheduler/metrics/metrics.go``, ``pkg/scheduler/metrics/profile_metrics.go``).

Help texts carry component-base's stability prefix (``[STABLE] ``/``[BETA] ``/``[ALPHA] ``), as
``kube-scheduler``'s ``/metrics`` shows them. Bucket layouts are ``ExponentialBuckets(start, factor, count)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

MetricType = Literal["counter", "gauge", "histogram"]


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """``prometheus.ExponentialBuckets``: ``count`` upper bounds ``start * factor**i``."""
    return tuple(start * factor**i for i in range(count))


@dataclass(frozen=True)
class MetricSpec:
    """One metric: full ``name`` (with the ``scheduler_`` subsystem), ``type``, label names in
    upstream order, histogram ``buckets`` (seconds for durations) and ``help`` text."""

    name: str
    type: MetricType
    labels: tuple[str, ...]
    help: str
    buckets: tuple[float, ...] = ()


SCHEDULE_ATTEMPTS: Final = "scheduler_schedule_attempts_total"
SCHEDULING_ATTEMPT_DURATION: Final = "scheduler_scheduling_attempt_duration_seconds"
SCHEDULING_ALGORITHM_DURATION: Final = "scheduler_scheduling_algorithm_duration_seconds"
PENDING_PODS: Final = "scheduler_pending_pods"
QUEUE_INCOMING_PODS: Final = "scheduler_queue_incoming_pods_total"
EXTENSION_POINT_DURATION: Final = "scheduler_framework_extension_point_duration_seconds"
PLUGIN_EXECUTION_DURATION: Final = "scheduler_plugin_execution_duration_seconds"
PLUGIN_EVALUATION_TOTAL: Final = "scheduler_plugin_evaluation_total"
QUEUEING_HINT_DURATION: Final = "scheduler_queueing_hint_execution_duration_seconds"
EVENT_HANDLING_DURATION: Final = "scheduler_event_handling_duration_seconds"
INFLIGHT_EVENTS: Final = "scheduler_inflight_events"
UNSCHEDULABLE_PODS: Final = "scheduler_unschedulable_pods"
PREEMPTION_ATTEMPTS: Final = "scheduler_preemption_attempts_total"
PREEMPTION_VICTIMS: Final = "scheduler_preemption_victims"
PREEMPTION_GOROUTINES_DURATION: Final = "scheduler_preemption_goroutines_duration_seconds"
PREEMPTION_GOROUTINES_EXECUTION: Final = "scheduler_preemption_goroutines_execution_total"
POD_SCHEDULING_SLI_DURATION: Final = "scheduler_pod_scheduling_sli_duration_seconds"
POD_SCHEDULING_ATTEMPTS: Final = "scheduler_pod_scheduling_attempts"
PERMIT_WAIT_DURATION: Final = "scheduler_permit_wait_duration_seconds"
CACHE_SIZE: Final = "scheduler_scheduler_cache_size"
GOROUTINES: Final = "scheduler_goroutines"
BATCH_ATTEMPTS: Final = "scheduler_batch_attempts_total"
BATCH_CACHE_FLUSHED: Final = "scheduler_batch_cache_flushed_total"
GET_NODE_HINT_DURATION: Final = "scheduler_get_node_hint_duration_seconds"
STORE_SCHEDULE_RESULTS_DURATION: Final = "scheduler_store_schedule_results_duration_seconds"

#: ``result`` label values of ``schedule_attempts_total`` / ``scheduling_attempt_duration_seconds``
SCHEDULED: Final = "scheduled"
UNSCHEDULABLE: Final = "unschedulable"
ERROR: Final = "error"

#: ``scheduler_goroutines{operation}`` values
BINDING: Final = "binding"
PRIORITIZING_EXTENDER: Final = "prioritizing_extender"

_EXP_1MS_15 = exponential_buckets(0.001, 2, 15)

METRICS: Final[tuple[MetricSpec, ...]] = (
    MetricSpec(
        SCHEDULE_ATTEMPTS,
        "counter",
        ("result", "profile"),
        "[STABLE] Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not "
        "be scheduled, while 'error' means an internal scheduler problem.",
    ),
    MetricSpec(
        SCHEDULING_ATTEMPT_DURATION,
        "histogram",
        ("result", "profile"),
        "[STABLE] Scheduling attempt latency in seconds (scheduling algorithm + binding)",
        _EXP_1MS_15,
    ),
    MetricSpec(
        SCHEDULING_ALGORITHM_DURATION,
        "histogram",
        (),
        "[ALPHA] Scheduling algorithm latency in seconds",
        _EXP_1MS_15,
    ),
    MetricSpec(
        PENDING_PODS,
        "gauge",
        ("queue",),
        "[STABLE] Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
        "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
        "unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number of "
        "unschedulable pods that the scheduler never attempted to schedule because they are gated.",
    ),
    MetricSpec(
        QUEUE_INCOMING_PODS,
        "counter",
        ("queue", "event"),
        "[STABLE] Number of pods added to scheduling queues by event and queue type.",
    ),
    MetricSpec(
        EXTENSION_POINT_DURATION,
        "histogram",
        ("extension_point", "status", "profile"),
        "[STABLE] Latency for running all plugins of a specific extension point.",
        exponential_buckets(0.0001, 2, 12),
    ),
    MetricSpec(
        PLUGIN_EXECUTION_DURATION,
        "histogram",
        ("plugin", "extension_point", "status"),
        "[ALPHA] Duration for running a plugin at a specific extension point.",
        exponential_buckets(0.00001, 1.5, 20),
    ),
    MetricSpec(
        PLUGIN_EVALUATION_TOTAL,
        "counter",
        ("plugin", "extension_point", "profile"),
        "[ALPHA] Number of attempts to schedule pods by each plugin and the extension point (available only "
        "in PreFilter, Filter, PreScore, and Score).",
    ),
    MetricSpec(
        QUEUEING_HINT_DURATION,
        "histogram",
        ("plugin", "event", "hint"),
        "[ALPHA] Duration for running a queueing hint function of a plugin.",
        exponential_buckets(0.00001, 1.5, 20),
    ),
    MetricSpec(
        EVENT_HANDLING_DURATION,
        "histogram",
        ("event",),
        "[ALPHA] Event handling latency in seconds.",
        exponential_buckets(0.0001, 2, 12),
    ),
    MetricSpec(
        INFLIGHT_EVENTS,
        "gauge",
        ("event",),
        "[ALPHA] Number of events currently tracked in the scheduling queue.",
    ),
    MetricSpec(
        UNSCHEDULABLE_PODS,
        "gauge",
        ("plugin", "profile"),
        "[ALPHA] The number of unschedulable pods broken down by plugin name. A pod will increment the gauge "
        "for all plugins that caused it to not schedule and so this metric have meaning only when broken "
        "down by plugin.",
    ),
    MetricSpec(
        PREEMPTION_ATTEMPTS, "counter", (), "[STABLE] Total preemption attempts in the cluster till now"
    ),
    MetricSpec(
        PREEMPTION_VICTIMS,
        "histogram",
        (),
        "[STABLE] Number of selected preemption victims",
        exponential_buckets(1, 2, 7),
    ),
    MetricSpec(
        PREEMPTION_GOROUTINES_DURATION,
        "histogram",
        ("result",),
        "[ALPHA] Duration in seconds for running goroutines for the preemption.",
        exponential_buckets(0.01, 2, 20),
    ),
    MetricSpec(
        PREEMPTION_GOROUTINES_EXECUTION,
        "counter",
        ("result",),
        "[ALPHA] Number of preemption goroutines executed.",
    ),
    MetricSpec(
        POD_SCHEDULING_SLI_DURATION,
        "histogram",
        ("attempts",),
        "[BETA] E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and "
        "might involve multiple scheduling attempts.",
        exponential_buckets(0.01, 2, 20),
    ),
    MetricSpec(
        POD_SCHEDULING_ATTEMPTS,
        "histogram",
        (),
        "[STABLE] Number of attempts to successfully schedule a pod.",
        exponential_buckets(1, 2, 5),
    ),
    MetricSpec(
        PERMIT_WAIT_DURATION, "histogram", ("result",), "[ALPHA] Duration of waiting on permit.", _EXP_1MS_15
    ),
    MetricSpec(
        CACHE_SIZE,
        "gauge",
        ("type",),
        "[ALPHA] Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
    ),
    MetricSpec(
        GOROUTINES,
        "gauge",
        ("operation",),
        "[ALPHA] Number of running goroutines split by the work they do such as binding.",
    ),
    MetricSpec(
        BATCH_ATTEMPTS,
        "counter",
        ("profile", "result"),
        "[ALPHA] Counts of results when we attempt to use batching.",
    ),
    MetricSpec(
        BATCH_CACHE_FLUSHED,
        "counter",
        ("profile", "reason"),
        "[ALPHA] Counts of cache flushes by reason.",
    ),
    MetricSpec(
        GET_NODE_HINT_DURATION,
        "histogram",
        ("hinted", "profile"),
        "[ALPHA] Latency for getting a node hint.",
        exponential_buckets(0.00001, 2, 12),
    ),
    MetricSpec(
        STORE_SCHEDULE_RESULTS_DURATION,
        "histogram",
        ("profile",),
        "[ALPHA] Latency for getting a no.",
        exponential_buckets(0.00001, 2, 12),
    ),
)
"""Every metric kubesched exports, in upstream registration order."""

BY_NAME: Final[dict[str, MetricSpec]] = {m.name: m for m in METRICS}


def attempts_label(attempts: int) -> str:
    """``getAttemptsLabel``: the attempt count as a string, ``15+`` from 15 on."""
    return "15+" if attempts >= 15 else str(attempts)
