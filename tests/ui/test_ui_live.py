"""``kubesched ui --kubeconfig``: the views follow a cluster's watch (here ``kubesched serve``, through
the project's kube client and informers), and what-ifs run on a snapshot without writing to it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from ui_support import BATCH_BIG_MESSAGE, EXAMPLE, FIT_WEIGHT_10

from kubesched.client.kube import KubeClusterClient
from kubesched.clock import RealClock
from kubesched.embedded.apiserver import ServerHandle, start_server, write_kubeconfig
from kubesched.embedded.manifests import load_manifests
from kubesched.embedded.store import MemoryCluster
from kubesched.ui.server import UiServer
from kubesched.ui.session import LiveSession


def _until(fn: Callable[[], Any], timeout: float = 10.0) -> Any:
    end = time.monotonic() + timeout
    while True:
        v = fn()
        if v or time.monotonic() > end:
            return v
        time.sleep(0.05)


@pytest.fixture
def apiserver() -> Iterator[ServerHandle]:
    cluster = MemoryCluster(RealClock())
    cluster.load(load_manifests([EXAMPLE]).objects)
    handle = start_server(cluster, bookmark_interval=0.5)
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def http(apiserver: ServerHandle, tmp_path: Path) -> Iterator[httpx.Client]:
    kc = write_kubeconfig(tmp_path / "kubeconfig", apiserver.url)
    live = LiveSession(KubeClusterClient.from_kubeconfig(str(kc), qps=0, burst=0), None)
    live.start()
    srv = UiServer(live=live, port=0).start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{srv.port}", timeout=30) as c:
            yield c
    finally:
        srv.stop()
        live.stop()


def _pods(http: httpx.Client, **q: str) -> dict[str, tuple[str, str]]:
    return {r["key"]: (r["status"], r["message"]) for r in http.get("/api/v1/pods", params=q).json()["rows"]}


def test_live_views_follow_the_watch(http: httpx.Client, apiserver: ServerHandle) -> None:
    assert http.get("/api/v1/info").json()["mode"] == "live"
    pods = _pods(http)
    assert pods["shop/db-0"] == ("Running", "")
    assert pods["shop/batch-big"] == ("Pending", "")
    assert pods["shop/gated-1"] == ("Gated", "waiting for scheduling gates: [example.com/quota]")
    apiserver.cluster.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "late", "namespace": "shop"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        }
    )
    assert _until(lambda: "shop/late" in _pods(http))
    apiserver.cluster.patch_status(
        "Pod",
        "shop",
        "batch-big",
        {
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": BATCH_BIG_MESSAGE,
                }
            ]
        },
    )
    assert _until(lambda: _pods(http)["shop/batch-big"] == ("Unschedulable", BATCH_BIG_MESSAGE))
    apiserver.cluster.bind("shop", "late", "", "node-a2")
    assert _until(lambda: http.get("/api/v1/pods/shop/late").json()["node"] == "node-a2")
    nodes = {r["name"]: r for r in http.get("/api/v1/nodes").json()["rows"]}
    assert nodes["node-a2"]["pods"]["count"] == 2


def test_live_why_and_whatif_never_write(http: httpx.Client, apiserver: ServerHandle) -> None:
    ex = http.get("/api/v1/pods/shop/batch-big/explain").json()
    assert (ex["result"], ex["message"], ex["reproduced"]) == ("FailedScheduling", BATCH_BIG_MESSAGE, None)
    assert ex["summary"]["reasons"] == [
        {"plugin": "NodeResourcesFit", "reason": "Insufficient cpu", "nodes": 3},
        {"plugin": "TaintToleration", "reason": "node(s) had untolerated taint(s)", "nodes": 2},
    ]
    assert http.get("/api/v1/pods/shop/db-0/explain").status_code == 409
    before = apiserver.cluster.resource_version
    r = http.post("/api/v1/runs", json={"config": FIT_WEIGHT_10})
    assert r.status_code == 201
    d = r.json()
    assert d["id"] == 2 and d["diff"]["before"] == 1
    assert d["counts"] == {"Scheduled": 3, "Unschedulable": 1, "Gated": 1, "Ignored": 1}
    sim = {row["key"]: row["node"] for row in http.get("/api/v1/pods", params={"run": 2}).json()["rows"]}
    assert sim["shop/web-1"] == "node-a1"
    # the cluster is untouched: same resourceVersion, web-1 still unbound there and in the live view
    assert apiserver.cluster.resource_version == before
    assert not (apiserver.cluster.get("Pod", "shop", "web-1").get("spec") or {}).get("nodeName")
    assert http.get("/api/v1/pods/shop/web-1").json()["node"] is None


def test_live_whatif_fresh_snapshot(http: httpx.Client, apiserver: ServerHandle) -> None:
    assert http.post("/api/v1/runs", json={}).json()["id"] == 2
    apiserver.cluster.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "late", "namespace": "shop"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        }
    )
    assert _until(lambda: "shop/late" in _pods(http))
    stale = http.post("/api/v1/runs", json={}).json()
    assert (stale["id"], stale["pods"]) == (3, 6)  # the snapshot taken before the pod existed
    fresh = http.post("/api/v1/runs", json={"freshSnapshot": True}).json()
    assert (fresh["id"], fresh["pods"], fresh["diff"]["before"]) == (2, 7, 1)
    late = http.get("/api/v1/pods/shop/late", params={"run": 2}).json()
    assert late["status"] == "Scheduled", late
