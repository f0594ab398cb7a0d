"""Connection limits of an aiohttp listener (``run``'s secure and insecure ports, ``serve``, ``ui``).

Go's ``http.Server`` (kube-scheduler, kube-apiserver) caps a connection's request head at 1 MiB
(``MaxHeaderBytes``) and, with ``ReadHeaderTimeout``, the time to send it; an idle connection
costs it a few KiB. An asyncio server that wraps every accepted socket in TLS at once allocates a
256 KiB read buffer per connection before a byte arrives, and waits 60 s for a handshake and for
ever for a first request: thousands of bare TCP connections, unauthenticated, exhaust memory.
:class:`LimitedSite` (an ``aiohttp.web.BaseSite``) serves an ``AppRunner`` with:

* **a cap on open connections** (:attr:`ConnectionLimits.max_connections`) and **per client
  address** (:attr:`ConnectionLimits.max_per_client`). A connection over a cap first makes room by
  closing the oldest *idle* connection (of that address for the per-address cap): one that has no
  request in progress -- it has not sent a complete request head yet, or waits between
  keep-alive requests. When every connection is busy, the new one is closed at once.
* **a head deadline**: the TLS handshake and the first request head must arrive within
  :attr:`ConnectionLimits.head_timeout` seconds of the accept, else the connection is closed
  (later requests on a keep-alive connection are bounded by aiohttp's ``keepalive_timeout``).
* **TLS started on the first byte**: the handshake (and its buffers) begins when the client sends
  something, so an idle TCP connection costs the socket and a small object.
* **memory given back**: after many connections closed, glibc's ``malloc_trim(0)`` returns the
  freed heap pages to the system (CPython's allocator keeps them in glibc's arenas otherwise).

Request heads up to :data:`MAX_HEAD_BYTES` (1 MiB: URLs and header values longer than aiohttp's
8 KiB default, as Go serves them) are accepted by the runners of the listeners
(:func:`handler_args`).
"""

from __future__ import annotations

import asyncio
import asyncio.sslproto as sslproto
import ctypes
import ctypes.util
import logging
import ssl
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from aiohttp import web

__all__ = ["MAX_HEAD_BYTES", "ConnectionLimits", "LimitedSite", "handler_args"]

log = logging.getLogger(__name__)

#: longest request line or header field accepted, bytes (Go's ``http.DefaultMaxHeaderBytes``)
MAX_HEAD_BYTES = 1 << 20
#: connections closed since the last trim after which the heap is trimmed
_TRIM_AFTER_CLOSES = 256
#: least seconds between two trims
_TRIM_INTERVAL = 5.0


def handler_args() -> dict[str, Any]:
    """``AppRunner`` keyword arguments of aiohttp's request handler: request lines and header
    fields up to :data:`MAX_HEAD_BYTES`."""
    return {"max_line_size": MAX_HEAD_BYTES, "max_field_size": MAX_HEAD_BYTES}


@dataclass(frozen=True)
class ConnectionLimits:
    """``max_connections``: open connections of the listener; ``max_per_client``: open
    connections of one client address; ``head_timeout``: seconds from the accept to the end of
    the first request head (TLS handshake included)."""

    max_connections: int = 2048
    max_per_client: int = 1024
    head_timeout: float = 5.0


class _Trimmer:
    """``malloc_trim(0)`` of glibc, at most every :data:`_TRIM_INTERVAL` seconds and only after
    :data:`_TRIM_AFTER_CLOSES` connections closed (a no-op where glibc is absent)."""

    def __init__(self) -> None:
        self._fn: Any = None
        name = ctypes.util.find_library("c")
        if name:
            try:
                self._fn = ctypes.CDLL(name).malloc_trim
            except (OSError, AttributeError):
                self._fn = None
        self._closes = 0
        self._last = 0.0
        self._scheduled = False
        #: trims done so far
        self.trims = 0

    def closed(self, loop: asyncio.AbstractEventLoop) -> None:
        self._closes += 1
        if self._fn is None or self._scheduled or self._closes < _TRIM_AFTER_CLOSES:
            return
        self._scheduled = True
        delay = max(0.5, self._last + _TRIM_INTERVAL - time.monotonic())
        loop.call_later(delay, self._trim)

    def _trim(self) -> None:
        self._scheduled = False
        self._closes = 0
        self._last = time.monotonic()
        self._fn(0)
        self.trims += 1


