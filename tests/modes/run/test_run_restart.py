"""``kubesched run`` keeps working when ``kubesched serve`` restarts with a fresh store, so that
resourceVersions go backwards (as after an etcd restore): the informers' watches get
``504 Too large resource version`` (or connection failures), re-list with resourceVersion "" and
reconcile, ``/readyz`` fails meanwhile, the retry warnings stay few, and pods created on the new
server are scheduled. See tests/run_support.py."""

from __future__ import annotations

import re
import types
from pathlib import Path

from run_support import SCHEDULER_NAME, Replica, free_port, needs_hooks, scheduler_config, wait_for

from kubesched.clock import RealClock
from kubesched.embedded.apiserver import ServerHandle, start_server, write_kubeconfig
from kubesched.embedded.store import MemoryCluster

NS = "it"


def _node(name: str) -> dict[str, object]:
    res = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"capacity": res, "allocatable": res, "conditions": [{"type": "Ready", "status": "True"}]},
    }


def _pod(name: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "schedulerName": SCHEDULER_NAME,
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.9", "resources": {"requests": {"cpu": "10m"}}}
            ],
        },
    }


def _serve(port: int) -> ServerHandle:
    cluster = MemoryCluster(RealClock())
    handle = start_server(cluster, port=port, bookmark_interval=0.5)
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    return handle


def _bound(handle: ServerHandle, names: list[str]) -> bool:
    pods = {p["metadata"]["name"]: p for p in handle.cluster.list("Pod", NS).items}
    return all((pods.get(n) or {}).get("spec", {}).get("nodeName") for n in names)


@needs_hooks
def test_run_recovers_when_serve_restarts_with_older_resource_versions(tmp_path: Path) -> None:
    port = free_port()
    first = _serve(port)
    second: ServerHandle | None = None
    replica: Replica | None = None
    try:
        kubeconfig = str(write_kubeconfig(tmp_path / "kubeconfig", first.url))
        for i in range(2):
            first.cluster.create(_node(f"old-{i}"))
        old = [f"old-{i}" for i in range(20)]
        for n in old:
            first.cluster.create(_pod(n))
        harness = types.SimpleNamespace(tmp=tmp_path, kubeconfig=kubeconfig, reader_token=None)
        replica = Replica(harness, scheduler_config(tmp_path, NS), name="r")  # type: ignore[arg-type]
        replica.wait_ready(timeout=60)
        wait_for(lambda: _bound(first, old), 60, "the first server's pods bound")
        old_rv = int(first.cluster.resource_version)

        first.stop()
        wait_for(lambda: replica.get("/readyz", 2)[0] == 500, 60, "/readyz failing while the server is down")

        second = _serve(port)  # a fresh store: resourceVersions restart from 1
        second.cluster.create(_node("new-0"))
        new = ["new-a", "new-b"]
        for n in new:
            second.cluster.create(_pod(n))
        assert int(second.cluster.resource_version) < old_rv
        wait_for(lambda: _bound(second, new), 90, "the new server's pods bound")
        pods = {p["metadata"]["name"]: p for p in second.cluster.list("Pod", NS).items}
        assert {n: pods[n]["spec"]["nodeName"] for n in new} == {"new-a": "new-0", "new-b": "new-0"}
        wait_for(lambda: replica.get("/readyz", 2)[:2] == (200, b"ok"), 60, "/readyz ok again")
        # a pod created after the recovery is scheduled from the new watches
        second.cluster.create(_pod("new-c"))
        wait_for(lambda: _bound(second, ["new-c"]), 60, "a pod created after the recovery bound")
        log = replica.log()
        assert replica.proc.poll() is None, log
        assert "re-listing" in log
        # rate-limited retry warnings: one line per 30 s for all kinds, not one per kind and retry
        warnings = [line for line in log.splitlines() if re.search(r"\d W ", line)]
        assert len(warnings) <= 6, "\n".join(warnings)
        assert "cache is corrupted" not in log and "Traceback" not in log, log
        assert replica.terminate(60) == 0
    finally:
        if replica is not None:
            replica.stop()
        if second is not None:
            second.stop()
        first.stop()
