"""A total deadline and a size cap for one outbound HTTP request through httpx, as Go's
``http.Client.Timeout`` bounds a request (``net/http/client.go``: ``setRequestCancel`` covers the
dial, the TLS handshake, writing the request, awaiting the headers and reading the body).

httpx's timeouts bound each socket operation: a peer that sends its headers or its body one byte
a second never trips a 2 s read timeout. :func:`deadline_client` builds an ``httpx.Client`` whose
network streams clip every connect, TLS handshake, read and write to the time left before the
deadline of the request in progress (a context variable set by :func:`request`), so the whole
request ends by its deadline plus at most one scheduler tick of the operating system.

:func:`request` reads the body as it arrives and stops at ``max_bytes``: a larger answer raises
:class:`ResponseTooLarge` without buffering it. A deadline that passes raises
:class:`DeadlineExceeded` whose message is Go's:
``context deadline exceeded (Client.Timeout exceeded while awaiting headers)`` before the
headers, ``context deadline exceeded (Client.Timeout or context cancellation while reading body)``
after them.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import Any

import httpcore
import httpx

__all__ = [
    "AWAITING_HEADERS",
    "READING_BODY",
    "DeadlineExceeded",
    "ResponseTooLarge",
    "deadline_client",
    "request",
]

#: Go's ``*url.Error`` cause when ``Client.Timeout`` fires before the response headers arrived
AWAITING_HEADERS = "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
#: Go's body read error when ``Client.Timeout`` fires while the body is read
READING_BODY = "context deadline exceeded (Client.Timeout or context cancellation while reading body)"

#: monotonic time (seconds) by which the request in progress in this context must end
_DEADLINE: ContextVar[float | None] = ContextVar("kubesched_http_deadline", default=None)


class DeadlineExceeded(Exception):
    """The whole request took longer than its deadline. ``headers_received``: whether it ended
    while the body was read (message :data:`READING_BODY`) or before (:data:`AWAITING_HEADERS`)."""

    def __init__(self, headers_received: bool) -> None:
        super().__init__(READING_BODY if headers_received else AWAITING_HEADERS)
        self.headers_received = headers_received


class ResponseTooLarge(Exception):
    """The answer's body is longer than the cap: ``answer larger than <limit> bytes``."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"answer larger than {limit} bytes")
        self.limit = limit


def _left(timeout: float | None, exc: type[Exception]) -> float | None:
    """``timeout`` clipped to the time left before the context's deadline; raises ``exc`` when
    none is left."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise exc("deadline exceeded")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """A network stream whose every operation ends by the context's deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return _Stream(
            self._inner.start_tls(ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout))
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's synchronous backend with :class:`_Stream` streams."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        return _Stream(
            self._inner.connect_tcp(
                host, port, _left(timeout, httpcore.ConnectTimeout), local_address, socket_options
            )
        )

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:
        return _Stream(
            self._inner.connect_unix_socket(path, _left(timeout, httpcore.ConnectTimeout), socket_options)
        )

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def deadline_client(**kwargs: Any) -> httpx.Client:
    """An ``httpx.Client(**kwargs)`` (``verify``, ``auth``, ``timeout``, ``follow_redirects``,
    ``trust_env``, ...) whose connections honour the deadline of :func:`request`. Its transport
    is built here (``verify`` and ``trust_env`` go to it) unless ``transport`` is given and not
    None (a transport without a network, such as ``httpx.MockTransport``, used as it is)."""
    if kwargs.get("transport") is not None:
        return httpx.Client(**kwargs)
    kwargs.pop("transport", None)
    verify = kwargs.get("verify", True)
    trust_env = kwargs.get("trust_env", True)
    transport = httpx.HTTPTransport(verify=verify, trust_env=trust_env)
    pool = transport._pool  # httpcore.ConnectionPool: connections take its backend when created
    pool._network_backend = _Backend(pool._network_backend)
    return httpx.Client(transport=transport, **kwargs)


def request(
    client: httpx.Client, method: str, url: str, *, timeout: float, max_bytes: int, **kwargs: Any
) -> tuple[httpx.Response, bytes]:
    """Send one request through ``client`` (from :func:`deadline_client`) and read its whole body
    within ``timeout`` seconds in total (connect, TLS, request, headers and body).

    Returns the response (closed) and its body (decoded as httpx decodes it: gzip etc.).
    Raises :class:`DeadlineExceeded`, :class:`ResponseTooLarge` (body over ``max_bytes`` bytes,
    checked on ``Content-Length`` first and on the bytes received), or ``httpx.HTTPError``
    for other transport failures (connection refused, TLS errors, protocol errors).
    """
    token = _DEADLINE.set(time.monotonic() + timeout)
    headers_received = False
    try:
        with client.stream(method, url, timeout=timeout, **kwargs) as resp:
            headers_received = True
            length = resp.headers.get("content-length", "")
            if length.isdigit() and int(length) > max_bytes:
                raise ResponseTooLarge(max_bytes)
            body = bytearray()
            for chunk in resp.iter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    raise ResponseTooLarge(max_bytes)
            return resp, bytes(body)
    except httpx.TimeoutException:
        raise DeadlineExceeded(headers_received) from None
    finally:
        _DEADLINE.reset(token)
