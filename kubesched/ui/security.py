"""Request checks of ``kubesched ui`` (an aiohttp middleware).

The UI can run what-ifs, so a page on another site must not drive it through the user's browser:

* ``Host`` must name the UI itself (defeats DNS rebinding): the bound address, ``localhost``,
  ``127.0.0.1`` or ``[::1]`` with the port; with a non-loopback bind, any host (a token is then required);
* a request carrying ``Origin`` must come from the UI's own origin, and one with
  ``Sec-Fetch-Site: cross-site`` is refused (403);
* a request with a body (POST, PUT, PATCH, DELETE) must be ``Content-Type: application/json`` (415),
  which a cross-site HTML form cannot send;
* with a token (required when bound to a non-loopback address), every request needs
  ``Authorization: Bearer <token>`` or the ``kubesched-ui-token`` cookie, which ``GET /?token=<token>``
  sets (HttpOnly, SameSite=Strict) before redirecting to ``/``. Tokens are compared in constant time.

Every answer carries a Content-Security-Policy allowing only the UI's own scripts, styles and
connections, ``X-Content-Type-Options: nosniff``, ``X-Frame-Options: DENY`` and no referrer.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable

from aiohttp import web

__all__ = ["security_middleware", "is_loopback", "TOKEN_COOKIE"]

TOKEN_COOKIE = "kubesched-ui-token"
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def is_loopback(address: str) -> bool:
    """Whether ``address`` (an IP or ``localhost``) is a loopback address."""
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def security_middleware(
    address: str, port_of: Callable[[], int], token: str | None, scheme: str = "http"
) -> Callable[..., Awaitable[web.StreamResponse]]:
    """The middleware for a UI bound to ``address`` (``port_of()`` gives the bound port once known)
    with an optional ``token``, served over ``scheme`` (``http`` or ``https``: the cookie is then
    ``Secure``)."""
    loopback = is_loopback(address)

    def allowed_hosts() -> set[str]:
        port = port_of()
        names = {"localhost", "127.0.0.1", "[::1]", address if ":" not in address else f"[{address}]"}
        return {f"{n}:{port}" for n in names}

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        host = request.headers.get("Host", "")
        if loopback and host not in allowed_hosts():
            return _error(403, f"unexpected Host header {host!r}")
        origin = request.headers.get("Origin")
        if origin is not None and origin != f"{scheme}://{host}":
            return _error(403, f"cross-origin request from {origin!r} refused")
        if request.headers.get("Sec-Fetch-Site") == "cross-site":
            return _error(403, "cross-site request refused")
        if request.method not in ("GET", "HEAD", "OPTIONS") and request.content_type != "application/json":
            return _error(415, "request body must be JSON (Content-Type: application/json)")
        if token is not None:
            given = request.query.get("token") if request.path == "/" and request.method == "GET" else None
            if given is not None:
                if not hmac.compare_digest(given.encode(), token.encode()):
                    return _error(401, "invalid token")
                resp = web.Response(status=302, headers={"Location": "/"})
                resp.set_cookie(
                    TOKEN_COOKIE, token, httponly=True, samesite="Strict", path="/", secure=scheme == "https"
                )
                return resp
            auth = request.headers.get("Authorization", "")
            presented = auth[7:] if auth.startswith("Bearer ") else request.cookies.get(TOKEN_COOKIE, "")
            if not presented or not hmac.compare_digest(presented.encode(), token.encode()):
                return _error(
                    401,
                    "a token is required: open the URL printed at start-up, or send "
                    "Authorization: Bearer <token>",
                )
        answer = await handler(request)
        answer.headers.setdefault("Content-Security-Policy", _CSP)
        answer.headers.setdefault("X-Content-Type-Options", "nosniff")
        answer.headers.setdefault("X-Frame-Options", "DENY")
        answer.headers.setdefault("Referrer-Policy", "no-referrer")
        answer.headers.setdefault(
            "Cache-Control", "no-store" if request.path.startswith("/api/") else "no-cache"
        )
        return answer

    return middleware
