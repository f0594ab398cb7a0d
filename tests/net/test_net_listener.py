"""Connection limits of every listener (kubesched.net.listener): caps on open connections and
per client address with the oldest idle connection closed to make room, a head deadline for the
TLS handshake and the first request head, TLS from the first byte, and request heads up to
1 MiB. Loopback only, a handful of connections each."""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from aiohttp import web

from kubesched.net.listener import ConnectionLimits, LimitedSite, handler_args
from kubesched.serving.tls import self_signed_pem


@contextmanager
def site(limits: ConnectionLimits, tls: ssl.SSLContext | None = None) -> Iterator[LimitedSite]:
    """An aiohttp app on 127.0.0.1: ``/ok`` answers at once, ``/slow`` after 1.5 s, anything else
    echoes its path length."""

    async def ok(_: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def slow(_: web.Request) -> web.Response:
        await asyncio.sleep(1.5)
        return web.Response(text="slow")

    async def other(request: web.Request) -> web.Response:
        return web.Response(text=str(len(request.path)))

    app = web.Application()
    app.router.add_get("/ok", ok)
    app.router.add_get("/slow", slow)
    app.router.add_get("/{tail:.*}", other)
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5, **handler_args())
    s: list[LimitedSite] = []

    async def start() -> None:
        await runner.setup()
        st = LimitedSite(runner, "127.0.0.1", 0, ssl_context=tls, limits=limits)
        await st.start()
        s.append(st)

    loop.run_until_complete(start())
    t = threading.Thread(target=loop.run_forever, daemon=True)
    t.start()
    try:
        yield s[0]
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        t.join(5)
        loop.close()


def get(port: int, path: str = "/ok", sock: socket.socket | None = None) -> bytes:
    """One HTTP/1.1 GET (on ``sock`` if given); the whole answer."""
    s = sock or socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        out = b""
        while chunk := s.recv(65536):
            out += chunk
        return out
    finally:
        s.close()


def read_all(s: socket.socket) -> bytes:
    out = b""
    while chunk := s.recv(65536):
        out += chunk
    s.close()
    return out


def closed(s: socket.socket, wait: float = 0.5) -> bool:
    s.settimeout(wait)
    try:
        return s.recv(1) == b""
    except TimeoutError:
        return False
    except (ConnectionResetError, ssl.SSLError):
        return True


def wait_until(cond: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


def test_over_the_cap_the_oldest_idle_connection_makes_room() -> None:
    with site(ConnectionLimits(max_connections=3, max_per_client=3, head_timeout=30)) as st:
        idle = [socket.create_connection(("127.0.0.1", st.port)) for _ in range(3)]
        wait_until(lambda: st.open_connections() == 3)
        assert get(st.port).endswith(b"\r\n\r\nok")  # the 4th connection closes the oldest idle one
        assert st.evicted == 1 and st.refused == 0
        assert closed(idle[0]) and not closed(idle[1], 0.1) and not closed(idle[2], 0.1)
        for s in idle:
            s.close()


def test_busy_connections_are_never_closed_for_room_the_newcomer_is() -> None:
    with site(ConnectionLimits(max_connections=2, max_per_client=2, head_timeout=30)) as st:
        busy = [socket.create_connection(("127.0.0.1", st.port), timeout=5) for _ in range(2)]
        for s in busy:
            s.sendall(b"GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        wait_until(lambda: st.open_connections() == 2)
        time.sleep(0.2)
        late = socket.create_connection(("127.0.0.1", st.port))
        assert closed(late, 2.0)
        assert st.refused == 1 and st.evicted == 0
        for s in busy:
            assert read_all(s).endswith(b"\r\n\r\nslow")


def test_per_client_cap() -> None:
    with site(ConnectionLimits(max_connections=100, max_per_client=2, head_timeout=30)) as st:
        idle = [socket.create_connection(("127.0.0.1", st.port)) for _ in range(5)]
        wait_until(lambda: st.evicted == 3)
        assert st.open_connections() == 2
        assert [closed(s, 0.2) for s in idle] == [True, True, True, False, False]
        for s in idle:
            s.close()


def tls_pair(tmp_path: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    cert, key = self_signed_pem("127.0.0.1")
    (tmp_path / "c.pem").write_bytes(cert)
    (tmp_path / "k.pem").write_bytes(key)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(tmp_path / "c.pem", tmp_path / "k.pem")
    client = ssl.create_default_context(cafile=str(tmp_path / "c.pem"))
    return server, client


@pytest.mark.parametrize("use_tls", [False, True])
def test_head_deadline_closes_silent_and_trickling_connections(use_tls: bool, tmp_path: Path) -> None:
    server_ctx, client_ctx = tls_pair(tmp_path) if use_tls else (None, None)
    with site(ConnectionLimits(head_timeout=1.0), tls=server_ctx) as st:
        silent = socket.create_connection(("127.0.0.1", st.port))
        trickling = socket.create_connection(("127.0.0.1", st.port))
        if client_ctx is not None:
            trickling = client_ctx.wrap_socket(trickling, server_hostname="127.0.0.1")
        start = time.monotonic()
        trickling.sendall(b"GET /ok HTTP/1.1\r\n")
        time.sleep(0.5)
        trickling.sendall(b"Host: x\r\n")
        assert closed(silent, 3.0) and closed(trickling, 3.0)
        assert 0.9 <= time.monotonic() - start < 2.5
        assert st.head_timeouts == 2 and st.open_connections() == 0
        # a client that sends its head in time is served, over TLS too
        s = socket.create_connection(("127.0.0.1", st.port), timeout=5)
        if client_ctx is not None:
            s = client_ctx.wrap_socket(s, server_hostname="127.0.0.1")
        assert get(st.port, sock=s).endswith(b"\r\n\r\nok")


def test_tls_starts_on_the_first_byte_and_keep_alive_requests_follow(tmp_path: Path) -> None:
    server_ctx, client_ctx = tls_pair(tmp_path)
    with site(ConnectionLimits(head_timeout=5.0), tls=server_ctx) as st:
        bare = socket.create_connection(("127.0.0.1", st.port))
        wait_until(lambda: st.open_connections() == 1)
        time.sleep(0.1)
        assert [c._tls_started for c in st._open] == [False]  # nothing received: no TLS state yet
        s = client_ctx.wrap_socket(
            socket.create_connection(("127.0.0.1", st.port), timeout=5), server_hostname="127.0.0.1"
        )
        s.sendall(b"GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
        first = s.recv(65536)
        assert first.startswith(b"HTTP/1.1 200") and first.endswith(b"ok")
        assert get(st.port, sock=s).endswith(b"\r\n\r\nok")
        wait_until(lambda: st.open_connections() == 1)  # the bare one, until its deadline
        bare.close()
        wait_until(lambda: st.open_connections() == 0)


def test_request_heads_up_to_one_mebibyte_are_served() -> None:
    with site(ConnectionLimits()) as st:
        path = "/" + "a" * 20_000
        answer = get(st.port, path)
        assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"\r\n\r\n20001")
        too_long = get(st.port, "/" + "a" * (1 << 20))
        assert too_long.startswith(b"HTTP/1.0 400 Bad Request")  # aiohttp's answer (Go: 431)