class _TLSProtocol(sslproto.SSLProtocol):
    """asyncio's TLS protocol with a 32 KiB socket read buffer instead of 256 KiB (two TLS records;
    the buffer is allocated per connection when the handshake starts)."""

    max_size = 32 * 1024


class _Limited(asyncio.Protocol):
    """One accepted TCP connection: counts it against the caps, enforces the head deadline and,
    with TLS, starts the handshake on the first bytes received; the application side
    (:class:`_App`) forwards to aiohttp's request handler."""

    def __init__(self, site: LimitedSite) -> None:
        self.site = site
        self.transport: asyncio.Transport | None = None
        self.app = _App(self)
        self.client = ""
        self.head_seen = False
        self._deadline: asyncio.TimerHandle | None = None
        self._tls_started = False
        self._gone = False

    def busy(self) -> bool:
        """A request is in progress (its head arrived and its answer is not complete)."""
        return self.head_seen and bool(getattr(self.app.inner, "_request_in_progress", False))

    def close(self) -> None:
        """Close the connection at once (no TLS close_notify, no lingering)."""
        t = self.transport
        if t is not None and not t.is_closing():
            t.abort()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        peer = transport.get_extra_info("peername")
        self.client = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        if not self.site._admit(self):
            self._gone = True
            transport.abort()
            return
        self._deadline = asyncio.get_running_loop().call_later(
            self.site.limits.head_timeout, self._head_deadline
        )
        if self.site.ssl_context is None:
            self.app.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.site.ssl_context is None:
            self.app.data_received(data)
            return
        if self._tls_started or self._gone or self.transport is None:
            return
        self._tls_started = True
        # the TLS layer takes the socket from here on; these first bytes are its first input
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        waiter.add_done_callback(self._handshake_done)
        tls = _TLSProtocol(
            loop,
            self.app,
            self.site.ssl_context,
            waiter,
            server_side=True,
            ssl_handshake_timeout=self.site.limits.head_timeout,  # type: ignore[arg-type]
        )
        transport = self.transport
        transport.set_protocol(tls)
        tls.connection_made(transport)
        buf = tls.get_buffer(len(data))
        n = min(len(buf), len(data))
        buf[:n] = data[:n]
        tls.buffer_updated(n)
        if n < len(data):  # a first read larger than the buffer: no client's ClientHello
            transport.abort()

    def _handshake_done(self, waiter: asyncio.Future[None]) -> None:
        if not waiter.cancelled() and waiter.exception() is not None:
            log.debug("TLS handshake from %s failed: %s", self.client, waiter.exception())
        if self.app.inner is None:  # failed, timed out or the client left during the handshake
            self.close()
            self.forget()

    def eof_received(self) -> bool | None:
        if self.site.ssl_context is None:
            return self.app.eof_received()
        return None

    def pause_writing(self) -> None:
        self.app.pause_writing()

    def resume_writing(self) -> None:
        self.app.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.site.ssl_context is None:
            self.app.connection_lost(exc)
        self.forget()

    def _head_deadline(self) -> None:
        self._deadline = None
        if not self.head_seen:
            self.site.head_timeouts += 1
            self.close()
            self.forget()

    def forget(self) -> None:
        """Leave the site's books (idempotent)."""
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        if not self._gone:
            self._gone = True
            self.site._release(self)


