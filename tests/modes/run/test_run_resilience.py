"""``kubesched run`` against a misbehaving API server (``kubesched serve``'s test hooks): dropped
watches and a forced ``410 Gone`` lose no pod; 500/429 answers only slow scheduling; the client
never exceeds its QPS/burst. See tests/run_support.py."""

from __future__ import annotations

import re
import time
from collections import Counter

from run_support import Cluster, Replica, needs_hooks, scheduler_config, wait_for

pytestmark = needs_hooks


def _scheduled_once(cluster: Cluster, names: list[str]) -> None:
    events = wait_for(
        lambda: (ev := cluster.events("Scheduled")) and len(ev) >= len(names) and ev, 15, "Scheduled events"
    )
    assert Counter(e["regarding"]["name"] for e in events) == Counter(names)


def test_dropped_watches_and_410_lose_no_pod(cluster: Cluster, replicas: list[Replica]) -> None:
    cluster.add_nodes(2)
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace))
    replicas.append(r)
    r.wait_ready()
    before = [f"a{i}" for i in range(5)]
    for n in before:
        cluster.create_pod(n)
    cluster.wait_bound(before)

    # 1. drop every watch mid-stream: the watches resume from their last resourceVersion
    assert cluster.hook("POST", "/kubesched/drop-watches")["dropped"] >= 14
    during = [f"b{i}" for i in range(5)]
    for n in during:
        cluster.create_pod(n)
    cluster.wait_bound(before + during)
    assert "re-listing" not in r.log()

    # 2. keep the pod watch from reconnecting, write, compact: the resumed watch gets 410 Gone and
    #    the informer re-lists and reconciles
    cluster.hook(
        "POST",
        "/kubesched/faults",
        {"status": 500, "count": 1000, "paths": "^/api/v1/pods$", "methods": ["GET"]},
    )
    cluster.hook("POST", "/kubesched/drop-watches")
    gap = [f"c{i}" for i in range(5)]
    for n in gap:
        cluster.store_create_pod(n)
    cluster.store_create_pod("c-deleted")
    cluster.handle.cluster.delete("Pod", cluster.namespace, "c-deleted")  # type: ignore[union-attr]
    cluster.hook("POST", "/kubesched/compact")
    time.sleep(1.0)
    cluster.hook("DELETE", "/kubesched/faults")
    cluster.wait_bound(before + during + gap, timeout=40)
    wait_for(
        lambda: re.search(r"watch Pod from \d+ ended \(.*\); re-listing", r.log()), 10, "a re-list after 410"
    )
    after = [f"d{i}" for i in range(3)]
    for n in after:
        cluster.create_pod(n)
    cluster.wait_bound(before + during + gap + after)
    _scheduled_once(cluster, before + during + gap + after)
    assert "c-deleted" not in cluster.pods()


def test_500_and_429_only_slow_scheduling(cluster: Cluster, replicas: list[Replica]) -> None:
    cluster.add_nodes(2)
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace))
    replicas.append(r)
    r.wait_ready()
    cluster.hook("POST", "/kubesched/faults", {"status": 500, "count": 4, "paths": "/binding$"})
    cluster.hook(
        "POST",
        "/kubesched/faults",
        {"status": 429, "count": 6, "paths": "/events$", "methods": ["POST"], "retryAfterSeconds": 1},
    )
    cluster.hook(
        "POST", "/kubesched/faults", {"status": 429, "count": 2, "paths": "/status$", "retryAfterSeconds": 1}
    )
    names = [f"p{i}" for i in range(8)]
    for n in names:
        cluster.create_pod(n)
    cluster.wait_bound(names, timeout=40)

    # the 500s on binding were scheduling errors: reported, requeued, bound later. Events are
    # written by the event broadcaster's workers (after the 429s' Retry-After waits), and
    # repeated failures of one pod fold into one Event with a series count
    def failures() -> int:
        return sum(int((e.get("series") or {}).get("count", 1)) for e in cluster.events("FailedScheduling"))

    wait_for(lambda: failures() >= 4, 30, "4 FailedScheduling events")
    errors = [e for e in cluster.events("FailedScheduling")]
    assert failures() == 4
    assert {e["note"] for e in errors} == {'running Bind plugin "DefaultBinder": injected fault (HTTP 500)'}
    # the 429s were retried after Retry-After: every Scheduled event arrived
    _scheduled_once(cluster, names)
    assert cluster.hook("GET", "/kubesched/faults")["faults"] == []

    # list and watch failing for a while: informers retry with backoff, then catch up
    cluster.hook(
        "POST",
        "/kubesched/faults",
        {"status": 503, "count": 3, "paths": "^/api/v1/pods$", "methods": ["GET"]},
    )
    cluster.hook("POST", "/kubesched/drop-watches")
    later = [f"q{i}" for i in range(4)]
    for n in later:
        cluster.create_pod(n)
    cluster.wait_bound(names + later, timeout=40)
    assert r.get("/healthz")[0] == 200


def test_qps_and_burst_hold(cluster: Cluster, replicas: list[Replica]) -> None:
    qps, burst = 10, 5
    cluster.add_nodes(2)
    names = [f"p{i}" for i in range(25)]
    for n in names:
        cluster.store_create_pod(n)
    cluster.hook("DELETE", "/kubesched/requests")
    r = Replica(
        cluster,
        scheduler_config(cluster.tmp, cluster.namespace, qps=200, burst=200),
        "--kube-api-qps",
        str(qps),
        "--kube-api-burst",
        str(burst),
    )
    replicas.append(r)
    start = time.time()
    cluster.wait_bound(names, timeout=60)
    _scheduled_once(cluster, names)
    elapsed = time.time() - start
    # events go through a client of their own (own token bucket, as upstream's scheduler does):
    # each of the two request streams holds the flags' QPS and burst
    per_second: Counter[int] = Counter()
    event_per_second: Counter[int] = Counter()
    for row in cluster.hook("GET", "/kubesched/requests")["requests"]:
        if row["method"] == "GET" and "/namespaces/" in row["path"]:
            continue  # the test's own polling (the scheduler lists and watches cluster-wide)
        if row["path"].endswith("/events") or "/events/" in row["path"]:
            event_per_second[row["second"]] += row["count"]
        else:
            per_second[row["second"]] += row["count"]
    total = sum(per_second.values())
    # 14 lists + 14 watches + 25 bindings, at least; 25 events
    assert total >= 53
    assert sum(event_per_second.values()) >= 25
    # flags beat the config file (qps 200 would finish in well under a second)
    assert elapsed >= (total - burst) / qps - 1.0
    for counts in (per_second, event_per_second):
        seconds = sorted(counts)
        for i, s0 in enumerate(seconds):
            for s1 in seconds[i:]:
                window = sum(counts[s] for s in range(s0, s1 + 1))
                # whole-second buckets: a window of k buckets spans < k + 1 seconds
                assert window <= burst + qps * (s1 - s0 + 1), (s0, s1, window)
