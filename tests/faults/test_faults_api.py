"""Fault suite: ``kubesched run`` against a misbehaving API server while it schedules -- every watch
dropped, the history compacted (resumed watches get 410 Gone and re-list), bursts of 500 and 429
answers on bindings and events, and malformed pods (wrong field types, a foreign ``apiVersion``)
mixed with good ones; and sustained churn with memory sampled. No pod lost, none bound twice, no
node over capacity, every malformed pod reported once, memory bounded. Quick set by default;
``KUBESCHED_FAULTS_LONG=1`` for more pods, more rounds and a longer churn."""

from __future__ import annotations

import threading
import time
from collections import Counter

from fault_support import LONG, assert_invariants, ledger, pods_named, size
from run_support import Cluster, Replica, needs_hooks, scheduler_config, wait_for

from kubesched.modes.bench.soak import soak_churn

pytestmark = needs_hooks


def test_watch_drops_compaction_and_error_bursts_lose_nothing(
    cluster: Cluster, replicas: list[Replica]
) -> None:
    cluster.add_nodes(int(size(5, 20)), cpu="8")  # room for every pod (110 pods a node)
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace))
    replicas.append(r)
    r.wait_ready()
    names = pods_named("p", int(size(150, 1500)))
    malformed = {"bad-cpu": ("spec", "1.5.0"), "bad-version": ("apiVersion", "apps/v1")}
    stop = threading.Event()

    def havoc() -> None:
        i = 0
        while not stop.wait(0.4):
            i += 1
            if i % 3 == 0:
                cluster.hook("POST", "/kubesched/compact")
            cluster.hook("POST", "/kubesched/drop-watches")
            if i % 2 == 0:
                cluster.hook("POST", "/kubesched/faults", {"status": 500, "count": 3, "paths": "/binding$"})
                cluster.hook(
                    "POST",
                    "/kubesched/faults",
                    {"status": 429, "count": 2, "paths": "/events", "retryAfterSeconds": 1},
                )

    with ledger(cluster) as led:
        t = threading.Thread(target=havoc, daemon=True)
        t.start()
        try:
            for i, n in enumerate(names):
                cluster.create_pod(n, cpu="50m")
                if i == len(names) // 2:
                    for name, (field, value) in malformed.items():
                        pod = cluster.pod_manifest(name)
                        if field == "apiVersion":
                            pod["apiVersion"] = value
                        else:
                            pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = value
                        cluster.store_malformed_pod(pod)
            time.sleep(size(2.0, 20.0))
        finally:
            stop.set()
            t.join(5)
        cluster.hook("DELETE", "/kubesched/faults")

        def unbound_pods() -> list[str]:
            bound = cluster.bound()
            return [n for n in names if n not in bound]

        deadline = time.monotonic() + 60 + len(names) * 0.1
        while time.monotonic() < deadline and unbound_pods():
            time.sleep(0.5)
        unbound = unbound_pods()
        assert not unbound, f"{len(unbound)} of {len(names)} pods unbound: {unbound[:10]}\n{r.log()[-3000:]}"
        assert_invariants(cluster, led, names)
    failed = wait_for(
        lambda: (
            (c := Counter(e["regarding"]["name"] for e in cluster.events("FailedScheduling")))
            and all(n in c for n in malformed)
            and c
        ),
        30,
        "the malformed pods reported",
    )
    assert {n: failed[n] for n in malformed} == {n: 1 for n in malformed}
    assert r.proc.poll() is None
    assert "Traceback" not in r.log()


def test_sustained_churn_keeps_memory_bounded() -> None:
    res = soak_churn(
        rate=size(40, 150),
        duration=size(25, 900),
        lifetime=3.0,
        sample_every=5.0 if not LONG else 60.0,
        nodes=20,
    )
    rss = [s[1] for s in res.samples]
    assert res.lost == 0 and res.over_capacity == 0, res.lines()
    assert max(rss) < 400, res.lines()
    if LONG:  # flat after warm-up: the last third within 10 % of the middle third
        third = len(rss) // 3
        assert max(rss[2 * third :]) <= 1.1 * max(rss[third : 2 * third]), res.lines()
