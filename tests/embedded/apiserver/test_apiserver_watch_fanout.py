"""Watch fan-out of ``kubesched serve``: one serialization per event whatever the number of
watchers, no work for watchers of other namespaces or nodes, bounded buffers that close a client
that does not read, a write deadline; and the create latency with 0 vs 1,000 watches (printed, not
asserted)."""

from __future__ import annotations

import json
import selectors
import socket
import statistics
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from apiserver_support import api_client, server_fixture
from run_support import wait_for
from serve_support import ServeProcess

from kubesched.embedded.apiserver import ServerHandle, start_server
from kubesched.embedded.apiserver import watch as watch_mod
from kubesched.embedded.apiserver.watch import WatchLimits, WatchStream, index_key


def _pod(name: str, namespace: str = "default", node: str = "", annotation: int = 0) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotation:
        meta["annotations"] = {"pad": "x" * annotation}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _open_watch(port: int, path: str, rcvbuf: int | None = None) -> socket.socket:
    s = socket.socket()
    if rcvbuf is not None:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", port))
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    return s


class _Reader:
    """Reads watch sockets on a thread; counts the watch lines of each."""

    def __init__(self, socks: list[socket.socket]) -> None:
        self.data = {s: b"" for s in socks}
        self._stop = False
        self._sel = selectors.DefaultSelector()
        for s in socks:
            s.setblocking(False)
            self._sel.register(s, selectors.EVENT_READ)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop:
            for key, _ in self._sel.select(0.1):
                try:
                    chunk = key.fileobj.recv(1 << 16)  # type: ignore[union-attr]
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if not chunk:
                    self._sel.unregister(key.fileobj)
                    continue
                self.data[key.fileobj] += chunk  # type: ignore[index]

    def lines(self, s: socket.socket, type_: str) -> int:
        return self.data[s].count(b'{"type":"' + type_.encode() + b'"')

    def stop(self) -> None:
        self._stop = True
        self._thread.join(5)
        for s in self.data:
            s.close()


server = server_fixture(bookmark_interval=0.2)


def _streams(server: ServerHandle) -> list[WatchStream]:
    done: list[list[WatchStream]] = []
    server._loop.call_soon_threadsafe(lambda: done.append(server.state.hub.streams()))
    wait_for(lambda: done, 10, "the hub's streams")
    return done[0]


