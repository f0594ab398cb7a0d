"""A small keep-alive HTTP/1.1 connection pool for the API client's non-streaming requests.

``kubesched run`` sends one ``POST pods/binding`` and one Event per scheduled pod. Through the
official client's urllib3 stack each request costs ~0.5 ms of CPU; through ``http.client`` on a
reused connection ~0.21 ms, of which the biggest parts are the two ``send`` calls (request head,
then body: two TCP segments on loopback, two reads on the server) and the response header
parsing through the ``email`` package. Here a request is one ``sendall`` of head and body
together (``TCP_NODELAY``) and the answer is parsed directly: status line, headers, then a body
framed by ``Content-Length``, ``Transfer-Encoding: chunked`` or the end of the connection
(RFC 9112 section 6.3). Watches keep using urllib3 (streaming).

Requests are validated as ``http.client`` validates them: a method, target or header containing
a line break or other control character raises ValueError before anything is sent. Transport
failures raise ``OSError`` or ``http.client.HTTPException`` subclasses
(``RemoteDisconnected``, ``IncompleteRead``, ``BadStatusLine``, ``LineTooLong``).

Every request ends within its read timeout in total, from taking a connection to the last body
byte (Go's ``http.Client.Timeout``): each receive waits only for the time left, so a server that
answers one byte a second cannot hold a caller longer. An answer body over ``max_body`` bytes
raises :class:`ResponseTooLarge` as soon as its length is known or exceeded.

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
import time
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

__all__ = [
    "MAX_BODY_BYTES",
    "ConnectionPool",
    "Headers",
    "Response",
    "ResponseHeaders",
    "ResponseTooLarge",
    "Transport",
    "ssl_context_for",
]

#: longest response head (status line and headers) accepted, bytes (``http.client``: 100 headers of 64 KiB)
MAX_HEAD_BYTES = 256 * 1024
#: longest response body accepted by default, bytes (a page of 500 pods is a few MiB)
MAX_BODY_BYTES = 256 * 1024 * 1024
_RECV = 65536


class ResponseTooLarge(http.client.HTTPException):
    """An answer body longer than the pool's ``max_body``: ``answer larger than <n> bytes``."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"answer larger than {limit} bytes")
        self.limit = limit


class ResponseHeaders(Protocol):
    """Headers of a response: ``get`` by case-insensitive name."""

    def get(self, name: str, default: Any = None) -> Any: ...


class Headers:
    """Parsed response headers: ``get(name)`` ignores case; repeated fields are joined with
    ``", "`` (RFC 9110 section 5.3)."""

    __slots__ = ("_fields",)

    def __init__(self, fields: dict[str, str]) -> None:
        self._fields = fields

    def get(self, name: str, default: Any = None) -> Any:
        """The value of header ``name`` or ``default``."""
        return self._fields.get(name.lower(), default)

    def items(self) -> list[tuple[str, str]]:
        """``(lower-cased name, value)`` pairs."""
        return list(self._fields.items())


@dataclass
class Response:
    """A fully read response: ``status``, ``headers`` (case-insensitive ``get``) and ``data``."""

    status: int
    headers: ResponseHeaders
    data: bytes


class Transport(Protocol):
    """What the API client sends its non-streaming requests through (:class:`ConnectionPool`)."""

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None,
        headers: dict[str, str],
        timeout: tuple[float, float],
    ) -> Response: ...

    def request_pipelined(
        self, requests: list[tuple[str, str, bytes | None, dict[str, str]]], timeout: tuple[float, float]
    ) -> list[Response | Exception]: ...


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


