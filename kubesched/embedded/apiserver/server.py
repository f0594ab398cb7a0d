"""Running the API server: in a background thread (:func:`start_server`, for tests and
``serve --with-scheduler``-style embedding) or in the foreground (:func:`serve_forever`, the CLI).

Plain HTTP on a loopback address, no authentication: this is a development and test facade over
the embedded store, not a secured control plane.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Iterable, Mapping
from typing import Any, TypedDict, Unpack

from aiohttp import web

from kubesched.api.kinds import is_cluster_scoped
from kubesched.clock import Clock, RealClock
from kubesched.embedded.apiserver.admission import admit_new_namespace, admit_new_pod
from kubesched.embedded.apiserver.app import ServerState, build_app
from kubesched.embedded.apiserver.finalizer import DeletionFinalizer
from kubesched.embedded.apiserver.guard import DEFAULT_MAX_BODY_BYTES, RequestGuard
from kubesched.embedded.apiserver.reviews import Reviews
from kubesched.embedded.apiserver.watch import WatchLimits
from kubesched.embedded.controllers.manager import ControllerManager, start_workload_controllers
from kubesched.embedded.controllers.namespace import NamespaceController
from kubesched.embedded.store import MemoryCluster
from kubesched.net.listener import ConnectionLimits, LimitedSite, handler_args

__all__ = [
    "SYSTEM_NAMESPACES",
    "ServerHandle",
    "ServerOptions",
    "ensure_namespaces",
    "epoch_resource_version",
    "namespaces_in_use",
    "serve_forever",
    "setup_server",
    "start_server",
]

#: Seconds a connection may stay without a request (also while its request headers trickle in)
#: before the server closes it: Go's ``IdleTimeout`` of kube-apiserver's secure serving
#: (``staging/src/k8s.io/apiserver/pkg/server/secure_serving.go``), aiohttp's ``keepalive_timeout``.
IDLE_TIMEOUT = 90.0

#: Connection limits of ``serve``'s listener (:mod:`kubesched.net.listener`): every client of
#: a local ``serve`` shares one address, and each informer holds a watch connection per kind; the
#: first request head within 32 s (kube-apiserver's ``ReadHeaderTimeout``, same file).
SERVE_LIMITS = ConnectionLimits(max_connections=4096, max_per_client=4096, head_timeout=32.0)

#: Namespaces every cluster has (created by ``ensure_namespaces`` when missing).
SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


def epoch_resource_version(clock: Clock, objects: Iterable[Mapping[str, Any]] = ()) -> int:
    """The resourceVersion a freshly started store begins at (``MemoryCluster``'s
    ``first_resource_version``): the clock in microseconds since the epoch, or the largest numeric
    ``metadata.resourceVersion`` among ``objects`` (a dump of an earlier server) when that is
    larger. A server restarted on the same port therefore never reuses a version its predecessor
    handed out (unless it made more than one write per microsecond), and the store answers every
    watch from the predecessor's history with 410 Gone, so informers re-list (as after an etcd
    restore with ``etcdutl snapshot restore --bump-revision --mark-compacted``)."""
    base = int(clock.now() * 1_000_000)
    for obj in objects:
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if isinstance(rv, str) and rv.isdigit() and len(rv) <= 19:
            base = max(base, int(rv))
    return base


def namespaces_in_use(cluster: MemoryCluster) -> list[str]:
    """The namespaces of the namespaced objects ``cluster`` holds (Events aside), sorted."""
    return sorted(
        {
            str(obj["metadata"]["namespace"])
            for kind in cluster.counts()
            if not is_cluster_scoped(kind)
            for obj in cluster.list(kind).items
            if obj["metadata"].get("namespace")
        }
    )


def ensure_namespaces(cluster: MemoryCluster, names: Iterable[str] = SYSTEM_NAMESPACES) -> None:
    """Create the Namespaces ``names`` (repeats allowed) that do not exist yet."""
    existing = {ns["metadata"]["name"] for ns in cluster.list("Namespace").items}
    for name in names:
        if name not in existing:
            cluster.create(
                admit_new_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
            )
            existing.add(name)


class ServerHandle:
    """A server running on its own thread and event loop.

    ``url`` is ``http://<address>:<port>``; ``state`` gives the store (``state.cluster``), the
    fault rules, request log and open watches. :meth:`stop` closes the watches, stops the server
    and joins the thread (idempotent).
    """

    def __init__(
        self,
        state: ServerState,
        address: str,
        port: int,
        bookmark_interval: float,
        *,
        controllers: ControllerManager | None = None,
        finalizer: DeletionFinalizer | None = None,
    ) -> None:
        self.state = state
        self.address = address
        self.port = port
        #: the listening site (connection counters), once started
        self.site: LimitedSite | None = None
        self._requested_port = port
        self._bookmark_interval = bookmark_interval
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="kubesched-apiserver", daemon=True)
        self._stopped = False
        #: the cluster's controllers (``controllers``), started before the API listens, else None
        self.controllers = controllers
        #: deletes pods whose graceful deletion is over (``finalize_deletions``), else None;
        #: started once the API listens
        self.finalizer = finalizer

    @property
    def cluster(self) -> MemoryCluster:
        """The served store."""
        return self.state.cluster

    @property
    def url(self) -> str:
        """Base URL of the API (``http://127.0.0.1:PORT``)."""
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"http://{host}:{self.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._start())
        except BaseException as e:  # reported to start_server's caller
            self._error = e
            self._started.set()
            return
        self._started.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self._shutdown())
        self._loop.close()

    async def _start(self) -> None:
        self._runner = web.AppRunner(
            build_app(self.state),
            handler_cancellation=True,
            access_log=None,
            shutdown_timeout=1.0,
            keepalive_timeout=IDLE_TIMEOUT,
            **handler_args(),
        )
        await self._runner.setup()
        site = LimitedSite(self._runner, self.address, self._requested_port, limits=SERVE_LIMITS)
        await site.start()
        self.site = site
        self.port = site.port
        host = f"[{self.address}]" if ":" in self.address else self.address
        self.state.server_address = f"{host}:{self.port}"

    async def _shutdown(self) -> None:
        self.state.hub.drop_all()
        await asyncio.sleep(0)
        if self._runner is not None:
            await self._runner.cleanup()

    def start(self) -> ServerHandle:
        """Start the controllers, then the thread, wait until the socket listens, then start the
        finalizer. Raises OSError (port in use, ...; the controllers are stopped again)."""
        if self.controllers is not None:
            self.controllers.start()
        self._thread.start()
        self._started.wait()
        if self._error is not None:
            if self.controllers is not None:
                self.controllers.stop()
            raise self._error
        if self.finalizer is not None:
            self.finalizer.start()
        return self

    def stop(self) -> None:
        """Stop serving and join the server thread."""
        if self._stopped:
            return
        self._stopped = True
        if self.finalizer is not None:
            self.finalizer.stop()
        if self.controllers is not None:
            self.controllers.stop()
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def setup_server(
    cluster: MemoryCluster | None = None,
    *,
    address: str = "127.0.0.1",
    port: int = 0,
    clock: Clock | None = None,
    bookmark_interval: float = 10.0,
    watch_timeout: float | None = 1800.0,
    system_namespaces: bool = True,
    finalize_deletions: bool = False,
    reviews: Reviews | None = None,
    controllers: bool = False,
    enable_test_hooks: bool = False,
    allowed_hosts: Iterable[str] = (),
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    watch_limits: WatchLimits | None = None,
    server_client_times: bool = False,
    workload_controllers: bool = False,
) -> ServerHandle:
    """The server of ``cluster`` (a new empty ``MemoryCluster`` with random UIDs on a ``RealClock`` when
    None) on ``address``:``port`` (0 = a free port), built and not started (:meth:`ServerHandle.start`
    serves from a background thread; :func:`start_server` does both).

    ``bookmark_interval``: seconds between watch BOOKMARKs; ``watch_timeout``: seconds a watch
    without ``timeoutSeconds`` lasts (None = until the client leaves). With ``system_namespaces``
    the namespaces of :data:`SYSTEM_NAMESPACES`, and those of the objects ``cluster`` already holds
    (loaded from manifests that do not declare them), are created when missing: the server's
    ``NamespaceLifecycle`` admission refuses new objects in a namespace that does not exist. With
    ``finalize_deletions`` a :class:`~kubesched.embedded.apiserver.finalizer.DeletionFinalizer` deletes pods
    whose graceful deletion is over (there is no kubelet to do it). ``reviews``: the tokens and
    policies TokenReview/SubjectAccessReview answer with (see :mod:`kubesched.embedded.apiserver.reviews`).
    With ``controllers`` the embedded cluster's controllers run (:class:`~kubesched.embedded.controllers.manager.ControllerManager`:
    they bind volume claims, provision volumes, create, reserve and release ResourceClaims and
    collect the dependents of deleted owners as kube-controller-manager and a provisioner would). A
    :class:`~kubesched.embedded.controllers.namespace.NamespaceController` always runs (deleting a
    namespace deletes its objects); with ``workload_controllers`` the ReplicaSet, Deployment, Job,
    DaemonSet and StatefulSet controllers run (started
    here, as they only act on store events), creating pods through the server's pod admission.
    ``enable_test_hooks`` serves the ``/kubesched/`` fault-injection hooks (off by default). ``allowed_hosts`` are host names
    accepted in the ``Host`` header besides IP literals, ``localhost`` and ``address``;
    ``max_body_bytes`` bounds request bodies (413 beyond; see :mod:`kubesched.embedded.apiserver.guard`);
    ``watch_limits`` each watch's buffer and write time (default :class:`WatchLimits`). With
    ``server_client_times`` the times clients write (Events, status conditions) are replaced by
    ``clock``'s (for a sped-up clock; see :mod:`kubesched.embedded.apiserver.client_times`).
    """
    clock = clock or RealClock()
    if cluster is None:
        cluster = MemoryCluster(clock, uid_seed=None)
    if system_namespaces:
        ensure_namespaces(cluster, [*SYSTEM_NAMESPACES, *namespaces_in_use(cluster)])
    guard = RequestGuard.for_address(address, allowed_hosts, max_body_bytes)
    state = ServerState(
        cluster,
        clock,
        bookmark_interval=bookmark_interval,
        watch_timeout=watch_timeout,
        enable_test_hooks=enable_test_hooks,
        guard=guard,
        watch_limits=watch_limits or WatchLimits(),
        reviews=reviews or Reviews(),
        client_time_clock=clock.now if server_client_times else None,
    )
    NamespaceController(cluster).start()  # acts only on namespace deletions
    if workload_controllers:
        store = cluster
        start_workload_controllers(cluster, clock, lambda pod: admit_new_pod(pod, store))
    return ServerHandle(
        state,
        address,
        port,
        bookmark_interval,
        controllers=ControllerManager(cluster, clock) if controllers else None,
        finalizer=DeletionFinalizer(cluster, clock) if finalize_deletions else None,
    )


class ServerOptions(TypedDict, total=False):
    """The keyword arguments of :func:`setup_server` (and so of :func:`start_server`), typed: see
    :func:`setup_server` for each one's meaning and default."""

    address: str
    port: int
    clock: Clock | None
    bookmark_interval: float
    watch_timeout: float | None
    system_namespaces: bool
    finalize_deletions: bool
    reviews: Reviews | None
    controllers: bool
    enable_test_hooks: bool
    allowed_hosts: Iterable[str]
    max_body_bytes: int
    watch_limits: WatchLimits | None
    server_client_times: bool
    workload_controllers: bool


def start_server(cluster: MemoryCluster | None = None, **options: Unpack[ServerOptions]) -> ServerHandle:
    """:func:`setup_server` (same arguments, :class:`ServerOptions`) and
    :meth:`ServerHandle.start`: the running handle. Raises OSError when the address cannot be
    bound."""
    return setup_server(cluster, **options).start()


def serve_forever(handle: ServerHandle) -> None:
    """Block the calling (main) thread until SIGINT or SIGTERM, then stop ``handle``."""
    done = threading.Event()

    def _stop(signum: int, frame: object) -> None:
        done.set()

    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        while not done.wait(1.0):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        handle.stop()
