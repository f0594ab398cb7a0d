"""``kubesched serve`` closes connections that send no request, or trickle their headers, after
the idle timeout (90 s by default, as kube-apiserver's ``IdleTimeout``), without a thread per
connection."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from run_support import wait_for

from kubesched.embedded.apiserver import server as server_mod
from kubesched.embedded.apiserver import start_server


def _closed(s: socket.socket) -> bool:
    s.settimeout(0.05)
    try:
        return s.recv(100) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_idle_and_trickling_connections_are_closed_after_the_idle_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert server_mod.IDLE_TIMEOUT == 90.0
    monkeypatch.setattr(server_mod, "IDLE_TIMEOUT", 1.5)
    handle = start_server()
    before = threading.active_count()
    try:
        idle = [socket.create_connection(("127.0.0.1", handle.port)) for _ in range(300)]
        trickle = socket.create_connection(("127.0.0.1", handle.port))
        trickle.sendall(b"GET /healthz HTTP/1.1\r\n")
        kept = socket.create_connection(("127.0.0.1", handle.port))
        kept.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{handle.port}\r\n\r\n".encode())
        kept.settimeout(5)
        assert kept.recv(100).startswith(b"HTTP/1.1 200 OK")
        assert threading.active_count() - before <= 1
        start = time.monotonic()

        def trickled_out() -> bool:
            try:
                trickle.sendall(b"X")  # one header byte at a time does not keep it open
            except OSError:
                return True
            return _closed(trickle)

        wait_for(trickled_out, 10, "the trickling connection closed", interval=0.3)
        wait_for(lambda: _closed(kept), 10, "the idle keep-alive connection closed")
        wait_for(lambda: all(_closed(s) for s in idle), 10, "the idle connections closed")
        assert time.monotonic() - start < 6
        for s in [*idle, trickle, kept]:
            s.close()
    finally:
        handle.stop()