class _App(asyncio.Protocol):
    """The application side of a connection (the plain TCP transport, or the TLS one after the
    handshake): creates aiohttp's request handler and forwards to it, noting when the first request
    head is complete."""

    def __init__(self, conn: _Limited) -> None:
        self.conn = conn
        self.inner: Any = None
        self._tail = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self.conn._gone:
            transport.abort()  # type: ignore[attr-defined]
            return
        self.inner = self.conn.site.protocol_factory()
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        conn = self.conn
        if not conn.head_seen:
            buf = self._tail + data
            if b"\r\n\r\n" in buf:
                conn.head_seen = True
                if conn._deadline is not None:
                    conn._deadline.cancel()
                    conn._deadline = None
                self._tail = b""
            else:
                self._tail = buf[-3:]
        if self.inner is not None:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        if self.inner is not None:
            return self.inner.eof_received()  # type: ignore[no-any-return]
        return None

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        inner, self.inner = self.inner, None
        if inner is not None:
            inner.connection_lost(exc)
        self.conn.forget()


class LimitedSite(web.BaseSite):
    """A TCP site of ``runner`` on ``host:port`` (``port`` 0: any free port, see :attr:`port`)
    with :class:`ConnectionLimits` (module docstring) and optional TLS. Counters:
    :attr:`refused` (connections closed at once, every slot busy), :attr:`evicted` (idle
    connections closed to make room), :attr:`head_timeouts`."""

    def __init__(
        self,
        runner: web.BaseRunner,
        host: str | None,
        port: int,
        *,
        ssl_context: ssl.SSLContext | None = None,
        limits: ConnectionLimits | None = None,
        backlog: int = 1024,
        reuse_address: bool | None = None,
        shutdown_timeout: float = 60.0,
    ) -> None:
        super().__init__(runner, shutdown_timeout=shutdown_timeout, ssl_context=ssl_context, backlog=backlog)
        self._host = host
        self._requested_port = port
        self.port = port
        self.ssl_context = ssl_context
        self._reuse_address = reuse_address
        self.limits = limits or ConnectionLimits()
        #: open connections, oldest first
        self._open: OrderedDict[_Limited, None] = OrderedDict()
        self._by_client: dict[str, OrderedDict[_Limited, None]] = {}
        self._trimmer = _Trimmer()
        self.refused = 0
        self.evicted = 0
        self.head_timeouts = 0

    @property
    def name(self) -> str:
        scheme = "https" if self.ssl_context is not None else "http"
        host = self._host or "0.0.0.0"
        host = f"[{host}]" if ":" in host else host
        return f"{scheme}://{host}:{self.port}"

    def protocol_factory(self) -> Any:
        """A new aiohttp request handler of the runner's server."""
        server = self._runner.server
        assert server is not None
        return server()

    async def start(self) -> None:
        await super().start()
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: _Limited(self),
            self._host,
            self._requested_port,
            backlog=self._backlog,
            reuse_address=self._reuse_address,
        )
        sockets: Any = self._server.sockets or []
        if sockets:
            self.port = int(sockets[0].getsockname()[1])

    def open_connections(self) -> int:
        """Connections open now."""
        return len(self._open)

    # ---- bookkeeping ------------------------------------------------------------------------

    def _admit(self, conn: _Limited) -> bool:
        mine = self._by_client.get(conn.client)
        if mine is not None and len(mine) >= self.limits.max_per_client and not self._evict(mine):
            self.refused += 1
            return False
        if len(self._open) >= self.limits.max_connections and not self._evict(self._open):
            self.refused += 1
            return False
        self._open[conn] = None
        self._by_client.setdefault(conn.client, OrderedDict())[conn] = None
        return True

    def _evict(self, pool: OrderedDict[_Limited, None]) -> bool:
        """Close the oldest idle connection of ``pool``; False when all are busy."""
        for c in pool:
            if not c.busy():
                self.evicted += 1
                c.close()
                c.forget()
                return True
        return False

    def _release(self, conn: _Limited) -> None:
        self._open.pop(conn, None)
        mine = self._by_client.get(conn.client)
        if mine is not None:
            mine.pop(conn, None)
            if not mine:
                del self._by_client[conn.client]
        try:
            self._trimmer.closed(asyncio.get_running_loop())
        except RuntimeError:
            pass
