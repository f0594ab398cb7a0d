"""A small keep-alive HTTP/1.1 connection pool for the API client's non-streaming requests.

``kubesched run`` sends one ``POST pods/binding`` and one Event per scheduled pod; through the
official client's urllib3 stack each costs ~0.5 ms of CPU (headers and body in separate sends,
URL re-parsing, pool-key normalising), more than the scheduling cycle itself. Here a request is
one ``http.client`` call on a reused connection (headers and body in one send, ``TCP_NODELAY``):
~0.15 ms. Watches keep using urllib3 (streaming).

TLS follows the kubeconfig as the official client's REST client does: the cluster CA (or the
system store), the client certificate and key, ``insecure-skip-tls-verify``, ``tls-server-name``.
Connections are taken LIFO from an idle list (any thread) and returned when the response was
read completely and the server did not ask to close. A request on a reused connection that
fails before any response byte arrived (the server closed the idle connection) is sent once
more on a new connection, as HTTP clients do for stale keep-alive connections.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

__all__ = ["ConnectionPool", "Response", "Transport", "ssl_context_for"]


@dataclass
class Response:
    """A fully read response: ``status``, ``headers`` (case-insensitive ``get``) and ``data``."""

    status: int
    headers: http.client.HTTPMessage
    data: bytes


class Transport(Protocol):
    """What the API client sends its non-streaming requests through (:class:`ConnectionPool`)."""

    def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str],
                timeout: tuple[float, float]) -> Response: ...


def ssl_context_for(configuration: Any) -> ssl.SSLContext:
    """The client TLS context of a ``kubernetes.client.Configuration`` as its REST client builds
    it: ``ssl_ca_cert`` (else certifi's bundle), ``cert_file``/``key_file``, ``assert_hostname``
    False = no hostname check, ``verify_ssl`` False = no verification."""
    import certifi

    ctx = ssl.create_default_context(cafile=configuration.ssl_ca_cert or certifi.where())
    if configuration.cert_file:
        ctx.load_cert_chain(configuration.cert_file, configuration.key_file or None)
    if configuration.assert_hostname is False:
        ctx.check_hostname = False
    if not configuration.verify_ssl:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


class ConnectionPool:
    """Keep-alive connections to one ``http(s)://host:port`` (``base_url``'s path is a prefix of
    every request path). ``maxsize``: idle connections kept. Thread-safe."""

    def __init__(self, base_url: str, *, ssl_context: ssl.SSLContext | None = None, server_hostname: str | None = None,
                 maxsize: int = 32) -> None:
        u = urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"unsupported API server URL {base_url!r}")
        self.https = u.scheme == "https"
        self.host = u.hostname
        self.port = u.port or (443 if self.https else 80)
        self.prefix = u.path.rstrip("/")
        self.ssl_context = ssl_context if ssl_context is not None else (ssl.create_default_context() if self.https else None)
        self.server_hostname = server_hostname
        self.maxsize = maxsize
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def _new(self, timeout: float) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection
        if self.https:
            conn = _HTTPSConnection(self.host, self.port, timeout=timeout, context=self.ssl_context,
                                    server_hostname=self.server_hostname)
        else:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        conn.connect()
        if conn.sock is not None:
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn

    def _take(self) -> http.client.HTTPConnection | None:
        with self._lock:
            return self._idle.pop() if self._idle else None

    def _give(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._idle) < self.maxsize:
                self._idle.append(conn)
                return
        conn.close()

    def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str],
                timeout: tuple[float, float]) -> Response:
        """Send one request and read the whole answer. Raises OSError / ``http.client.HTTPException``
        on transport failures (after the one retry of a stale reused connection)."""
        conn = self._take()
        reused = conn is not None
        while True:
            if conn is None:
                conn = self._new(timeout[0])
            try:
                if conn.sock is not None:
                    conn.sock.settimeout(timeout[1])
                conn.request(method, self.prefix + path, body=body, headers=headers)
                r = conn.getresponse()
                data = r.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                conn.close()
                if reused:
                    reused = False
                    conn = None
                    continue
                raise e
            except BaseException:
                conn.close()
                raise
            if r.will_close:
                conn.close()
            else:
                self._give(conn)
            return Response(r.status, r.headers, data)

    def close(self) -> None:
        """Close the idle connections."""
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()


class _HTTPSConnection(http.client.HTTPSConnection):
    """HTTPS with an explicit SNI / verification name (kubeconfig ``tls-server-name``)."""

    def __init__(self, host: str, port: int, *, timeout: float, context: ssl.SSLContext | None,
                 server_hostname: str | None) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self._sni = server_hostname

    def connect(self) -> None:
        http.client.HTTPConnection.connect(self)
        ctx = self._context  # type: ignore[attr-defined]
        self.sock = ctx.wrap_socket(self.sock, server_hostname=self._sni or self.host)
