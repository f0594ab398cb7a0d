"""HTTP(S) endpoint of ``kubesched run`` (kube-scheduler's ``--secure-port`` handler chain,
``cmd/kube-scheduler/app/server.go`` ``newHealthEndpointsAndMetricsHandler``), without authn/authz:
bind it to loopback or protect it by network policy.

Routes (GET):

* ``/healthz`` (also ``/livez``): ``ok``; 500 ``[-]leaderElection failed`` when this replica
  leads but has not renewed its lease for ``lease_duration + 20`` seconds (client-go's
  ``HealthzAdaptor`` with kube-scheduler's 20 s tolerance).
* ``/readyz``: ``ok`` once every informer has synced (a replica that is not the leader is ready
  too); 500 ``[-]sched-handler-sync failed: reason withheld`` before. Afterwards, while informers
  are re-listing or their watches keep failing (API server down or restarted with older
  resourceVersions), 500 ``[-]informer-watch failed: Pod, Node`` naming their kinds.
* ``/metrics``: ``prometheus_client.generate_latest()`` of the default registry (text format 0.0.4).
* ``/debug/pprof/profile?seconds=N`` (default 30, only with profiling enabled, else 404): a CPU
  profile of every thread for N seconds as a pstats file (see :mod:`kubesched.serving.profiling`),
  ``Content-Type: application/octet-stream``, ``Content-Disposition: attachment;
  filename=profile.pstats``; 500 if a profile is already running, 400 for a bad ``seconds``.
"""

from __future__ import annotations

import logging
import ssl
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from kubesched.serving.profiling import ProfilerBusyError, cpu_profile

__all__ = ["HEALTHZ_LEADER_TOLERANCE", "StatusServer"]

log = logging.getLogger(__name__)

#: Seconds past the lease duration a leader may go without renewing before ``/healthz`` fails.
HEALTHZ_LEADER_TOLERANCE = 20.0


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        log.debug("%s %s", self.address_string(), format % args)

    def _send(self, code: int, body: bytes, ctype: str = "text/plain; charset=utf-8",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self) -> None:  # noqa: N802 - stdlib naming
        self.do_GET()

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        owner = self.server.owner
        url = urlsplit(self.path)
        path = url.path.rstrip("/") or "/"
        if path in ("/healthz", "/livez"):
            problem = owner.health_problem()
            if problem is None:
                self._send(200, b"ok")
            else:
                self._send(500, f"[-]{problem} failed: reason withheld\nhealthz check failed\n".encode())
        elif path == "/readyz":
            if not owner.synced():
                self._send(500, b"[-]sched-handler-sync failed: reason withheld\nreadyz check failed\n")
                return
            failing = owner.unhealthy_informers() if owner.unhealthy_informers is not None else []
            if failing:
                self._send(500, f"[-]informer-watch failed: {', '.join(failing)}\nreadyz check failed\n".encode())
            else:
                self._send(200, b"ok")
        elif path == "/metrics":
            from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

            self._send(200, generate_latest(REGISTRY), CONTENT_TYPE_LATEST)
        elif path == "/debug/pprof/profile" and owner.profiling:
            raw = (parse_qs(url.query).get("seconds") or ["30"])[0]
            try:
                seconds = float(raw)
                if not seconds >= 0:
                    raise ValueError
            except ValueError:
                self._send(400, f"invalid value for \"seconds\": {raw!r}\n".encode())
                return
            try:
                data = owner.profile(seconds)
            except ProfilerBusyError as e:
                self._send(500, f"Could not enable CPU profiling: {e}\n".encode())
                return
            self._send(200, data, "application/octet-stream",
                       {"Content-Disposition": 'attachment; filename="profile.pstats"'})
        else:
            self._send(404, b"404 page not found\n")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: StatusServer


class StatusServer:
    """The endpoint on ``address``:``port`` (0 = a free port; see :attr:`port` after
    :meth:`start`), TLS when ``tls`` is an ``ssl.SSLContext``.

    ``synced()``: readiness (informers listed once). ``unhealthy_informers()``: kinds whose
    informer is re-listing or failing (readiness fails while non-empty). ``leader_health()``: None, or ``(leading, last_renew, lease_duration)``
    in clock seconds for the leader-election health check; ``now()`` the same clock.
    ``profiling`` enables ``/debug/pprof/profile``.
    """

    def __init__(self, address: str, port: int, *, synced: Callable[[], bool],
                 unhealthy_informers: Callable[[], list[str]] | None = None,
                 leader_health: Callable[[], tuple[bool, float, float] | None] | None = None,
                 now: Callable[[], float] | None = None, profiling: bool = False,
                 tls: ssl.SSLContext | None = None,
                 profiler: Callable[[float], bytes] = cpu_profile) -> None:
        import time

        self.address = address
        self.port = port
        self.synced = synced
        self.unhealthy_informers = unhealthy_informers
        self.leader_health = leader_health
        self.now = now or time.time
        self.profiling = profiling
        self.tls = tls
        self.profile = profiler
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

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

    def start(self) -> StatusServer:
        """Bind and serve from a daemon thread. Raises OSError when the address is in use."""
        import socket

        family = socket.AF_INET6 if ":" in self.address else socket.AF_INET
        server_cls = type("_BoundServer", (_Server,), {"address_family": family})
        httpd = server_cls((self.address, self.port), _Handler)
        httpd.owner = self
        if self.tls is not None:
            httpd.socket = self.tls.wrap_socket(httpd.socket, server_side=True, do_handshake_on_connect=False)
        self.port = int(httpd.server_address[1])
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"status-server-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
