"""``kubesched run`` (subprocess) against an API server, through the official client: binding,
events, conditions, the status endpoint and graceful shutdown. See tests/run_support.py."""

from __future__ import annotations

import pstats
from collections import Counter

from run_support import SCHEDULER_NAME, Cluster, Replica, needs_hooks, scheduler_config, wait_for


def test_pods_created_over_the_api_are_bound_with_events_and_conditions(
    cluster: Cluster, replicas: list[Replica]
) -> None:
    nodes = cluster.add_nodes(2, cpu="2")
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace), "--profiling=true")
    replicas.append(r)
    r.wait_ready()
    names = [f"web-{i}" for i in range(6)]
    for n in names:
        cluster.create_pod(n)
    # another scheduler's pod and a pod too big for any node
    other = cluster.pod_manifest("other-scheduler")
    other["spec"]["schedulerName"] = "default-scheduler-elsewhere"
    cluster.core.create_namespaced_pod(cluster.namespace, other)
    cluster.create_pod("huge", cpu="1000")

    bound = cluster.wait_bound(names)
    assert set(bound.values()) <= set(nodes)
    pods = cluster.pods()
    for n in names:
        cond = {c["type"]: c for c in pods[n]["status"]["conditions"]}["PodScheduled"]
        assert cond["status"] == "True"
    scheduled = wait_for(
        lambda: (ev := cluster.events("Scheduled")) and len(ev) >= len(names) and ev, 15, "Scheduled events"
    )
    notes = sorted(e["note"] for e in scheduled)
    assert notes == sorted(f"Successfully assigned {cluster.namespace}/{n} to {bound[n]}" for n in names)
    assert {(e["type"], e["action"], e["regarding"]["kind"]) for e in scheduled} == {
        ("Normal", "Binding", "Pod")
    }
    assert Counter(e["regarding"]["name"] for e in scheduled) == Counter(names)

    def huge_failed() -> dict | None:
        conds = {c["type"]: c for c in (cluster.pods()["huge"]["status"].get("conditions") or [])}
        return conds.get("PodScheduled")

    cond = wait_for(huge_failed, 15, "PodScheduled=False on the huge pod")
    if cluster.embedded:
        msg = (
            "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: 0/2 nodes "
            "are available: 2 Preemption is not helpful for scheduling."
        )
        assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", msg)
    else:
        assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    failed = wait_for(lambda: cluster.events("FailedScheduling"), 15, "FailedScheduling event")
    assert failed[0]["type"] == "Warning" and failed[0]["action"] == "Scheduling"
    assert failed[0]["regarding"]["name"] == "huge" and failed[0]["note"] == cond["message"]
    assert failed[0]["reportingController"] == SCHEDULER_NAME
    pods = cluster.pods()
    assert "nodeName" not in pods["other-scheduler"]["spec"] and "nodeName" not in pods["huge"]["spec"]

    # status endpoint
    assert r.get("/healthz")[:2] == (200, b"ok")
    assert r.get("/readyz")[:2] == (200, b"ok")
    code, body, headers = r.get("/metrics")
    assert code == 200 and headers["Content-Type"].startswith("text/plain")
    assert b'scheduler_schedule_attempts_total{profile="kubesched-it",result="scheduled"} 6.0' in body
    code, body, headers = r.get("/debug/pprof/profile?seconds=0.5", timeout=15)
    assert code == 200 and headers["Content-Disposition"] == 'attachment; filename="profile.pstats"'
    profile = cluster.tmp / "profile.pstats"
    profile.write_bytes(body)
    stats = pstats.Stats(str(profile))
    assert stats.total_calls > 0  # type: ignore[attr-defined]
    assert r.get("/nope")[0] == 404

    # graceful shutdown
    assert r.terminate() == 0
    log = r.log()
    assert "received SIGTERM: shutting down" in log and "stopped" in log


def test_profiling_disabled_hides_the_profile_endpoint(cluster: Cluster, replicas: list[Replica]) -> None:
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace), "--profiling=false")
    replicas.append(r)
    r.wait_ready()
    assert r.get("/debug/pprof/profile?seconds=1")[0] == 404
    assert r.get("/healthz")[0] == 200
    # the log names only what is served
    assert "serving /healthz /readyz /metrics on " in r.log() and "pprof" not in r.log()


def test_profiling_is_served_by_default(cluster: Cluster, replicas: list[Replica]) -> None:
    """enableProfiling defaults to true (upstream's defaulting), so without --profiling the profile
    endpoint is served, and logged."""
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace))
    replicas.append(r)
    r.wait_ready()
    assert r.get("/debug/pprof/profile?seconds=1")[0] == 200
    assert "serving /healthz /readyz /metrics /debug/pprof/profile on " in r.log()


@needs_hooks
def test_conflicting_binding_is_forgotten(cluster: Cluster, replicas: list[Replica]) -> None:
    """A binding answered 409 (another writer bound the pod) forgets the assumed pod: its
    resources are freed and the scheduler keeps going."""
    cluster.add_nodes(1, cpu="1")
    cluster.hook("POST", "/kubesched/faults", {"status": 409, "count": 1, "paths": "/pods/first/binding$"})
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace))
    replicas.append(r)
    r.wait_ready()
    cluster.create_pod("first", cpu="800m")
    # the 409 makes a FailedScheduling (SchedulerError) and a requeue; the retry binds it
    cluster.wait_bound(["first"], timeout=20)
    failed = cluster.events("FailedScheduling")
    assert failed and failed[0]["regarding"]["name"] == "first"
    assert failed[0]["note"] == 'running Bind plugin "DefaultBinder": injected fault (HTTP 409)'
    # the forgotten assumption freed its 800m: a second pod that only fits alone would fail;
    # after deleting "first", "second" (800m) fits on the 1-cpu node
    cluster.create_pod("second", cpu="800m")
    wait_for(
        lambda: (
            cluster.events("FailedScheduling")
            and any(e["regarding"]["name"] == "second" for e in cluster.events("FailedScheduling"))
        ),
        15,
        "second unschedulable",
    )
    cluster.core.delete_namespaced_pod("first", cluster.namespace, grace_period_seconds=0)
    cluster.wait_bound(["second"], timeout=20)
