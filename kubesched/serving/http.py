"""HTTP(S) endpoint of ``kubesched run`` (kube-scheduler's ``--secure-port`` handler chain,
``cmd/kube-scheduler/app/server.go`` ``newHealthEndpointsAndMetricsHandler`` behind
``buildHandlerChain``: authentication, then authorization, then the route), served by aiohttp on
its own thread and event loop.

Every request is first authenticated and authorised (:mod:`kubesched.serving.authn`,
:mod:`kubesched.serving.authz`) when the server has a :class:`RequestAuth`; authentication reads
the request's headers and, over TLS, its client certificate:

* rejected credentials (a bearer token the API server does not authenticate, a client
  certificate that does not verify, a front proxy whose CN is not allowed): 401, a ``Status``
  body with reason ``Unauthorized``;
* a user (or ``system:anonymous``) not allowed the path: 403, ``Status`` reason ``Forbidden``,
  message ``forbidden: User "system:anonymous" cannot get path "/metrics"``;
* a review that failed: 500, ``Status`` reason ``InternalError``.

The checks run before routing, so an unknown path is 403 for a user who may not see it, 404 for one
who may. The reviews are blocking API calls: they run on a small thread pool, never on the loop.

Routes (GET and HEAD):

* ``/healthz`` (also ``/livez``): ``ok``; 500 ``[-]leaderElection failed`` when this replica
  leads but has not renewed its lease for ``lease_duration + 20`` seconds (client-go's
  ``HealthzAdaptor`` with kube-scheduler's 20 s tolerance).
* ``/readyz``: ``ok`` once every informer has synced (a replica that is not the leader is ready
  too); 500 ``[-]sched-handler-sync failed: reason withheld`` before. Afterwards, while informers
  are re-listing or their watches keep failing (API server down or restarted with older
  resourceVersions), 500 ``[-]informer-watch failed: Pod, Node`` naming their kinds.
* ``/metrics``: ``prometheus_client.generate_latest()`` of the default registry (text format 0.0.4).
* ``/metrics/resources``: ``kube_pod_resource_request`` / ``kube_pod_resource_limit`` of every pod
  the scheduler knows (``pkg/scheduler/metrics/resources``), behind the same authorisation.
* ``/configz``: ``{"componentconfig": <the effective KubeSchedulerConfiguration>}`` as JSON
  (``k8s.io/component-base/configz``).
* ``/debug/pprof/profile?seconds=N`` (default 30, only with profiling enabled, else 404): a CPU
  profile of every thread for N seconds as a pstats file (see :mod:`kubesched.serving.profiling`),
  ``Content-Type: application/octet-stream``, ``Content-Disposition: attachment;
  filename=profile.pstats``; 500 if a profile is already running, 400 for a bad ``seconds``.

Connections (:mod:`kubesched.net.listener`, :data:`RUN_LIMITS`): at most 1,024 open (256 per
client address; over a cap the oldest idle connection is closed to make room), the TLS handshake and the first
request head within 5 s, idle keep-alive connections closed after :data:`KEEPALIVE_TIMEOUT`
seconds, request heads up to 1 MiB.
"""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import web

from kubesched.net.listener import ConnectionLimits, LimitedSite, handler_args
from kubesched.serving.authn import Authenticator, AuthRequest, Unauthorized
from kubesched.serving.authz import AuthorizationError, Authorizer, forbidden_message
from kubesched.serving.profiling import ProfilerBusyError, cpu_profile

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["HEALTHZ_LEADER_TOLERANCE", "KEEPALIVE_TIMEOUT", "RequestAuth", "StatusServer"]

log = logging.getLogger(__name__)

#: Seconds past the lease duration a leader may go without renewing before ``/healthz`` fails.
HEALTHZ_LEADER_TOLERANCE = 20.0
#: Connection limits of the ports: probes and scrapers need a few connections each; 1,024 TLS
#: connections mid-handshake cost about 110 MB.
RUN_LIMITS = ConnectionLimits(max_connections=1024, max_per_client=256, head_timeout=5.0)
#: Seconds an idle keep-alive connection stays open.
KEEPALIVE_TIMEOUT = 60.0

_OWNER: web.AppKey[StatusServer] = web.AppKey("status_server")


@dataclass(frozen=True)
class RequestAuth:
    """The authentication and authorization every request of the endpoint goes through."""

    authenticator: Authenticator
    authorizer: Authorizer


