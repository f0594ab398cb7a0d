"""``kubesched run`` against ``serve`` takes the same Filter/Score path as the benchmarks with
metrics on (the batch path; counted per node as upstream counts), and repeated failures of one
pod become one Event with a ``series``. See tests/run_support.py."""

from __future__ import annotations

import re

import pytest
from run_support import Cluster, Replica, scheduler_config, wait_for


def test_run_with_metrics_takes_the_batch_path(cluster: Cluster, replicas: list[Replica]) -> None:
    if not cluster.embedded:
        pytest.skip("needs 40 nodes of the embedded cluster")
    cluster.add_nodes(40)
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace), "-v", "4")
    replicas.append(r)
    r.wait_ready()
    names = [f"b{i}" for i in range(5)]
    for n in names:
        cluster.create_pod(n)
    cluster.wait_bound(names)
    log = r.log()
    batch = re.findall(rf'"Filter path" pod="{cluster.namespace}/b\d" path="batch"', log)
    assert len(batch) == 5, log[-2000:]
    assert 'path="per-node"' not in log
    # the batch path counts Filter evaluations per plugin and node as upstream's per-node loop:
    # 40 nodes visited (fewer than 100: all of them) for each of the 5 pods
    evals = r.samples("scheduler_plugin_evaluation_total")
    fit = [
        v
        for k, v in evals.items()
        if ("extension_point", "Filter") in k and ("plugin", "NodeResourcesFit") in k
    ]
    assert fit == [200.0]
    score = [
        v
        for k, v in evals.items()
        if ("extension_point", "Score") in k and ("plugin", "NodeResourcesFit") in k
    ]
    assert score == [5.0]


def test_repeated_failures_of_one_pod_are_one_event_with_a_series(
    cluster: Cluster, replicas: list[Replica]
) -> None:
    if not cluster.embedded:
        pytest.skip("needs a one-node embedded cluster")
    cluster.add_nodes(1, cpu="1")
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace))
    replicas.append(r)
    r.wait_ready()
    cluster.create_pod("small")
    cluster.wait_bound(["small"])
    cluster.create_pod("too-big", cpu="100")
    wait_for(
        lambda: [e for e in cluster.events("FailedScheduling") if e["regarding"]["name"] == "too-big"],
        15,
        "the first FailedScheduling",
    )
    # the node's allocatable grows to exactly the pod's 100 cpu: it would fit the empty node, so
    # NodeResourcesFit's hint requeues it (UpdateNodeAllocatable), and with "small" still there the
    # second attempt fails with the same message
    cluster.grow_node("node-0", "100")

    def series() -> int:
        evs = [e for e in cluster.events("FailedScheduling") if e["regarding"]["name"] == "too-big"]
        return int((evs[0].get("series") or {}).get("count", 1)) if evs else 0

    wait_for(lambda: series() >= 2, 30, "a FailedScheduling series")
    evs = [e for e in cluster.events("FailedScheduling") if e["regarding"]["name"] == "too-big"]
    assert len(evs) == 1
    (ev,) = evs
    assert ev["series"]["count"] == 2 and ev["series"]["lastObservedTime"].endswith("Z")
    assert ev["reportingInstance"] == f"{ev['reportingController']}-{r.identity}"
