"""Prometheus metrics (``pkg/scheduler/metrics/metrics.go``): a small simulate-style run with metrics on,
read back from
``prometheus_client.generate_latest``."""

from __future__ import annotations

import prometheus_client
from prometheus_client import CollectorRegistry, generate_latest

from kubesched.clock import VirtualClock
from kubesched.config.types import (
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    Plugin,
    Plugins,
    PluginSet,
)
from kubesched.embedded.store import MemoryCluster
from kubesched.framework.runtime import Framework
from kubesched.metrics import METRICS, SchedulerMetrics, attempts_label, exponential_buckets
from kubesched.scheduler.core import Scheduler
from kubesched.scheduler.factory import new_scheduler
from kubesched.testing import node_manifest, pod_manifest

NAMES = ["PrioritySort", "NodeResourcesFit", "DefaultPreemption", "DefaultBinder"]
PROFILE = 'profile="default-scheduler"'


def run(metrics: SchedulerMetrics | None) -> Scheduler:
    clock = VirtualClock(1_700_000_000.0)
    mc = MemoryCluster(clock)
    for n in ("n1", "n2"):
        mc.create(node_manifest(n, cpu="4"))
    prof = KubeSchedulerProfile(
        scheduler_name="default-scheduler",
        plugins=Plugins(
            multi_point=PluginSet(enabled=[Plugin(name=n) for n in NAMES], disabled=[Plugin(name="*")])
        ),
    )
    sched = new_scheduler(
        mc, KubeSchedulerConfiguration(profiles=[prof]), clock=clock, seed=0, metrics=metrics
    )
    sched.start()
    for p in (pod_manifest("a", cpu="1"), pod_manifest("b", cpu="1"), pod_manifest("big", cpu="10")):
        mc.create(p)
    while sched.schedule_next():
        pass
    return sched


def samples(reg: CollectorRegistry) -> dict[str, float]:
    out = {}
    for line in generate_latest(reg).decode().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def test_run_with_metrics_exports_upstream_names_labels_and_values() -> None:
    reg = CollectorRegistry()
    run(SchedulerMetrics(reg))
    s = samples(reg)
    expected = {
        f'scheduler_schedule_attempts_total{{{PROFILE},result="scheduled"}}': 2,
        f'scheduler_schedule_attempts_total{{{PROFILE},result="unschedulable"}}': 1,
        f'scheduler_scheduling_attempt_duration_seconds_count{{{PROFILE},result="scheduled"}}': 2,
        f'scheduler_scheduling_attempt_duration_seconds_count{{{PROFILE},result="unschedulable"}}': 1,
        "scheduler_scheduling_algorithm_duration_seconds_count": 2,
        'scheduler_pending_pods{queue="unschedulable"}': 1,
        'scheduler_pending_pods{queue="active"}': 0,
        'scheduler_queue_incoming_pods_total{event="UnscheduledPodAdd",queue="active"}': 3,
        'scheduler_queue_incoming_pods_total{event="ScheduleAttemptFailure",queue="unschedulable"}': 1,
        f'scheduler_framework_extension_point_duration_seconds_count{{extension_point="PreFilter",{PROFILE},status="Success"}}': 3,
        f'scheduler_framework_extension_point_duration_seconds_count{{extension_point="Filter",{PROFILE},status="Success"}}': 3,
        f'scheduler_framework_extension_point_duration_seconds_count{{extension_point="Score",{PROFILE},status="Success"}}': 2,
        f'scheduler_framework_extension_point_duration_seconds_count{{extension_point="Bind",{PROFILE},status="Success"}}': 2,
        f'scheduler_framework_extension_point_duration_seconds_count{{extension_point="PostFilter",{PROFILE},status="Unschedulable"}}': 1,
        # 3 pods x 2 nodes, plus OpportunisticBatching's check of a's node for b (same signature;
        # b still fits there, so the ranking is flushed: node_not_full)
        f'scheduler_plugin_evaluation_total{{extension_point="Filter",plugin="NodeResourcesFit",{PROFILE}}}': 7,
        f'scheduler_plugin_evaluation_total{{extension_point="PreFilter",plugin="NodeResourcesFit",{PROFILE}}}': 3,
        f'scheduler_plugin_evaluation_total{{extension_point="Score",plugin="NodeResourcesFit",{PROFILE}}}': 2,
        f'scheduler_unschedulable_pods{{plugin="NodeResourcesFit",{PROFILE}}}': 1,
        "scheduler_preemption_attempts_total": 1,
        'scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"}': 2,
        "scheduler_pod_scheduling_attempts_count": 2,
        "scheduler_pod_scheduling_attempts_sum": 2,
        'scheduler_pod_scheduling_attempts_bucket{le="1.0"}': 2,
        'scheduler_scheduler_cache_size{type="pods"}': 2,
        'scheduler_scheduler_cache_size{type="nodes"}': 2,
        'scheduler_scheduler_cache_size{type="assumed_pods"}': 0,
        'scheduler_goroutines{operation="binding"}': 0,
        f'scheduler_batch_attempts_total{{{PROFILE},result="no_hint"}}': 3,
        f'scheduler_batch_cache_flushed_total{{{PROFILE},reason="node_not_full"}}': 1,
        f'scheduler_batch_cache_flushed_total{{{PROFILE},reason="pod_incompatible"}}': 1,
        f'scheduler_get_node_hint_duration_seconds_count{{hinted="no_hint",{PROFILE}}}': 3,
        f"scheduler_store_schedule_results_duration_seconds_count{{{PROFILE}}}": 2,
    }
    assert {k: s.get(k) for k in expected} == expected
    assert not [k for k in s if "_created" in k]
    # plugin durations are sampled: only in cycles with record_plugin_metrics, never more than the calls
    sampled = s.get(
        'scheduler_plugin_execution_duration_seconds_count{extension_point="Filter",'
        'plugin="NodeResourcesFit",status="Success"}',
        0.0,
    )
    assert 0 <= sampled <= 6