def _status(code: int, reason: str, message: str) -> web.Response:
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if code == 403:
        body["details"] = {}
    return web.Response(
        status=code,
        body=json.dumps(body).encode(),
        content_type="application/json",
        headers={"X-Content-Type-Options": "nosniff"},
    )


def _text(
    code: int,
    body: bytes,
    ctype: str = "text/plain",
    charset: str | None = "utf-8",
    headers: dict[str, str] | None = None,
) -> web.Response:
    resp = web.Response(status=code, body=body, content_type=ctype, charset=charset, headers=headers)
    resp.headers["X-Content-Type-Options"] = "nosniff"
    return resp


def _auth_request(request: web.Request) -> AuthRequest:
    """The headers and the TLS client certificate (DER) of ``request``."""
    der: bytes | None = None
    transport = request.transport
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    if ssl_object is not None:
        der = ssl_object.getpeercert(binary_form=True)
    return AuthRequest(tuple(request.headers.items()), der)


@web.middleware
async def _authn_authz(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    owner = request.app[_OWNER]
    auth = owner.auth
    if auth is None:
        return await handler(request)
    loop = asyncio.get_running_loop()
    try:
        user = await loop.run_in_executor(
            owner.review_pool, auth.authenticator.authenticate, _auth_request(request)
        )
    except Unauthorized as e:
        log.debug("%s %s: unauthorized: %s", request.method, request.path, e)
        return _status(401, "Unauthorized", "Unauthorized")
    path = request.path
    try:
        decision = await loop.run_in_executor(
            owner.review_pool, auth.authorizer.authorize, user, request.method, path
        )
    except AuthorizationError as e:
        return _status(500, "InternalError", f'Internal Server Error: "{path}": {e}')
    if not decision.allowed:
        log.debug("forbidden: %s %s for %s", request.method, path, user.name)
        return _status(403, "Forbidden", forbidden_message(user, request.method, path, decision.reason))
    return await handler(request)


async def _healthz(request: web.Request) -> web.Response:
    problem = request.app[_OWNER].health_problem()
    if problem is None:
        return _text(200, b"ok")
    return _text(500, f"[-]{problem} failed: reason withheld\nhealthz check failed\n".encode())


async def _readyz(request: web.Request) -> web.Response:
    owner = request.app[_OWNER]
    if not owner.synced():
        return _text(500, b"[-]sched-handler-sync failed: reason withheld\nreadyz check failed\n")
    failing = owner.unhealthy_informers() if owner.unhealthy_informers is not None else []
    if failing:
        return _text(500, f"[-]informer-watch failed: {', '.join(failing)}\nreadyz check failed\n".encode())
    return _text(200, b"ok")


async def _metrics(request: web.Request) -> web.Response:
    from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

    data = await asyncio.get_running_loop().run_in_executor(None, generate_latest, REGISTRY)
    resp = web.Response(status=200, body=data)
    resp.headers["Content-Type"] = CONTENT_TYPE_LATEST
    resp.headers["X-Content-Type-Options"] = "nosniff"
    return resp


async def _metrics_resources(request: web.Request) -> web.Response:
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    owner = request.app[_OWNER]
    if owner.resources_registry is None:
        return await _not_found(request)
    data = await asyncio.get_running_loop().run_in_executor(None, generate_latest, owner.resources_registry)
    resp = web.Response(status=200, body=data)
    resp.headers["Content-Type"] = CONTENT_TYPE_LATEST
    resp.headers["X-Content-Type-Options"] = "nosniff"
    return resp


async def _profile(request: web.Request) -> web.Response:
    owner = request.app[_OWNER]
    if not owner.profiling:
        return await _not_found(request)
    raw = request.query.get("seconds") or "30"
    try:
        seconds = float(raw)
        if not seconds >= 0:
            raise ValueError
    except ValueError:
        return _text(400, f'invalid value for "seconds": {raw!r}\n'.encode())
    try:
        data = await asyncio.get_running_loop().run_in_executor(None, owner.profile, seconds)
    except ProfilerBusyError as e:
        return _text(500, f"Could not enable CPU profiling: {e}\n".encode())
    return _text(
        200,
        data,
        "application/octet-stream",
        None,
        {"Content-Disposition": 'attachment; filename="profile.pstats"'},
    )


async def _configz(request: web.Request) -> web.Response:
    owner = request.app[_OWNER]
    if owner.configz is None:
        return await _not_found(request)
    body = json.dumps(owner.configz()).encode()
    return _text(200, body, "application/json", None)


async def _not_found(request: web.Request) -> web.Response:
    return _text(404, b"404 page not found\n")


def _build_app(owner: StatusServer) -> web.Application:
    app = web.Application(middlewares=[_authn_authz], client_max_size=1024 * 1024)
    app[_OWNER] = owner
    r = app.router
    for path, handler in (
        ("/healthz", _healthz),
        ("/livez", _healthz),
        ("/readyz", _readyz),
        ("/metrics", _metrics),
        ("/metrics/resources", _metrics_resources),
        ("/debug/pprof/profile", _profile),
        ("/configz", _configz),
    ):
        r.add_get(path, handler)  # also HEAD
        r.add_get(path + "/", handler, allow_head=True)
    r.add_route("*", "/{tail:.*}", _not_found)
    return app


class StatusServer:
    """The endpoint on ``address``:``port`` (0 = a free port; see :attr:`port` after
    :meth:`start`), TLS when ``tls`` is an ``ssl.SSLContext``.

    ``synced()``: readiness (informers listed once). ``unhealthy_informers()``: kinds whose
    informer is re-listing or failing (readiness fails while non-empty). ``leader_health()``:
    None, or ``(leading, last_renew, lease_duration)`` in clock seconds for the leader-election
    health check; ``now()`` the same clock. ``profiling`` enables ``/debug/pprof/profile``.
    ``auth``: authentication and authorization of every request (None: none, for tests of the
    routes only). ``configz()``: the document of ``/configz`` (None: 404). ``resources_registry``:
    what ``/metrics/resources`` exposes (the pods' requests and limits; None: 404).
    """

    def __init__(
        self,
        address: str,
        port: int,
        *,
        synced: Callable[[], bool],
        unhealthy_informers: Callable[[], list[str]] | None = None,
        leader_health: Callable[[], tuple[bool, float, float] | None] | None = None,
        now: Callable[[], float] | None = None,
        profiling: bool = False,
        tls: ssl.SSLContext | None = None,
        profiler: Callable[[float], bytes] = cpu_profile,
        auth: RequestAuth | None = None,
        configz: Callable[[], dict[str, Any]] | None = None,
        resources_registry: CollectorRegistry | None = None,
        limits: ConnectionLimits | None = None,
    ) -> None:
        self.address = address
        self.port = port
        self.synced = synced
        self.unhealthy_informers = unhealthy_informers
        self.leader_health = leader_health
        self.now = now or time.time
        self.profiling = profiling
        self.tls = tls
        self.profile = profiler
        self.auth = auth
        self.configz = configz
        self.resources_registry = resources_registry
        #: threads for the blocking TokenReview / SubjectAccessReview calls
        self.review_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="status-review")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self.limits = limits or RUN_LIMITS
        #: the listening site (connection counters), once started
        self.site: LimitedSite | None = None

    @property
    def scheme(self) -> str:
        """``https`` or ``http``."""
        return "https" if self.tls is not None else "http"

    @property
    def url(self) -> str:
        """Base URL (``http://127.0.0.1:PORT``)."""
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{self.scheme}://{host}:{self.port}"

    def health_problem(self) -> str | None:
        """Name of the failing health check, or None when healthy."""
        if self.leader_health is None:
            return None
        state = self.leader_health()
        if state is None:
            return None
        leading, last_renew, lease_duration = state
        if leading and self.now() - last_renew > lease_duration + HEALTHZ_LEADER_TOLERANCE:
            return "leaderElection"
        return None

    async def _start(self) -> None:
        self._runner = web.AppRunner(
            _build_app(self),
            access_log=None,
            handler_cancellation=True,
            shutdown_timeout=1.0,
            keepalive_timeout=KEEPALIVE_TIMEOUT,
            **handler_args(),
        )
        await self._runner.setup()
        site = LimitedSite(
            self._runner,
            self.address,
            self.port,
            ssl_context=self.tls,
            reuse_address=True,
            limits=self.limits,
        )
        await site.start()
        self.site = site
        self.port = site.port

    def start(self) -> StatusServer:
        """Bind and serve from a daemon thread. Raises OSError when the address is in use."""
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._start())
        except BaseException:
            loop.close()
            raise
        self._loop = loop
        self._thread = threading.Thread(
            target=loop.run_forever, name=f"status-server-{self.port}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        runner = self._runner
        if runner is not None:
            fut = asyncio.run_coroutine_threadsafe(runner.cleanup(), loop)
            try:
                fut.result(5)
            except Exception:  # noqa: BLE001 - best effort at shutdown
                pass
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        if not loop.is_running():
            loop.close()
        self.review_pool.shutdown(wait=False, cancel_futures=True)
