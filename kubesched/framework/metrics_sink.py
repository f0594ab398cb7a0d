"""``MetricsSink``: the typed seam through which the framework runtime, placement and the
scheduler record metrics (upstream ``pkg/scheduler/metrics``: ``metricsRecorder``,
``PluginEvaluationTotal``, ``FrameworkExtensionPointDuration``, ``PluginExecutionDuration``).

The framework knows no Prometheus client: ``kubesched.metrics.SchedulerMetrics`` implements this
protocol, :data:`NULL_SINK` drops everything (``enabled`` False, so callers skip even the clock
reads). Durations are seconds; ``status`` is upstream's ``Status.Code().String()`` (``Success``
for no status).

Recording never changes what is computed: plugin evaluations are counted as upstream counts them
on its per-node path (PreFilter/PreScore per plugin run, Filter per plugin and node evaluated,
Score per non-skipped plugin and cycle) whichever path (per node or batch) ran, and plugin
execution durations are observed only in cycles whose ``CycleState.record_plugin_metrics`` is set
(upstream ``pluginMetricsSamplePercent`` = 10; a batch call is one sample covering its rows).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from kubesched.framework.status import Status

__all__ = ["NULL_SINK", "MetricsSink", "NullMetricsSink", "code_label"]


def code_label(status: Status | None) -> str:
    """Upstream ``Status.Code().String()`` of a possibly-``None`` status (``Success`` for ``None``)."""
    return "Success" if status is None else str(status.code)


class MetricsSink(Protocol):
    """Where the scheduler's metrics go. ``enabled`` False means every call is a no-op."""

    enabled: bool

    # ---- framework (``frameworkImpl`` / ``metricsRecorder``) --------------------------------------

    def extension_point_duration(self, point: str, status: str, profile: str, seconds: float) -> None:
        """``scheduler_framework_extension_point_duration_seconds{extension_point, status, profile}``."""
        ...

    def plugin_execution_duration(self, plugin: str, point: str, status: str, seconds: float) -> None:
        """``scheduler_plugin_execution_duration_seconds{plugin, extension_point, status}`` (sampled cycles)."""
        ...

    def plugin_evaluations(self, plugin: str, point: str, profile: str, count: int) -> None:
        """Add ``count`` to ``scheduler_plugin_evaluation_total{plugin, extension_point, profile}``."""
        ...

    # ---- scheduler (``schedule_one.go``, ``profile_metrics.go``) -----------------------------------

    def attempt(self, result: str, profile: str, duration: float) -> None:
        """``scheduling_attempt_duration_seconds`` + ``schedule_attempts_total`` for ``result``."""
        ...

    def pod_scheduled(
        self, profile: str, duration: float, attempts: int, since_initial: float | None
    ) -> None:
        """A successful binding (attempt ``scheduled``, attempts histogram, SLI duration)."""
        ...

    def cache_size(self, sizes: Mapping[str, int]) -> None:
        """``scheduler_scheduler_cache_size{type}``."""
        ...

    # ---- generic (the queue's ``QueueMetrics``) --------------------------------------------------

    def inc(self, name: str, labels: Mapping[str, str], amount: float = 1.0) -> None:
        """Add ``amount`` to a counter/gauge."""
        ...

    def set(self, name: str, labels: Mapping[str, str], value: float) -> None:
        """Set a gauge."""
        ...

    def observe(self, name: str, labels: Mapping[str, str], value: float) -> None:
        """Observe a histogram sample."""
        ...


class NullMetricsSink:
    """The sink of a scheduler without metrics: ``enabled`` is False and every call is a no-op."""

    enabled = False

    def extension_point_duration(self, point: str, status: str, profile: str, seconds: float) -> None:
        """No-op."""

    def plugin_execution_duration(self, plugin: str, point: str, status: str, seconds: float) -> None:
        """No-op."""

    def plugin_evaluations(self, plugin: str, point: str, profile: str, count: int) -> None:
        """No-op."""

    def attempt(self, result: str, profile: str, duration: float) -> None:
        """No-op."""

    def pod_scheduled(
        self, profile: str, duration: float, attempts: int, since_initial: float | None
    ) -> None:
        """No-op."""

    def cache_size(self, sizes: Mapping[str, int]) -> None:
        """No-op."""

    def inc(self, name: str, labels: Mapping[str, str], amount: float = 1.0) -> None:
        """No-op."""

    def set(self, name: str, labels: Mapping[str, str], value: float) -> None:
        """No-op."""

    def observe(self, name: str, labels: Mapping[str, str], value: float) -> None:
        """No-op."""


NULL_SINK: MetricsSink = NullMetricsSink()
"""The shared null sink."""
