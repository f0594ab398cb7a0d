"""``kubesched run`` logs as kube-scheduler does: klog text by default, ``--logging-format=json``,
and upstream's per-pod lines at ``-v=2`` with the pod and node as key/value pairs."""

from __future__ import annotations

import json
import re

from run_support import Cluster, Replica, scheduler_config, wait_for


def test_json_logs_carry_upstream_per_pod_lines(cluster: Cluster, replicas: list[Replica]) -> None:
    node = cluster.add_nodes(1, cpu="1")[0]
    cfg = scheduler_config(cluster.tmp, cluster.namespace)
    r = Replica(cluster, cfg, "--logging-format", "json")
    replicas.append(r)
    r.wait_ready()
    cluster.create_pod("fits", cpu="500m")
    cluster.create_pod("huge", cpu="64")
    cluster.wait_bound(["fits"])

    def lines() -> list[dict]:
        return [json.loads(line) for line in r.log().splitlines() if line.startswith("{")]

    def no_fit() -> dict | None:
        return next((d for d in lines() if d["msg"] == "Unable to schedule pod; no fit; waiting"), None)

    failed = wait_for(no_fit, 30, "the no-fit log line")
    assert failed["v"] == 2 and failed["pod"] == {"name": "huge", "namespace": cluster.namespace}
    assert failed["err"] == (
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    bound = next(d for d in lines() if d["msg"] == "Successfully bound pod to node")
    assert bound["v"] == 2 and bound["pod"] == {"name": "fits", "namespace": cluster.namespace}
    assert bound["node"] == node
    assert set(bound) >= {"ts", "caller"} and isinstance(bound["ts"], float)
    assert all(line.startswith("{") for line in r.log().splitlines() if line.strip())


def test_text_logs_are_klog_lines(cluster: Cluster, replicas: list[Replica]) -> None:
    node = cluster.add_nodes(1)[0]
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace))
    replicas.append(r)
    r.wait_ready()
    cluster.create_pod("web")
    cluster.wait_bound(["web"])
    line = wait_for(
        lambda: next((x for x in r.log().splitlines() if "Successfully bound" in x), None), 30, "log"
    )
    assert re.fullmatch(
        r'I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ core\.py:\d+\] "Successfully bound pod to node" '
        rf'pod="{cluster.namespace}/web" node="{node}"',
        line,
    ), line
