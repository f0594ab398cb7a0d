"""``KubeClusterClient`` (the ClusterClient over the official kubernetes client) and informers on it,
against ``kubesched serve`` in-process (loopback, bounded waits)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from apiserver_support import api_client, server_fixture
from run_support import wait_for

from kubesched.client.client import WatchEvent
from kubesched.client.informers import Informer, ResourceEventHandlerFuncs
from kubesched.client.kube import KubeApiError, KubeClusterClient, collection_path, object_path
from kubesched.client.rate_limit import TokenBucket
from kubesched.clock import RealClock
from kubesched.embedded.apiserver import ServerHandle
from kubesched.errors import AlreadyExistsError, ConflictError, NotFoundError

server = server_fixture(bookmark_interval=0.2, enable_test_hooks=True)


class _CountingBucket(TokenBucket):
    def __init__(self) -> None:
        super().__init__(-1, 0, RealClock())
        self.taken = 0

    def accept(self) -> float:
        self.taken += 1
        return 0.0


@pytest.fixture
def client(server: ServerHandle) -> Iterator[KubeClusterClient]:
    c = KubeClusterClient(api_client(server), _CountingBucket(), watch_timeout=(30, 30))
    try:
        yield c
    finally:
        c.close()


def _pod(name: str, ns: str = "default", node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}, "spec": spec}


def test_paths() -> None:
    assert collection_path("Pod", None) == "/api/v1/pods"
    assert collection_path("Pod", "a b") == "/api/v1/namespaces/a%20b/pods"
    assert collection_path("CSINode", "x") == "/apis/storage.k8s.io/v1/csinodes"
    assert (
        object_path("Lease", "kube-system", "s")
        == "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/s"
    )
    assert (
        object_path("PodDisruptionBudget", None, "p")
        == "/apis/policy/v1/namespaces/default/poddisruptionbudgets/p"
    )


def test_crud_bind_status_and_errors(server: ServerHandle, client: KubeClusterClient) -> None:
    created = client.create(_pod("web"))
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]
    with pytest.raises(AlreadyExistsError, match='pods "web" already exists'):
        client.create(_pod("web"))
    got = client.get("Pod", "default", "web")
    assert got["kind"] == "Pod" and got["metadata"]["uid"] == created["metadata"]["uid"]
    stale = {**got, "metadata": {**got["metadata"], "labels": {"a": "b"}}}
    client.update(stale)
    with pytest.raises(ConflictError, match="the object has been modified"):
        client.update(stale)
    with pytest.raises(NotFoundError, match='pods "nope" not found'):
        client.get("Pod", "default", "nope")

    patched = client.patch_status(
        "Pod",
        "default",
        "web",
        {
            "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "m"}
            ],
            "nominatedNodeName": "n1",
        },
    )
    assert patched["status"]["nominatedNodeName"] == "n1"
    assert client.bind("default", "web", created["metadata"]["uid"], "n1") is None
    bound = client.get("Pod", "default", "web")
    assert bound["spec"]["nodeName"] == "n1"
    assert [(c["type"], c["status"]) for c in bound["status"]["conditions"]] == [("PodScheduled", "True")]
    with pytest.raises(ConflictError, match='pod web is already assigned to node "n1"'):
        client.bind("default", "web", "", "n2")
    with pytest.raises(NotFoundError):
        client.bind("default", "gone", "", "n2")

    client.create_event(
        {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": "web.1", "namespace": "default"},
            "eventTime": "2024-01-02T03:04:05Z",
            "reason": "Scheduled",
            "action": "Binding",
            "type": "Normal",
            "note": "n",
            "reportingController": "kubesched",
            "reportingInstance": "kubesched-x",
            "regarding": {"kind": "Pod", "namespace": "default", "name": "web"},
        }
    )
    ev = [e for e in server.cluster.events() if e["metadata"]["name"] == "web.1"][0]
    assert ev["eventTime"] == "2024-01-02T03:04:05.000000Z"
    client.delete("Pod", "default", "web")
    # bound pod: graceful deletion (the server applies the grace period)
    assert client.get("Pod", "default", "web")["metadata"]["deletionTimestamp"]
    assert client.limiter.taken >= 14  # type: ignore[union-attr]


def test_list_pages_and_fills_kind(server: ServerHandle, client: KubeClusterClient, monkeypatch: Any) -> None:
    import kubesched.client.kube as kube

    monkeypatch.setattr(kube, "LIST_PAGE_SIZE", 3)
    for i in range(8):
        server.cluster.create(_pod(f"p{i}", ns="b" if i % 2 else "a"))
    res = client.list("Pod")
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in res.items] == sorted(
        (("b" if i % 2 else "a"), f"p{i}") for i in range(8)
    )
    assert {o["kind"] for o in res.items} == {
        "Pod"
    } and res.resource_version == server.cluster.resource_version
    assert len(client.list("Pod", "a").items) == 4
    pages = [r for r in server.state.requests.to_json()["requests"] if r["path"] == "/api/v1/pods"]
    assert sum(r["count"] for r in pages) == 3


def test_retry_after_429_then_500_raises(server: ServerHandle, client: KubeClusterClient) -> None:
    server.state.faults.add(_rule(429, 2, "/api/v1/namespaces/default/pods/x$", retry_after=0))
    server.cluster.create(_pod("x"))
    assert client.get("Pod", "default", "x")["metadata"]["name"] == "x"
    server.state.faults.add(_rule(500, 1, "/api/v1/namespaces/default/pods/x$"))
    with pytest.raises(KubeApiError) as ei:
        client.get("Pod", "default", "x")
    assert (ei.value.code, str(ei.value)) == (500, "injected fault (HTTP 500)")


def _rule(status: int, count: int, paths: str, retry_after: int = 1) -> Any:
    from kubesched.embedded.apiserver.testhooks import FaultRule

    return FaultRule(status, count, paths, frozenset(), retry_after)


def test_watch_resumes_after_drop_and_reports_gone(server: ServerHandle, client: KubeClusterClient) -> None:
    seen: list[tuple[str, str]] = []
    lock = threading.Lock()

    def handler(ev: WatchEvent) -> None:
        if ev.type != "BOOKMARK":
            with lock:
                seen.append((ev.type, ev.object["metadata"]["name"]))

    gone = threading.Event()
    rv = server.cluster.resource_version
    w = client.watch_resumable("Pod", rv, handler, gone.set)
    server.cluster.create(_pod("a"))
    wait_for(lambda: ("ADDED", "a") in seen, 10, "ADDED a")
    wait_for(lambda: w.connections == 1, 5, "connected")
    assert server.state.hub.drop_all() == 1
    server.cluster.create(_pod("b"))
    wait_for(lambda: ("ADDED", "b") in seen, 10, "ADDED b after the drop")
    assert w.connections == 2 and seen.count(("ADDED", "a")) == 1
    # compact while the watch cannot reconnect: it resumes from an expired version -> 410
    server.state.faults.add(_rule(500, 1000, "^/api/v1/pods$"))
    server.state.hub.drop_all()
    server.cluster.create(_pod("c"))
    server.cluster.compact()
    server.state.faults.clear()
    assert gone.wait(15)
    wait_for(lambda: not w.active, 5, "watch ended")
    w.stop()


def test_informer_relists_after_gone_without_losing_or_duplicating(
    server: ServerHandle, client: KubeClusterClient
) -> None:
    server.cluster.create(_pod("keep"))
    server.cluster.create(_pod("drop"))
    adds: list[str] = []
    deletes: list[str] = []
    updates: list[str] = []
    inf = Informer(client, "Pod")
    inf.add_handlers(
        ResourceEventHandlerFuncs(
            lambda o: adds.append(o["metadata"]["name"]),
            lambda old, new: updates.append(new["metadata"]["name"]),
            lambda o: deletes.append(o["metadata"]["name"]),
        )
    )
    inf.start()
    try:
        assert sorted(adds) == ["drop", "keep"] and inf.synced
        server.state.faults.add(_rule(500, 1000, "^/api/v1/pods$"))
        server.state.hub.drop_all()
        server.cluster.create(_pod("new"))
        server.cluster.delete("Pod", "default", "drop")
        keep = server.cluster.get("Pod", "default", "keep")
        server.cluster.update({**keep, "metadata": {**keep["metadata"], "labels": {"x": "y"}}})
        server.cluster.compact()
        server.state.faults.clear()
        wait_for(lambda: inf.relists == 1 and "new" in adds, 20, "re-list")
        assert sorted(adds) == ["drop", "keep", "new"]
        assert deletes == ["drop"] and updates == ["keep"]
        assert sorted(k[1] for k in inf.store) == ["keep", "new"]
        server.cluster.create(_pod("after"))
        wait_for(lambda: "after" in adds, 10, "watch after the re-list")
    finally:
        inf.stop()
