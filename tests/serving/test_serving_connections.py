"""Connection management of the scheduler's HTTP(S) endpoint: idle connections take no thread and
are closed after the keep-alive timeout, a client trickling its request headers is closed as
well, concurrent requests do not add a thread each, keep-alive and pipelining still work, over
TLS too; and a ``kubesched run`` process keeps its thread count with 2,000 idle connections open."""

from __future__ import annotations

import http.client
import os
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from run_support import Cluster, Replica, scheduler_config

from kubesched.serving import http as status_http
from kubesched.serving.http import StatusServer
from kubesched.serving.tls import self_signed_pem


@pytest.fixture
def short_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(status_http, "KEEPALIVE_TIMEOUT", 1.0)


def _status_server(tls: ssl.SSLContext | None = None) -> StatusServer:
    return StatusServer("127.0.0.1", 0, synced=lambda: True, tls=tls).start()


@pytest.fixture
def server(short_timeouts: None) -> Iterator[StatusServer]:
    s = _status_server()
    try:
        yield s
    finally:
        s.stop()


def _get(port: int, path: str = "/healthz") -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def _closed_by_server(s: socket.socket, timeout: float) -> bool:
    s.settimeout(timeout)
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_idle_connections_take_no_thread_and_are_closed_after_the_idle_timeout(server: StatusServer) -> None:
    before = threading.active_count()
    socks = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(500)]
    try:
        assert _get(server.port) == (200, b"ok")  # a probe gets through
        assert threading.active_count() - before <= 8
        start = time.monotonic()
        assert all(_closed_by_server(s, 5) for s in socks)
        assert time.monotonic() - start < 5
    finally:
        for s in socks:
            s.close()


def test_a_client_trickling_its_headers_is_closed_after_the_timeout(server: StatusServer) -> None:
    s = socket.create_connection(("127.0.0.1", server.port))
    try:
        s.sendall(b"GET /healthz HTTP/1.1\r\n")
        start = time.monotonic()
        closed = False
        while time.monotonic() - start < 5:  # one header byte every 0.3 s: each read is quick
            try:
                s.sendall(b"X")
            except OSError:
                closed = True
                break
            if _closed_by_server(s, 0.3):
                closed = True
                break
        assert closed and time.monotonic() - start < 4.5
    finally:
        s.close()


def test_keep_alive_and_pipelined_requests_are_served(server: StatusServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        for path, code in (("/healthz", 200), ("/readyz", 200), ("/nope", 404)):
            conn.request("GET", path)
            r = conn.getresponse()
            assert r.status == code
            r.read()
    finally:
        conn.close()
    s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    try:
        req = f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode()
        s.sendall(req * 3)
        got = b""
        while got.count(b"\r\n\r\nok") < 3:
            chunk = s.recv(65536)
            assert chunk, got
            got += chunk
        assert got.count(b"HTTP/1.1 200 OK") == 3
    finally:
        s.close()


def test_concurrent_requests_do_not_add_a_thread_each(server: StatusServer) -> None:
    before = threading.active_count()
    results: list[tuple[int, bytes]] = []
    threads = [threading.Thread(target=lambda: results.append(_get(server.port))) for _ in range(40)]
    for t in threads:
        t.start()
    peak = 0
    while any(t.is_alive() for t in threads):
        peak = max(peak, threading.active_count() - before - sum(t.is_alive() for t in threads))
        time.sleep(0.01)
    assert results == [(200, b"ok")] * 40
    assert peak <= 8  # server threads, whatever the number of concurrent requests


def test_tls_connections_are_managed_the_same(short_timeouts: None, tmp_path: Path) -> None:
    cert, key = self_signed_pem("127.0.0.1")
    (tmp_path / "tls.crt").write_bytes(cert)
    (tmp_path / "tls.key").write_bytes(key)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    server = _status_server(ctx)
    try:
        client = ssl.create_default_context(cafile=str(tmp_path / "tls.crt"))
        conn = http.client.HTTPSConnection("127.0.0.1", server.port, timeout=5, context=client)
        try:
            for _ in range(2):
                conn.request("GET", "/healthz")
                r = conn.getresponse()
                assert (r.status, r.read()) == (200, b"ok")
        finally:
            conn.close()
    finally:
        server.stop()


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs /proc")
def test_kubesched_run_keeps_its_threads_with_2000_idle_connections(tmp_path: Path) -> None:
    cluster = Cluster(tmp_path)
    replica: Replica | None = None
    socks: list[socket.socket] = []
    try:
        replica = Replica(cluster, scheduler_config(tmp_path, cluster.namespace), name="r")
        replica.wait_ready(timeout=60)
        time.sleep(1.0)
        before = _threads(replica.proc.pid)
        for _ in range(2000):
            socks.append(socket.create_connection(("127.0.0.1", replica.port)))
        time.sleep(1.0)
        assert replica.get("/healthz", 5)[:2] == (200, b"ok")
        after = _threads(replica.proc.pid)
        print(f"kubesched run threads: {before} idle, {after} with 2000 idle connections")
        assert after - before <= 8
    finally:
        for s in socks:
            s.close()
        if replica is not None:
            replica.stop()
        cluster.close()
