"""A leader paused (SIGSTOP) with bindings queued loses its lease to the other replica; when it
resumes (SIGCONT) none of its stale writes reach the API server (kubesched.client.fencing): it
stops, and no node ends over capacity (without the fence its queued bindings of pods that no
longer fit land on full nodes). Bounded: 20 nodes, 600 pods, about 40 s (at most ~6 min)."""

from __future__ import annotations

import signal
import time
from collections import Counter

from run_support import Cluster, Replica, needs_hooks, scheduler_config, wait_for

from kubesched.api.quantity import milli_value

NODES, CPU, PODS, POD_CPU = 20, 4, 600, "200m"
CAPACITY = NODES * CPU * 5  # pods of 200m that fit
EARLY = 200


def _holder(cluster: Cluster) -> str:
    from kubernetes.client.exceptions import ApiException

    try:
        lease = cluster.api.call_api(
            f"/apis/coordination.k8s.io/v1/namespaces/{cluster.namespace}/leases/kubesched-it",
            "GET",
            response_type="object",
            _return_http_data_only=True,
        )
    except ApiException as e:
        if e.status == 404:
            return ""
        raise
    return str((lease.get("spec") or {}).get("holderIdentity") or "")


def _millicpu_by_node(cluster: Cluster) -> dict[str, int]:
    used: Counter[str] = Counter()
    for p in cluster.pods().values():
        node = p["spec"].get("nodeName")
        if node:
            for c in p["spec"]["containers"]:
                used[node] += milli_value(c["resources"]["requests"]["cpu"])
    return dict(used)


@needs_hooks
def test_paused_leader_never_writes_on_a_stale_lease(cluster: Cluster, replicas: list[Replica]) -> None:
    cluster.add_nodes(NODES, cpu=str(CPU))
    # a slow API client (QPS 80) keeps bindings queued in the leader when it is paused
    # lease timings long enough that a replica starved of CPU by a loaded test machine keeps its
    # lease; the pause below is longer than the lease
    cfg = scheduler_config(
        cluster.tmp, cluster.namespace, lease=True, qps=80, burst=10, lease_timings=("5s", "4s", "1s")
    )
    a = Replica(cluster, cfg, "--parallel-bindings=8", name="a")
    b = Replica(cluster, cfg, "--parallel-bindings=8", name="b")
    replicas += [a, b]
    a.wait_ready()
    b.wait_ready()
    leader_id = wait_for(lambda: _holder(cluster), 15, "a lease holder")
    leader, follower = (a, b) if leader_id == a.identity else (b, a)

    assert cluster.handle is not None
    for i in range(EARLY):
        cluster.store_create_pod(f"early-{i:03d}", cpu=POD_CPU)
    wait_for(lambda: len(cluster.bound()) >= 30, 60, "the leader binding")
    leader.proc.send_signal(signal.SIGSTOP)
    # pods the follower places first: they fill the nodes, the early pods the paused leader has
    # queued bindings for no longer fit (no preemption)
    for i in range(PODS - EARLY):
        pod = cluster.pod_manifest(f"late-{i:03d}", cpu=POD_CPU)
        pod["spec"].update(priority=10, preemptionPolicy="Never")
        cluster.handle.cluster.create(pod)
    try:
        wait_for(lambda: _holder(cluster) == follower.identity, 40, "the follower taking the lease")
        # the follower fills every node; the paused leader still holds bindings of pods that do not fit
        wait_for(lambda: len(cluster.bound()) >= CAPACITY, 120, "the follower filling the nodes")
    finally:
        leader.proc.send_signal(signal.SIGCONT)
    assert leader.proc.wait(30) == 1  # stops as on a lost lease
    log = leader.log()
    assert "lease not renewed within the renew deadline" in log and "leaderelection lost" in log

    def settled() -> bool:
        n = len(cluster.bound())
        time.sleep(1.5)
        return n >= CAPACITY and n == len(cluster.bound())

    wait_for(settled, 120, f"{CAPACITY} pods bound")
    used = _millicpu_by_node(cluster)
    over = {n: m for n, m in used.items() if m > CPU * 1000}
    assert not over, f"{len(over)} of {NODES} nodes over capacity (millicpu): {over}"
    assert len(cluster.bound()) == CAPACITY
    assert len(used) == NODES and max(used.values()) <= CPU * 1000, used
    binds: Counter[str] = Counter()
    for row in cluster.hook("GET", "/kubesched/requests")["requests"]:
        if row["method"] == "POST" and row["path"].endswith("/binding"):
            binds[row["path"].split("/")[-2]] += row["count"]
    bound = cluster.bound()
    assert all(binds[n] >= 1 for n in bound)
    assert follower.proc.poll() is None
