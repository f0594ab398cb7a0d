"""``kubesched bench --api`` helpers: the objects ``serve`` loads for a workload and Prometheus'
``histogram_quantile`` on the attempt-latency buckets."""

from __future__ import annotations

import pytest

from kubesched.client.client import WatchEvent
from kubesched.modes.bench import load_workloads, select
from kubesched.modes.bench.api import (
    OP_LABEL,
    UNTAGGED,
    _BindWatch,
    fixture_plan,
    histogram_quantile,
    workload_objects,
    workload_plan,
)
from kubesched.modes.bench.simulate_fixture import SIMULATE_FIXTURES, spreading_cluster


def test_workload_objects_in_op_order_with_the_measured_op_cut() -> None:
    (w,) = select(load_workloads(None), ["SchedulingBasic/500Nodes_10000Pods"])
    objs, measured, n = workload_objects(w, measure_pods=7)
    kinds = [o["kind"] for o in objs]
    assert kinds.count("Node") == 500 and kinds.count("Pod") == 500 + 7
    assert kinds.index("Pod") > max(i for i, k in enumerate(kinds) if k == "Node")
    pods = [o for o in objs if o["kind"] == "Pod"]
    # init pods (op 1) in namespace-1 come before the measured ones (op 2), names sort in creation order
    assert [p["metadata"]["namespace"] for p in pods[:500]] == ["namespace-1"] * 500
    assert [p["metadata"]["name"] for p in pods[500:]] == [f"pod-2-{k:06d}" for k in range(7)]
    assert measured == {"2"} and n == 7
    assert {p["metadata"]["labels"][OP_LABEL] for p in pods} == {"1", "2"}
    assert [o["metadata"]["name"] for o in objs if o["kind"] == "Namespace"] == ["namespace-1", "namespace-2"]


def test_ops_from_the_first_churn_run_live() -> None:
    (w,) = select(load_workloads(None), ["PreemptionAsync/5000Nodes"])
    plan = workload_plan(w, measure_pods=9)
    kinds = [o["kind"] for o in plan.objects]
    # serve loads the nodes and the low-priority pods; the churn and the measured pods run live
    assert (kinds.count("Node"), kinds.count("Pod"), plan.live_start) == (5000, 20000, 2)
    assert (plan.measured, plan.n_measured, plan.expected) == ({"3"}, 9, {"1": 20000})
    ns, pods = plan.builder.pods(3, w.ops[3])
    assert (ns, len(pods), pods[0]["metadata"]["name"], pods[0]["metadata"]["labels"][OP_LABEL]) == (
        "namespace-3",
        9,
        "pod-3-000000",
        "3",
    )
    assert plan.builder.nodes(w.ops[0])[0]["metadata"]["name"] == "scheduler-perf-5000"  # names continue


def test_a_simulate_cluster_file_is_loaded_as_the_file_has_it_every_pod_measured() -> None:
    fx = SIMULATE_FIXTURES["SimulateSpreading/200Nodes_2000Pods"]
    plan = fixture_plan(fx)
    assert plan.objects == list(spreading_cluster(200, 2000))
    assert (plan.measured, plan.n_measured, plan.live_start, plan.expected) == ({UNTAGGED}, 2000, 0, {})
    cut = fixture_plan(fx, measure_pods=7)
    assert cut.objects == list(spreading_cluster(200, 2000))[:207] and cut.n_measured == 7
    assert [o["metadata"]["name"] for o in cut.objects[-2:]] == ["app-05-000005", "app-06-000006"]
    with pytest.raises(ValueError, match="measure_pods must not be negative"):
        fixture_plan(fx, measure_pods=-1)


def test_the_bind_watch_measures_pods_without_an_op_label_for_a_cluster_file() -> None:
    watch = _BindWatch({UNTAGGED}, 2, list)
    pending = {"metadata": {"namespace": "default", "name": "a"}, "spec": {}}
    bound = {"metadata": {"namespace": "default", "name": "a"}, "spec": {"nodeName": "node-00000"}}
    tagged = {"metadata": {"name": "b", "labels": {OP_LABEL: "1"}}, "spec": {"nodeName": "node-00001"}}
    for ev in (
        WatchEvent("ADDED", "Pod", pending),
        WatchEvent("MODIFIED", "Pod", bound),
        WatchEvent("MODIFIED", "Pod", bound),
    ):
        watch(ev)
    watch(WatchEvent("MODIFIED", "Pod", tagged))
    assert (watch.bound, watch.all_bound, watch.per_op, watch.done.is_set()) == (
        {"default/a"},
        2,
        {UNTAGGED: 1, "1": 1},
        False,
    )
    watch(WatchEvent("ADDED", "Pod", {**bound, "metadata": {"namespace": "default", "name": "c"}}))
    assert watch.done.is_set() and len(watch.times) == 2


def test_histogram_quantile_interpolates_within_the_bucket() -> None:
    buckets = [(0.001, 0.0), (0.002, 50.0), (0.004, 90.0), (0.008, 100.0), (float("inf"), 100.0)]
    assert histogram_quantile(0.5, buckets) == pytest.approx(0.002)
    assert histogram_quantile(0.25, buckets) == pytest.approx(0.0015)
    assert histogram_quantile(0.95, buckets) == pytest.approx(0.006)
    assert histogram_quantile(0.99, [(0.001, 0.0), (float("inf"), 10.0)]) == 0.001
    assert histogram_quantile(0.5, []) == 0.0
