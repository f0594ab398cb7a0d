"""Graceful pod deletion in a cluster without kubelets: ``DeleteOptions.gracePeriodSeconds``,
``kubesched serve --finalize-deletions`` (the DeletionFinalizer) so that ``kubectl delete pod``
returns and preemption under ``serve`` + ``run`` completes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from apiserver_support import served_fixture
from run_support import Cluster, Replica, needs_hooks, scheduler_config, wait_for

from kubesched.api.timestamps import rfc3339
from kubesched.clock import VirtualClock
from kubesched.embedded.apiserver import ServerHandle
from kubesched.embedded.apiserver.finalizer import DeletionFinalizer
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import NotFoundError

KUBECTL = shutil.which("kubectl")
T0 = 1_700_000_000.0


def _pod(name: str, grace: int | None = None, node: str = "n1") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}]}
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    if node:
        spec["nodeName"] = node
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "d"}, "spec": spec}


def test_grace_period_from_delete_options_and_shortening() -> None:
    clock = VirtualClock(T0)
    c = MemoryCluster(clock)
    for name in ("a", "b", "c"):
        c.create(_pod(name, grace=60))
    c.delete("Pod", "d", "a", grace=True)
    meta = c.get("Pod", "d", "a")["metadata"]
    assert (meta["deletionTimestamp"], meta["deletionGracePeriodSeconds"]) == (rfc3339(T0 + 60), 60)
    c.delete("Pod", "d", "b", grace=True, grace_period_seconds=5)
    assert c.get("Pod", "d", "b")["metadata"]["deletionTimestamp"] == rfc3339(T0 + 5)
    clock.advance_to(T0 + 10)
    rv = c.get("Pod", "d", "a")["metadata"]["resourceVersion"]
    c.delete("Pod", "d", "a", grace=True)  # again, no shorter period: no-op
    c.delete("Pod", "d", "a", grace=True, grace_period_seconds=90)  # longer: no-op
    assert c.get("Pod", "d", "a")["metadata"]["resourceVersion"] == rv
    c.delete("Pod", "d", "a", grace=True, grace_period_seconds=20)  # counted from the first deletion
    meta = c.get("Pod", "d", "a")["metadata"]
    assert (meta["deletionTimestamp"], meta["deletionGracePeriodSeconds"]) == (rfc3339(T0 + 20), 20)
    c.delete("Pod", "d", "a", grace=True, grace_period_seconds=0)
    with pytest.raises(NotFoundError):
        c.get("Pod", "d", "a")


def test_finalizer_deletes_pods_whose_grace_period_is_over() -> None:
    clock = VirtualClock(T0)
    c = MemoryCluster(clock)
    c.create(_pod("early", grace=2))
    c.create(_pod("late", grace=30))
    c.create(_pod("running"))
    c.delete("Pod", "d", "early", grace=True)
    fin = DeletionFinalizer(c, clock).start()
    try:
        c.delete("Pod", "d", "late", grace=True)
        assert {p["metadata"]["name"] for p in c.list("Pod").items} == {"early", "late", "running"}
        clock.advance_to(T0 + 2)
        wait_for(lambda: fin.finalized == 1, 10, "early finalized")
        assert {p["metadata"]["name"] for p in c.list("Pod").items} == {"late", "running"}
        # recreated under the same name before its turn: the new pod is left alone
        c.delete("Pod", "d", "late", grace=True, grace_period_seconds=0)
        c.create(_pod("late", grace=30))
        clock.advance_to(T0 + 31)
        wait_for(lambda: not fin._due, 10, "queue drained")
        assert fin.finalized == 1
        assert {p["metadata"]["name"] for p in c.list("Pod").items} == {"late", "running"}
    finally:
        fin.stop()


served = served_fixture(bookmark_interval=0.2, finalize_deletions=True)


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_kubectl_delete_of_a_bound_pod_returns(served: tuple[ServerHandle, Path]) -> None:
    server, kc = served
    server.cluster.create(
        {
            "kind": "Pod",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "nodeName": "n1",
                "terminationGracePeriodSeconds": 1,
                "containers": [{"name": "c", "image": "nginx"}],
            },
        }
    )
    assert KUBECTL is not None
    out = subprocess.run(
        [KUBECTL, "--kubeconfig", str(kc), "delete", "pod", "web", "--timeout=60s"],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == 'pod "web" deleted'
    assert server.cluster.list("Pod", "default").items == []
    assert server.finalizer is not None and server.finalizer.finalized == 1


def test_serve_help_documents_finalize_deletions() -> None:
    from click.testing import CliRunner

    from kubesched.cli.main import main

    out = CliRunner().invoke(main, ["serve", "--help"], terminal_width=200)
    assert out.exit_code == 0
    assert "--finalize-deletions / --no-finalize-deletions" in out.output
    assert "delete a bound pod for good once its grace period is over" in " ".join(out.output.split())


@needs_hooks
def test_preemption_under_serve_and_run_completes(cluster: Cluster) -> None:
    assert cluster.handle is not None
    cluster.handle.finalizer = DeletionFinalizer(cluster.handle.cluster, cluster.handle.state.clock).start()
    cluster.add_nodes(1, cpu="1")
    cluster.core.api_client.call_api(
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        "POST",
        body={
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        },
        _return_http_data_only=True,
    )
    victim = cluster.pod_manifest("victim", cpu="800m")
    victim["spec"]["terminationGracePeriodSeconds"] = 1
    cluster.core.create_namespaced_pod(cluster.namespace, victim)
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace))
    try:
        r.wait_ready(timeout=60)
        cluster.wait_bound(["victim"], timeout=60)
        important = cluster.pod_manifest("important", cpu="800m")
        important["spec"]["priorityClassName"] = "high"
        cluster.core.create_namespaced_pod(cluster.namespace, important)
        bound = cluster.wait_bound(["important"], timeout=90)
        assert bound == {"important": "node-0"}
        assert "victim" not in cluster.pods()
        preempted = wait_for(lambda: cluster.events("Preempted"), 30, "Preempted event")
        assert preempted[0]["regarding"]["name"] == "victim"
    finally:
        r.stop()
