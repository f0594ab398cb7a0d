"""Two ``kubesched run`` replicas with leader election: only the leader schedules; when it is
killed the other takes the Lease over and no pod is bound twice. See tests/run_support.py."""

from __future__ import annotations

import time
from collections import Counter

from run_support import Cluster, Replica, scheduler_config, wait_for


def _holder(cluster: Cluster) -> str:
    """The Lease's holder; "" while there is no holder or no Lease yet (a replica is ready, and so
    started, before its first attempt to create the Lease: on a loaded machine that takes a while)."""
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


def test_leader_killed_other_replica_takes_over_without_double_binding(
    cluster: Cluster, replicas: list[Replica]
) -> None:
    cluster.add_nodes(3)
    cfg = scheduler_config(cluster.tmp, cluster.namespace, lease=True)
    a = Replica(cluster, cfg, name="a")
    b = Replica(cluster, cfg, name="b")
    replicas += [a, b]
    a.wait_ready()
    b.wait_ready()  # ready while not leading
    leader_id = wait_for(lambda: _holder(cluster), 15, "a lease holder")
    leader, follower = (a, b) if leader_id == a.identity else (b, a)
    assert leader_id == leader.identity

    first = [f"p{i}" for i in range(10)]
    for n in first:
        cluster.create_pod(n)
    cluster.wait_bound(first)
    assert "starting the scheduling loop" in leader.log()
    assert "starting the scheduling loop" not in follower.log()

    leader.kill()
    second = [f"q{i}" for i in range(10)]
    for n in second:
        cluster.create_pod(n)
        time.sleep(0.05)
    cluster.wait_bound(first + second, timeout=30)
    assert wait_for(lambda: _holder(cluster) == follower.identity, 10, "follower holds the lease")
    assert "starting the scheduling loop" in follower.log()

    scheduled = wait_for(lambda: (ev := cluster.events("Scheduled")) and len(ev) >= 19 and ev, 15, "events")
    per_pod = Counter(e["regarding"]["name"] for e in scheduled)
    assert max(per_pod.values()) == 1, per_pod
    if cluster.embedded:
        binds: Counter[str] = Counter()
        for row in cluster.hook("GET", "/kubesched/requests")["requests"]:
            if row["method"] == "POST" and row["path"].endswith("/binding"):
                binds[row["path"].split("/")[-2]] += row["count"]
        assert binds == Counter({n: 1 for n in first + second})

    # graceful stop releases the lease at once
    assert follower.terminate() == 0
    assert "released the lease" in follower.log()
    assert _holder(cluster) == ""


def test_lost_lease_stops_scheduling_and_exits_1(cluster: Cluster, replicas: list[Replica]) -> None:
    import json

    from kubernetes import client as k8s
    from kubernetes.client.exceptions import ApiException

    cluster.add_nodes(1)
    a = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace, lease=True), name="a")
    replicas.append(a)
    a.wait_ready(timeout=60)
    wait_for(lambda: _holder(cluster) == a.identity, 60, "a leads")
    # another holder overwrites the lease (as after a partition): a can no longer renew. a renews
    # every 500 ms, so the read-modify-write may lose the race (409 Conflict): read again and retry.
    coord = k8s.CoordinationV1Api(cluster.api)

    def take_over() -> bool:
        lease = json.loads(
            coord.read_namespaced_lease("kubesched-it", cluster.namespace, _preload_content=False).data
        )
        lease["spec"].update({"holderIdentity": "intruder", "leaseDurationSeconds": 3600})
        try:
            coord.replace_namespaced_lease("kubesched-it", cluster.namespace, lease)
        except ApiException as e:
            if e.status == 409:
                return False
            raise
        return True

    wait_for(take_over, 60, "the intruder's lease write to win against a's renewals")
    # a fails to renew for renewDeadline (1.5 s), then exits 1 (generous bound for loaded machines)
    assert a.proc.wait(90) == 1
    log = a.log()
    assert "leader election lost" in log and "leaderelection lost" in log
    assert "released the lease" not in log
    assert _holder(cluster) == "intruder"