class _Connection:
    """One keep-alive connection: its socket and the bytes received but not consumed yet."""

    __slots__ = ("buf", "clip", "deadline", "max_body", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock: socket.socket | None = sock
        self.buf = bytearray()
        #: monotonic seconds by which the request in progress must end (None: per-receive timeout only)
        self.deadline: float | None = None
        #: whether the next receive must clip the socket's timeout to the deadline (the first one
        #: of a request runs on the timeout set just before the request was written)
        self.clip = False
        self.max_body = MAX_BODY_BYTES

    def close(self) -> None:
        sock, self.sock = self.sock, None
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass


def _check_request(method: str, target: str, head: str, lines: int) -> None:
    """Refuse what would let a caller inject lines into the request (``http.client``'s checks):
    ``head`` must hold exactly ``lines`` CRLF-terminated lines."""
    if not method.isalpha() or not target.isprintable() or " " in target:
        raise ValueError(f"invalid HTTP request line {method!r} {target!r}")
    if head.count("\n") != lines or head.count("\r") != lines:
        raise ValueError("invalid HTTP header: a name or value contains a line break")


class ConnectionPool:
    """Keep-alive connections to one ``http(s)://host:port`` (``base_url``'s path is a prefix of
    every request path). ``maxsize``: idle connections kept; ``max_body``: longest answer body,
    bytes. Thread-safe."""

    def __init__(
        self,
        base_url: str,
        *,
        ssl_context: ssl.SSLContext | None = None,
        server_hostname: str | None = None,
        maxsize: int = 32,
        max_body: int = MAX_BODY_BYTES,
    ) -> None:
        u = urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"unsupported API server URL {base_url!r}")
        self.https = u.scheme == "https"
        self.host = u.hostname
        self.port = u.port or (443 if self.https else 80)
        self.prefix = u.path.rstrip("/")
        self.ssl_context = (
            ssl_context if ssl_context is not None else (ssl.create_default_context() if self.https else None)
        )
        self.server_hostname = server_hostname
        self.maxsize = maxsize
        self.max_body = max_body
        host = f"[{self.host}]" if ":" in self.host else self.host
        default_port = 443 if self.https else 80
        self._host_header = host if self.port == default_port else f"{host}:{self.port}"
        self._idle: list[_Connection] = []
        self._lock = threading.Lock()

    def _new(self, timeout: float) -> _Connection:
        sock = socket.create_connection((self.host, self.port), timeout=timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.https:
                assert self.ssl_context is not None
                sock = self.ssl_context.wrap_socket(sock, server_hostname=self.server_hostname or self.host)
        except BaseException:
            sock.close()
            raise
        return _Connection(sock)

    def _take(self) -> _Connection | None:
        with self._lock:
            return self._idle.pop() if self._idle else None

    def _give(self, conn: _Connection) -> None:
        with self._lock:
            if len(self._idle) < self.maxsize:
                self._idle.append(conn)
                return
        conn.close()

    def _encode(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> bytes:
        target = self.prefix + path
        parts = [f"{method} {target} HTTP/1.1\r\nHost: {self._host_header}\r\n"]
        for k, v in headers.items():
            parts.append(f"{k}: {v}\r\n")
        if body is not None:
            parts.append(f"Content-Length: {len(body)}\r\n")
        parts.append("\r\n")
        head = "".join(parts)
        _check_request(method, target, head, len(parts) + 1)  # the first part is two lines
        data = head.encode("latin-1")  # UnicodeEncodeError (a ValueError) outside ISO-8859-1
        if body:
            data += body
        return data

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None,
        headers: dict[str, str],
        timeout: tuple[float, float],
    ) -> Response:
        """Send one request and read the whole answer within ``timeout[1]`` seconds in total
        (``timeout[0]`` bounds the connect). Raises ValueError for a request that cannot be
        written (line breaks in a header), OSError (``TimeoutError`` when the time is up) /
        ``http.client.HTTPException`` (:class:`ResponseTooLarge`) on transport failures (after
        the one retry of a stale reused connection)."""
        return self._send(self._encode(method, path, body, headers), method, timeout)

    def request_pipelined(
        self, requests: list[tuple[str, str, bytes | None, dict[str, str]]], timeout: tuple[float, float]
    ) -> list[Response | Exception]:
        """Send ``requests`` (``(method, path, body, headers)`` each) back to back on one
        connection and read their answers in order (HTTP/1.1 pipelining, RFC 9112 section 9.3:
        one write and as few reads as the answers need, instead of a round trip each). Meant for
        requests that may be repeated, such as Event creations: when the connection fails or the
        server closes it before every answer arrived, the requests without an answer are sent
        again one by one with :meth:`request`, whose failure is that request's result (so a
        request whose answer was lost may reach the server twice). ValueError for a request that
        cannot be written, before anything is sent."""
        if len(requests) == 1:
            m, path, body, headers = requests[0]
            try:
                return [self.request(m, path, body, headers, timeout)]
            except (OSError, http.client.HTTPException) as e:
                return [e]
        encoded = [self._encode(m, path, body, headers) for m, path, body, headers in requests]
        out: list[Response | Exception] = []
        conn: _Connection | None = None
        keep = False
        try:
            deadline = time.monotonic() + timeout[1]
            conn = self._take() or self._new(timeout[0])
            sock = conn.sock
            assert sock is not None
            keep = True
            conn.deadline, conn.max_body, conn.clip = deadline, self.max_body, False
            sock.settimeout(_left(deadline))
            sock.sendall(b"".join(encoded))
            for m, _path, _body, _headers in requests:
                resp, keep = _read_response(conn, sock, m, [False])
                out.append(resp)
                if not keep:
                    break
        except (OSError, http.client.HTTPException):
            keep = False
        if conn is not None:
            if keep and not conn.buf:
                self._give(conn)
            else:
                conn.close()
        for m, _path, _body, _headers in requests[len(out) :]:
            data = encoded[len(out)]
            try:
                out.append(self._send(data, m, timeout))
            except (OSError, http.client.HTTPException) as e:
                out.append(e)
        return out

    def _send(self, data: bytes, method: str, timeout: tuple[float, float]) -> Response:
        deadline = time.monotonic() + timeout[1]
        conn = self._take()
        reused = conn is not None
        while True:
            if conn is None:
                conn = self._new(timeout[0])
            sock = conn.sock
            assert sock is not None
            started = [False]
            conn.deadline, conn.max_body, conn.clip = deadline, self.max_body, False
            try:
                sock.settimeout(_left(deadline))
                sock.sendall(data)
                resp, keep = _read_response(conn, sock, method, started)
            except (BrokenPipeError, ConnectionResetError) as e:
                conn.close()
                if reused and not started[0]:
                    reused = False
                    conn = None
                    continue
                raise e
            except BaseException:
                conn.close()
                raise
            if keep and not conn.buf:
                self._give(conn)
            else:
                conn.close()
            return resp

    def close(self) -> None:
        """Close the idle connections."""
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()


def _left(deadline: float) -> float:
    """Seconds left before ``deadline``; TimeoutError when none are."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("request deadline exceeded")
    return left


def _fill(conn: _Connection, sock: socket.socket, started: list[bool]) -> bool:
    """Receive more bytes into ``conn.buf`` by the connection's deadline; False at the end of
    the stream. Raises TimeoutError when the deadline passes, ResponseTooLarge when the buffer
    grows past ``max_body`` plus one head."""
    deadline = conn.deadline
    if deadline is not None:
        if conn.clip:
            sock.settimeout(_left(deadline))
        else:
            conn.clip = True
    if len(conn.buf) > conn.max_body + MAX_HEAD_BYTES:
        raise ResponseTooLarge(conn.max_body)
    chunk = sock.recv(_RECV)
    if not chunk:
        return False
    started[0] = True
    conn.buf += chunk
    return True


def _read_head(
    conn: _Connection, sock: socket.socket, started: list[bool]
) -> tuple[str, int, dict[str, str]]:
    buf = conn.buf
    searched = 0
    while True:
        end = buf.find(b"\r\n\r\n", searched)
        if end >= 0:
            break
        if len(buf) > MAX_HEAD_BYTES:
            raise http.client.LineTooLong("response head")
        searched = max(0, len(buf) - 3)
        if not _fill(conn, sock, started):
            if not buf:
                raise http.client.RemoteDisconnected("Remote end closed connection without response")
            raise http.client.IncompleteRead(bytes(buf))
    head = buf[:end].decode("latin-1")
    del buf[: end + 4]
    status_line, _, rest = head.partition("\r\n")
    version, _, tail = status_line.partition(" ")
    code_text = tail[:3]
    if not version.startswith("HTTP/1.") or not code_text.isdigit() or (len(tail) > 3 and tail[3] != " "):
        raise http.client.BadStatusLine(status_line)
    fields: dict[str, str] = {}
    if rest:
        for line in rest.split("\r\n"):
            name, sep, value = line.partition(":")
            if not sep:
                raise http.client.BadStatusLine(f"malformed header line {line!r}")
            key = name.strip().lower()
            value = value.strip()
            prev = fields.get(key)
            fields[key] = value if prev is None else f"{prev}, {value}"
    return version, int(code_text), fields


def _read_response(
    conn: _Connection, sock: socket.socket, method: str, started: list[bool]
) -> tuple[Response, bool]:
    """The response (1xx interim answers skipped) and whether the connection can be reused."""
    while True:
        version, code, fields = _read_head(conn, sock, started)
        if code < 100 or code >= 200 or code == 101:
            break
    connection = fields.get("connection", "").lower()
    keep = ("keep-alive" in connection) if version == "HTTP/1.0" else ("close" not in connection)
    buf = conn.buf
    if method == "HEAD" or code in (204, 304) or 100 <= code < 200:
        return Response(code, Headers(fields), b""), keep
    if "chunked" in fields.get("transfer-encoding", "").lower():
        return Response(code, Headers(fields), _read_chunked(conn, sock, started)), keep
    length_text = fields.get("content-length")
    if length_text is not None:
        try:
            length = int(length_text)
        except ValueError:
            raise http.client.BadStatusLine(f"invalid Content-Length {length_text!r}") from None
        if length < 0:
            raise http.client.BadStatusLine(f"invalid Content-Length {length_text!r}")
        if length > conn.max_body:
            raise ResponseTooLarge(conn.max_body)
        while len(buf) < length:
            if not _fill(conn, sock, started):
                raise http.client.IncompleteRead(bytes(buf), length - len(buf))
        data = bytes(buf[:length])
        del buf[:length]
        return Response(code, Headers(fields), data), keep
    while _fill(conn, sock, started):  # delimited by the end of the connection
        if len(buf) > conn.max_body:
            raise ResponseTooLarge(conn.max_body)
    data = bytes(buf)
    buf.clear()
    return Response(code, Headers(fields), data), False


def _read_chunked(conn: _Connection, sock: socket.socket, started: list[bool]) -> bytes:
    buf = conn.buf
    out = bytearray()
    while True:
        while (eol := buf.find(b"\r\n")) < 0:
            if len(buf) > MAX_HEAD_BYTES:
                raise http.client.LineTooLong("chunk size")
            if not _fill(conn, sock, started):
                raise http.client.IncompleteRead(bytes(out))
        size_text = buf[:eol].split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise http.client.IncompleteRead(bytes(out)) from None
        del buf[: eol + 2]
        if size == 0:
            break
        if len(out) + size > conn.max_body:
            raise ResponseTooLarge(conn.max_body)
        while len(buf) < size + 2:
            if not _fill(conn, sock, started):
                raise http.client.IncompleteRead(bytes(out), size + 2 - len(buf))
        out += buf[:size]
        del buf[: size + 2]
    while True:  # trailer fields up to the empty line
        while (eol := buf.find(b"\r\n")) < 0:
            if len(buf) > MAX_HEAD_BYTES:
                raise http.client.LineTooLong("trailer")
            if not _fill(conn, sock, started):
                raise http.client.IncompleteRead(bytes(out))
        line = bytes(buf[:eol])
        del buf[: eol + 2]
        if not line:
            return bytes(out)
