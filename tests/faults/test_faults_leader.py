"""Fault suite: the leader of two ``kubesched run`` replicas (lease 4 s, renew deadline 3 s, retry
1 s) paused for 2.5 s keeps its lease and goes on scheduling (no fail-over, as client-go renews
after such a pause); killed with SIGKILL, the other replica takes over. Either way no pod is lost,
none is bound twice and no node is over capacity. The 10 s pause that must never write after the
lease passed is tests/modes/run/test_run_paused_leader.py. ``KUBESCHED_FAULTS_LONG=1`` repeats the
pause and uses more pods."""

from __future__ import annotations

import signal
import time

from fault_support import assert_invariants, ledger, pods_named, size
from run_support import Cluster, Replica, needs_hooks, scheduler_config, wait_for

pytestmark = needs_hooks

TIMINGS = ("4s", "3s", "1s")


def _holder(cluster: Cluster) -> str:
    assert cluster.handle is not None
    try:
        lease = cluster.handle.cluster.get("Lease", cluster.namespace, "kubesched-it")
    except Exception:  # noqa: BLE001 - not created yet
        return ""
    return str((lease.get("spec") or {}).get("holderIdentity") or "")


def _two_replicas(
    cluster: Cluster, replicas: list[Replica], qps: float | None = None
) -> tuple[Replica, Replica]:
    cfg = scheduler_config(
        cluster.tmp, cluster.namespace, lease=True, lease_timings=TIMINGS, qps=qps, burst=5 if qps else None
    )
    a = Replica(cluster, cfg, name="a")
    b = Replica(cluster, cfg, name="b")
    replicas += [a, b]
    a.wait_ready()
    b.wait_ready()
    leader_id = wait_for(lambda: _holder(cluster), 20, "a lease holder")
    return (a, b) if leader_id == a.identity else (b, a)


def test_a_pause_shorter_than_the_renew_deadline_causes_no_fail_over(
    cluster: Cluster, replicas: list[Replica]
) -> None:
    cluster.add_nodes(int(size(4, 12)))  # room for every pod (110 pods a node)
    # a slow API client (QPS 20) keeps writes queued in the leader when it is paused
    leader, follower = _two_replicas(cluster, replicas, qps=20)
    names: list[str] = []
    with ledger(cluster) as led:
        for round_ in range(int(size(3, 10))):
            batch = pods_named(f"r{round_}", int(size(40, 100)))
            for n in batch[: len(batch) // 2]:
                cluster.create_pod(n)
            time.sleep(0.3)
            leader.proc.send_signal(signal.SIGSTOP)
            paused = time.monotonic()
            try:
                for n in batch[len(batch) // 2 :]:
                    cluster.create_pod(n)
                time.sleep(max(0.0, 2.5 - (time.monotonic() - paused)))
            finally:
                leader.proc.send_signal(signal.SIGCONT)
            names += batch
            cluster.wait_bound(names, timeout=60)
            time.sleep(1.0)
            assert _holder(cluster) == leader.identity, "the lease moved: a fail-over"
            assert leader.proc.poll() is None, leader.log()[-2000:]
        assert_invariants(cluster, led, names)
    log = leader.log()
    assert "lease not renewed within the renew deadline" not in log
    assert "leader election lost" not in log
    assert "successfully acquired lease" not in follower.log()


def test_a_killed_leader_is_replaced_and_no_pod_is_lost(cluster: Cluster, replicas: list[Replica]) -> None:
    cluster.add_nodes(int(size(4, 12)))  # room for every pod (110 pods a node)
    leader, follower = _two_replicas(cluster, replicas)
    names = pods_named("k", int(size(60, 400)))
    with ledger(cluster) as led:
        for n in names[:20]:
            cluster.create_pod(n)
        wait_for(lambda: len(cluster.bound()) >= 5, 30, "the leader binding")
        leader.proc.kill()
        leader.proc.wait(10)
        for n in names[20:]:
            cluster.create_pod(n)
        wait_for(lambda: _holder(cluster) == follower.identity, 30, "the follower taking the lease")
        cluster.wait_bound(names, timeout=90)
        assert_invariants(cluster, led, names)