def test_an_event_is_serialized_once_for_all_its_watchers(
    server: ServerHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoded: list[str] = []
    real = watch_mod.encode_object

    def counting(obj: dict[str, Any]) -> bytes:
        encoded.append((obj.get("metadata") or {}).get("name", ""))
        return real(obj)

    monkeypatch.setattr(watch_mod, "encode_object", counting)
    socks = [_open_watch(server.port, "/api/v1/pods?watch=1") for _ in range(50)]
    socks += [_open_watch(server.port, "/api/v1/namespaces/default/pods?watch=1") for _ in range(50)]
    reader = _Reader(socks)
    try:
        wait_for(lambda: len(server.state.hub) == 100, 10, "100 watches open")
        for i in range(5):
            server.cluster.create(_pod(f"p{i}"))
        wait_for(lambda: all(reader.lines(s, "ADDED") == 5 for s in socks), 20, "every watcher got 5 ADDED")
        assert sorted(encoded) == ["p0", "p1", "p2", "p3", "p4"]  # once per event, not per watcher
    finally:
        reader.stop()


def test_watchers_of_other_namespaces_and_nodes_cost_nothing(
    server: ServerHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    offered: list[WatchStream] = []
    real = WatchStream.offer

    def counting(self: WatchStream, enc: Any) -> None:
        offered.append(self)
        real(self, enc)

    monkeypatch.setattr(WatchStream, "offer", counting)
    others = [_open_watch(server.port, f"/api/v1/namespaces/ns-{i}/pods?watch=1") for i in range(100)]
    kubelets = [
        _open_watch(server.port, f"/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3Dnode-{i}")
        for i in range(100)
    ]
    reader = _Reader(others + kubelets)
    try:
        wait_for(lambda: len(server.state.hub) == 200, 10, "200 watches open")
        for i in range(20):
            server.cluster.create(_pod(f"p{i}", "default"))
        server.cluster.create(_pod("bound", "ns-7", node="node-3"))
        wait_for(
            lambda: reader.lines(others[7], "ADDED") == 1 and reader.lines(kubelets[3], "ADDED") == 1,
            20,
            "the watchers of ns-7 and node-3 got the bound pod",
        )
        time.sleep(0.3)
        assert len(offered) == 2  # the 20 pending pods in "default" reached no watcher
        assert sum(reader.lines(s, "ADDED") for s in others + kubelets) == 2
    finally:
        reader.stop()
    assert index_key("Pod", "a", "spec.nodeName=n1,metadata.name=x") == ("node", "n1")
    assert index_key("Pod", None, "spec.nodeName==n1") == ("node", "n1")
    assert index_key("Pod", "a", "spec.nodeName!=n1") == ("namespace", "a")
    assert index_key("Pod", None, "status.phase=Running") is None
    assert index_key("Node", None, "spec.nodeName=n1") is None


def test_a_client_that_does_not_read_is_closed_and_memory_stays_bounded() -> None:
    # the stuck client is closed by whichever bound it reaches first: its buffer (200 events /
    # 1 MiB) or, when the kernel's socket buffers took the writes so far, the write that does not
    # complete in 3 s; the reading client, whose thread shares the GIL with the creating loop,
    # may lag up to 200 events
    limits = WatchLimits(buffer_events=200, buffer_bytes=1024 * 1024, write_timeout=3.0)
    handle = start_server(bookmark_interval=0.2, watch_limits=limits)
    try:
        stuck = _open_watch(handle.port, "/api/v1/pods?watch=1", rcvbuf=4096)
        good = _open_watch(handle.port, "/api/v1/pods?watch=1")
        reader = _Reader([good])
        try:
            wait_for(lambda: len(handle.state.hub) == 2, 10, "2 watches open")
            streams = _streams(handle)
            for i in range(1500):
                handle.cluster.create(_pod(f"p{i}", annotation=4096))
            wait_for(lambda: len(handle.state.hub) == 1, 30, "the stuck watch closed")
            assert all(s.peak_bytes <= limits.buffer_bytes and len(s.pending) == 0 for s in streams)
            wait_for(lambda: reader.lines(good, "ADDED") == 1500, 60, "the reading client got every event")
            # the stuck client, once it reads, finds its stream cut off (it re-watches from what it got)
            stuck.settimeout(10)
            got = b""
            try:
                while chunk := stuck.recv(1 << 16):
                    got += chunk
            except ConnectionResetError:
                pass
            assert 0 < got.count(b'"type":"ADDED"') < 1500
        finally:
            reader.stop()
            stuck.close()
    finally:
        handle.stop()


def test_a_write_that_does_not_complete_within_the_deadline_closes_the_watch() -> None:
    limits = WatchLimits(buffer_events=100_000, buffer_bytes=1 << 30, write_timeout=1.0)
    handle = start_server(bookmark_interval=0.2, watch_limits=limits)
    try:
        stuck = _open_watch(handle.port, "/api/v1/pods?watch=1", rcvbuf=4096)
        wait_for(lambda: len(handle.state.hub) == 1, 10, "the watch open")
        for i in range(400):  # ~40 MB: more than the socket buffers hold
            handle.cluster.create(_pod(f"p{i}", annotation=100_000))
        wait_for(lambda: len(handle.state.hub) == 0, 30, "the stuck watch closed by the write deadline")
        assert handle.state.hub.slow_writes == 1
        stuck.close()
    finally:
        handle.stop()


def _create_latencies(port: int, tag: str, n: int) -> list[float]:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    out = []
    try:
        for i in range(n):
            body = json.dumps(_pod(f"{tag}-{i}"))
            t0 = time.perf_counter()
            conn.request(
                "POST",
                "/api/v1/namespaces/default/pods",
                body=body,
                headers={"Content-Type": "application/json"},
            )
            resp = conn.getresponse()
            resp.read()
            out.append((time.perf_counter() - t0) * 1000)
            assert resp.status == 201
    finally:
        conn.close()
    return out


def test_create_latency_with_0_and_1000_watches_figures(tmp_path: Path) -> None:
    """Prints median create latencies through ``kubesched serve`` (loopback) with no watch, 1,000
    watches of other namespaces, 1,000 kubelet-style ``spec.nodeName`` watches and 200 watches
    that receive every pod; asserts only that every watcher got what it asked for."""
    serve = ServeProcess(tmp_path).wait_ready()
    try:
        _create_latencies(serve.port, "warm-up", 50)
        figures = {"no watch": statistics.median(_create_latencies(serve.port, "base", 200))}
        for label, count, path in (
            ("1000 watches of other namespaces", 1000, "/api/v1/namespaces/other-{i}/pods?watch=1"),
            (
                "1000 spec.nodeName watches",
                1000,
                "/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3Dnode-{i}",
            ),
            ("200 watches of every pod", 200, "/api/v1/pods?watch=1&resourceVersion={rv}"),
        ):
            with urllib.request.urlopen(serve.url + "/api/v1/pods?limit=1") as r:
                rv = json.loads(r.read())["metadata"]["resourceVersion"]
            socks = [_open_watch(serve.port, path.format(i=i, rv=rv)) for i in range(count)]
            reader = _Reader(socks)
            try:
                time.sleep(1.0)
                tag = label.split()[1].replace(".", "")
                figures[label] = statistics.median(_create_latencies(serve.port, tag + label[:4], 200))
                if "every" in label:

                    def all_events(reader: _Reader = reader, socks: list[socket.socket] = socks) -> bool:
                        return all(reader.lines(s, "ADDED") == 200 for s in socks)

                    wait_for(all_events, 60, "all events")
                else:
                    assert sum(reader.lines(s, "ADDED") for s in socks) == 0
            finally:
                reader.stop()
        for label, ms in figures.items():
            print(f"create latency, median of 200, {label}: {ms:.2f} ms")
    finally:
        serve.stop()


def test_a_client_closed_for_falling_behind_rewatches_and_misses_nothing() -> None:

    from kubesched.client.client import WatchEvent
    from kubesched.client.kube import KubeClusterClient

    limits = WatchLimits(buffer_events=20, buffer_bytes=1 << 20, write_timeout=30.0)
    handle = start_server(bookmark_interval=0.2, watch_limits=limits)
    client = KubeClusterClient(api_client(handle), None, watch_timeout=(5, 30))
    seen: list[str] = []
    gone = threading.Event()

    def slow(ev: WatchEvent) -> None:
        time.sleep(0.01)  # a handler slower than the writes
        if ev.type == "ADDED":
            seen.append(ev.object["metadata"]["name"])

    try:
        w = client.watch_resumable("Pod", handle.cluster.resource_version, slow, gone.set)
        wait_for(lambda: len(handle.state.hub) == 1, 10, "the watch open")
        names = [f"p{i}" for i in range(200)]
        for n in names:
            handle.cluster.create(_pod(n, annotation=100_000))  # 20 MB: more than the socket buffers
        wait_for(lambda: len(seen) == 200, 120, "every pod seen")
        assert seen == names and not gone.is_set()  # resumed from its last resourceVersion, no re-list
        assert w.connections >= 2  # it was closed for falling behind, and re-watched
    finally:
        client.close()
        handle.stop()
