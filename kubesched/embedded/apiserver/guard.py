"""Request guard of ``kubesched serve``: what a web page in a browser on the same machine must not do.

``kubesched serve`` listens on loopback without authentication, so any page a local browser opens
could otherwise reach it: a cross-origin ``fetch`` with ``mode: "no-cors"`` or an HTML form sends a
"simple" request (``text/plain``, form or multipart body) without a CORS preflight, and a DNS
rebinding attack makes the browser send same-origin requests to ``127.0.0.1`` under the attacker's
host name. The guard answers, before any handler runs (every answer a ``Status`` body):

* ``403 Forbidden`` when the ``Host`` header is not an IP literal, ``localhost`` or one of the
  allowed host names (the listen address, plus ``allowed_hosts``): the defence against DNS
  rebinding (a request without ``Host`` cannot come from a browser and passes);
* ``403 Forbidden`` when an ``Origin`` header names another origin than the ``Host`` served (or is
  ``null``), or ``Sec-Fetch-Site`` says ``cross-site``/``same-site``: kubectl and the Kubernetes
  clients send neither, browsers send them on every cross-origin write;
* ``415 UnsupportedMediaType`` for a body whose ``Content-Type`` is not one the API decodes
  (:data:`BODY_MEDIA_TYPES`: JSON, YAML and the patch types, as kube-apiserver's negotiated
  serializers in ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go``), including a
  missing one;
* ``413 RequestEntityTooLarge`` for a body over ``max_body_bytes`` (kube-apiserver's
  ``--max-request-body-bytes`` default, 3 MiB: ``limitedReadBody`` in the same file).
"""

from __future__ import annotations

import functools
import ipaddress
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.typedefs import Middleware

from kubesched.embedded.apiserver.status import ApiError

__all__ = ["BODY_MEDIA_TYPES", "DEFAULT_MAX_BODY_BYTES", "RequestGuard"]

#: kube-apiserver's default ``--max-request-body-bytes`` (3 MiB).
DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024

#: Media types of request bodies the API accepts (anything else is 415).
BODY_MEDIA_TYPES = frozenset(
    {
        "application/json",
        "application/yaml",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
        "application/json-patch+json",
        "application/apply-patch+yaml",
        # client-go's typed clients (kubectl's ``create namespace|deployment|job|...``)
        "application/vnd.kubernetes.protobuf",
        "application/cbor",
    }
)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _host_name(host: str) -> str:
    """``host[:port]`` / ``[v6]:port`` -> the lower-cased host name or IP without brackets."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    if host.count(":") == 1:
        return host.split(":", 1)[0]
    return host


@functools.lru_cache(maxsize=256)
def _is_ip(name: str) -> bool:
    """Whether ``name`` is an IPv4 or IPv6 literal; cached, as every request asks it of the same
    few ``Host`` values and ``ipaddress`` parses in Python."""
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class RequestGuard:
    """The checks of the module docstring. ``allowed_hosts``: host names (no port) accepted in
    ``Host`` besides IP literals and ``localhost``; ``max_body_bytes``: the body size limit."""

    allowed_hosts: frozenset[str] = frozenset()
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES

    @classmethod
    def for_address(
        cls, address: str, extra_hosts: Iterable[str] = (), max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    ) -> RequestGuard:
        """A guard allowing the listen ``address`` (when a host name) and ``extra_hosts``."""
        names = {_host_name(h) for h in extra_hosts if h}
        if address and not _is_ip(address):
            names.add(address.lower())
        return cls(frozenset(names), max_body_bytes)

    def host_allowed(self, host: str) -> bool:
        """Whether a ``Host`` header value may be served: an IP literal, localhost, an allowed
        name, or none at all (HTTP/1.0 tools; a browser always sends one)."""
        name = _host_name(host)
        return (
            not name
            or _is_ip(name)
            or name == "localhost"
            or name.endswith(".localhost")
            or name in self.allowed_hosts
        )

    def check(self, request: web.Request) -> None:
        """Raise :class:`ApiError` (403, 413, 415) for a request the module docstring refuses."""
        host = request.headers.get("Host", "")
        if not self.host_allowed(host):
            raise ApiError(
                403,
                f"host {host!r} is not served (kubesched serve answers IP addresses, "
                "localhost and its --address/--allowed-host names)",
                "Forbidden",
            )
        origin = request.headers.get("Origin")
        if origin is not None:
            parts = urlsplit(origin)
            if origin == "null" or not parts.netloc or parts.netloc.lower() != host.strip().lower():
                raise ApiError(403, f"cross-origin request from {origin!r} refused", "Forbidden")
        if request.headers.get("Sec-Fetch-Site", "").lower() in ("cross-site", "same-site"):
            raise ApiError(403, "cross-site request refused", "Forbidden")
        length = request.content_length
        has_body = bool(length) or request.headers.get("Transfer-Encoding", "").lower() == "chunked"
        if not has_body:
            return
        if length is not None and length > self.max_body_bytes:
            raise ApiError(
                413, f"Request entity too large: limit is {self.max_body_bytes}", "RequestEntityTooLarge"
            )
        ctype = request.headers.get("Content-Type")
        media = request.content_type if ctype else ""
        if media not in BODY_MEDIA_TYPES:
            raise ApiError(
                415,
                f"the body of the request was in an unknown format - accepted media types "
                f"include: {', '.join(sorted(BODY_MEDIA_TYPES))} (got {ctype or 'no Content-Type'})",
                "UnsupportedMediaType",
            )

    def middleware(self) -> Middleware:
        """aiohttp middleware (the outermost) running :meth:`check` and answering its errors, and
        aiohttp's own 413 for a chunked body over the limit, as ``Status`` bodies."""

        @web.middleware
        async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
            try:
                self.check(request)
                return await handler(request)
            except web.HTTPRequestEntityTooLarge:
                return _status(
                    ApiError(
                        413,
                        f"Request entity too large: limit is {self.max_body_bytes}",
                        "RequestEntityTooLarge",
                    )
                )
            except ApiError as e:
                return _status(e)

        return guard


def _status(err: ApiError) -> web.Response:
    return web.Response(
        body=json.dumps(err.status, separators=(",", ":")).encode(),
        status=err.code,
        content_type="application/json",
        headers=err.headers,
    )