def test_exposition_types_help_and_buckets() -> None:
    reg = CollectorRegistry()
    SchedulerMetrics(reg).observe(
        "scheduler_framework_extension_point_duration_seconds",
        {"extension_point": "Filter", "status": "Success", "profile": "p"},
        0.00015,
    )
    text = generate_latest(reg).decode()
    for spec in METRICS:
        assert f"# TYPE {spec.name} {spec.type}" in text
        assert f"# HELP {spec.name} {spec.help}" in text
    assert "# HELP scheduler_schedule_attempts_total [STABLE] Number of attempts to schedule pods" in text
    les = [
        line.split('le="')[1].split('"')[0]
        for line in text.splitlines()
        if line.startswith("scheduler_framework_extension_point_duration_seconds_bucket")
    ]
    assert les[:3] == ["0.0001", "0.0002", "0.0004"] and les[-1] == "+Inf" and len(les) == 13
    assert (
        'scheduler_framework_extension_point_duration_seconds_bucket{extension_point="Filter",le="0.0001",'
        'profile="p",status="Success"} 0.0'
    ) in text
    assert (
        'scheduler_framework_extension_point_duration_seconds_bucket{extension_point="Filter",le="0.0002",'
        'profile="p",status="Success"} 1.0'
    ) in text


def test_default_registry_and_shared_collectors() -> None:
    a = SchedulerMetrics()
    b = SchedulerMetrics()
    a.inc("scheduler_preemption_attempts_total", {})
    b.inc("scheduler_preemption_attempts_total", {})
    text = prometheus_client.generate_latest().decode()
    assert "# TYPE scheduler_preemption_attempts_total counter" in text
    value = float(
        next(
            line.split()[1]
            for line in text.splitlines()
            if line.startswith("scheduler_preemption_attempts_total ")
        )
    )
    assert value >= 2


def test_without_metrics_nothing_is_instrumented() -> None:
    sched = run(None)
    fwk: Framework = sched.profiles["default-scheduler"]
    assert "run_pre_filter_plugins" not in vars(fwk)
    assert "find_nodes_that_pass_filters" not in vars(sched.placement)
    assert all("filter" not in vars(pl) for pl in fwk.filter_plugins)
    assert fwk.metrics is None and sched.queue._metrics_on is False


def test_helpers() -> None:
    assert [attempts_label(n) for n in (1, 14, 15, 40)] == ["1", "14", "15+", "15+"]
    assert exponential_buckets(1, 2, 5) == (1, 2, 4, 8, 16)
