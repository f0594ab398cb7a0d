"""Fault suite: slow and hostile peers of ``kubesched run``. An ignorable extender that answers one
byte a second is skipped after ``httpTimeout`` and the loop goes on binding; thousands of idle TCP
connections and stalled TLS handshakes on the secure port leave ``/healthz`` answering, every pod
bound and memory under 300 MiB. Quick set by default; ``KUBESCHED_FAULTS_LONG=1`` for the long one
(10,000 connections)."""

from __future__ import annotations

import time

import pytest
from extender_support import http_answer, trickling_server
from fault_support import assert_invariants, ledger, pods_named, size
from run_support import Cluster, Replica, needs_hooks, scheduler_config

from kubesched.modes.bench.soak import soak_idle_connections

pytestmark = needs_hooks

GPU = "example.com/gpu"


def test_trickling_ignorable_extender_never_stops_the_loop(cluster: Cluster, replicas: list[Replica]) -> None:
    nodes = cluster.add_nodes(3)
    for n in nodes:
        cluster.handle.cluster.patch_status(
            "Node",
            None,
            n,
            {
                "capacity": {"cpu": "4", GPU: "8"},  # type: ignore[union-attr]
                "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110", GPU: "8"},
            },
        )
    with trickling_server(http_answer(b'{"NodeNames":null,"Error":""}'), interval=1.0) as ext:
        cfg = scheduler_config(cluster.tmp, cluster.namespace)
        cfg.write_text(
            cfg.read_text() + "extenders:\n"
            f"- urlPrefix: {ext.url}\n  filterVerb: filter\n  httpTimeout: 1s\n  ignorable: true\n"
            f"  managedResources:\n  - name: {GPU}\n"
        )
        r = Replica(cluster, cfg)
        replicas.append(r)
        r.wait_ready()
        with ledger(cluster) as led:
            gpu = pods_named("gpu", int(size(3, 10)))
            plain = pods_named("web", int(size(30, 200)))
            for name in gpu:
                pod = cluster.pod_manifest(name)
                pod["spec"]["containers"][0]["resources"]["limits"] = {GPU: "1"}
                pod["spec"]["containers"][0]["resources"]["requests"][GPU] = "1"
                cluster.core.create_namespaced_pod(cluster.namespace, pod)
            start = time.monotonic()
            for name in plain:
                cluster.create_pod(name)
            # each gpu pod holds one cycle for httpTimeout (1 s) and is skipped; the rest flow
            cluster.wait_bound(gpu + plain, timeout=30 + len(gpu) * 2)
            took = time.monotonic() - start
            assert_invariants(cluster, led, gpu + plain)
        assert ext.requests == len(gpu)
        assert took < len(gpu) * 1.6 + 15
        assert "Skipping extender as it returned error and has ignorable flag set" in r.log()


@pytest.mark.parametrize("tls_hello", [False, True], ids=["bare-tcp", "stalled-tls"])
def test_idle_connection_flood_on_the_secure_port(tls_hello: bool) -> None:
    connections = int(size(2000, 10_000))
    res = soak_idle_connections(
        connections,
        tls_hello=tls_hello,
        hold=size(6, 15),
        settle=size(3, 10),
        nodes=5,
        pods=int(size(20, 200)),
    )
    assert res.opened == connections, res.lines()
    assert res.healthz_status == 200 and res.healthz_seconds < 2.0, res.lines()
    assert res.bound == res.pods, res.lines()
    assert res.rss_peak < 300, res.lines()
