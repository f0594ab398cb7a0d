"""``kubesched run``'s composition root: :func:`setup` builds the object graph (the client with
rate limits, fencing, write-behind and events, the scheduler, leader election, the pre-pull
controller and the secure endpoints) and :func:`run` runs it, starting and stopping its parts in
kube-scheduler's order (``cmd/kube-scheduler/app/server.go``: ``Setup`` apart from ``Run``)."""

from __future__ import annotations

import gc
import logging
import signal
import ssl
import threading
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry

from kubesched.client.client_metrics import ComponentMetrics
from kubesched.client.event_broadcaster import EventBroadcaster
from kubesched.client.fencing import LeaseFence
from kubesched.client.kube import KubeClusterClient
from kubesched.client.leader_election import LeaderElectionConfig, LeaderElector
from kubesched.client.rate_limit import TokenBucket
from kubesched.client.write_behind import AsyncWriter, WriteBehindClient
from kubesched.clock import RealClock
from kubesched.errors import ConfigError, ListenError
from kubesched.metrics import SchedulerMetrics
from kubesched.metrics.pod_resources import PodResourcesCollector
from kubesched.modes.run.cpu_affinity import CpuAffinity
from kubesched.modes.run.effective_config import effective_config_document
from kubesched.modes.run.options import RunOptions
from kubesched.modes.run.plugin_modules import load_plugin_modules
from kubesched.modes.run.thread_policy import ThreadPolicy
from kubesched.plugins import in_tree_registry
from kubesched.prepull.controller import PrePullController
from kubesched.prepull.image_facts import registry_settings_of
from kubesched.scheduler.core import BindingPool, Scheduler
from kubesched.scheduler.factory import new_scheduler
from kubesched.serving.delegation import DelegatedAuth, build_request_auth
from kubesched.serving.http import RequestAuth, StatusServer
from kubesched.serving.tls import accept_client_certificates, server_context

__all__ = ["ApiWrites", "Lease", "LeaseSignals", "RunGraph", "run", "run_scheduler", "setup"]

log = logging.getLogger("kubesched.run")


def run_scheduler(opts: RunOptions) -> int:
    """Build (:func:`setup`) and run (:func:`run`) until SIGTERM/SIGINT (returns 0) or a lost
    lease (returns 1). Raises ConfigError for a bad kubeconfig, config, flag or plugin module, or
    an endpoint that cannot listen. The CPU placement and thread policy are undone when it returns."""
    graph = setup(opts)
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        log.info("received %s: shutting down", signal.Signals(signum).name)
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        return run(graph, stop)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        graph.affinity.restore()
        graph.thread_policy.restore()


class LeaseSignals:
    """What the leader elector and the write fence report to :func:`run`, as events it waits on
    (they are built before the scheduler they stop, so they only signal): ``started`` once the
    lease is acquired, ``stopped`` once it is lost or released, or a write was refused on a stale
    lease; ``changed`` with either."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.stopped = threading.Event()
        self.changed = threading.Event()

    def started_leading(self) -> None:
        """The elector's ``on_started_leading``."""
        self.started.set()
        self.changed.set()

    def stopped_leading(self) -> None:
        """The elector's ``on_stopped_leading`` and the fence's ``on_stale`` (must not block)."""
        self.stopped.set()
        self.changed.set()


@dataclass(frozen=True)
class Lease:
    """Leader election: the elector on a client of its own (own token bucket, unfenced: upstream's
    ``leaderElectionClient`` in ``cmd/kube-scheduler/app/options``), and its configuration."""

    config: LeaderElectionConfig
    elector: LeaderElector
    client: KubeClusterClient


@dataclass(frozen=True)
class ApiWrites:
    """The non-blocking write path of ``run``: the write-behind client (status patches, victim
    deletions), its worker pool and the event broadcaster (own client and token bucket, fenced as
    the main client; started by :func:`run`)."""

    client: WriteBehindClient
    writer: AsyncWriter
    events: EventBroadcaster
    events_client: KubeClusterClient

    def stop(self) -> None:
        """Finish the queued writes and events (pending series counts included)."""
        self.writer.stop()
        self.events.stop()


@dataclass(frozen=True)
class Endpoint:
    """One status endpoint, not listening yet, and the flag that names its port."""

    server: StatusServer
    flag: str


@dataclass(frozen=True)
class RunGraph:
    """Everything ``run`` runs, built and wired by :func:`setup`; nothing is started but the CPU
    placement and the write-behind workers (threads started later inherit the placement)."""

    options: RunOptions
    clock: RealClock
    affinity: CpuAffinity
    #: the threads' scheduling policy (``--thread-policy``), set before any scheduler thread starts
    thread_policy: ThreadPolicy
    component_metrics: ComponentMetrics
    #: the scheduler's client (shared token bucket, fenced by the lease when electing)
    client: KubeClusterClient
    writes: ApiWrites
    pool: BindingPool
    scheduler: Scheduler
    prepuller: PrePullController | None
    lease: Lease | None
    signals: LeaseSignals
    tls: ssl.SSLContext | None
    delegated: DelegatedAuth
    endpoints: tuple[Endpoint, ...]


def setup(opts: RunOptions) -> RunGraph:
    """Build ``run``'s object graph from ``opts`` (upstream ``Setup``): load the kubeconfig, place
    the process on its CPU, load plugins, validate leader election, build the clients, the
    scheduler and the pre-pull controller (on a clock ``--speed`` times as fast as the wall clock;
    the clients, the lease and the endpoints on the wall clock), the endpoints' TLS and delegated
    authentication. Raises
    ConfigError naming the flag or configuration field (located in ``--config`` when it has no
    place of its own); nothing is left placed or open when it raises."""
    clock = RealClock()
    component_metrics = ComponentMetrics.for_registry()  # the default registry, served at /metrics
    base = KubeClusterClient.from_kubeconfig(
        opts.kubeconfig, qps=opts.qps, burst=opts.burst, clock=clock, component_metrics=component_metrics
    )
    # before the scheduler's threads start (they inherit placement and policy); undone by run_scheduler
    affinity = CpuAffinity(opts.cpu_affinity)
    affinity.start()
    policy = ThreadPolicy(opts.thread_policy)
    policy.start()
    try:
        return _build(opts, clock, component_metrics, base, affinity, policy)
    except BaseException:
        affinity.restore()
        policy.restore()
        base.close()
        raise


def _build(
    opts: RunOptions,
    clock: RealClock,
    component_metrics: ComponentMetrics,
    base: KubeClusterClient,
    affinity: CpuAffinity,
    policy: ThreadPolicy,
) -> RunGraph:
    registry = in_tree_registry()
    load_plugin_modules(registry, opts.plugin_modules)
    signals = LeaseSignals()
    lease = _lease(opts, base, clock, signals) if opts.leader_elect else None
    # no write on a stale lease (the lease's own requests pass: kubesched.client.fencing)
    client = (
        base
        if lease is None
        else base.with_limiter(
            base.limiter, write_guard=LeaseFence(lease.elector.valid_until, signals.stopped_leading)
        )
    )
    pool = BindingPool(max_workers=opts.parallel_bindings, max_in_flight=opts.parallel_bindings * 16)
    writes = _api_writes(client, opts, clock)
    # the cluster's seconds (``--speed``): the queue, the plugins and the pre-pull agent
    sched_clock = clock if opts.speed == 1.0 else RealClock(opts.speed)
    try:
        try:
            sched = new_scheduler(
                client,
                opts.config,
                clock=sched_clock,
                registry=registry,
                binding_executor=pool,
                write_client=writes.client,
                event_sink=writes.events.record,
                reporting_instance=opts.identity,
                permit_wait_timeout=opts.permit_wait_timeout or None,
                metrics=SchedulerMetrics(),
            )  # default registry: served at /metrics
        except ConfigError as e:
            if opts.config_file and not e.where:
                raise e.located(opts.config_file) from None
            raise
        prepuller = _prepuller(opts, sched, client, sched_clock) if opts.prepull is not None else None
        # the serving certificate first, as upstream's SecureServing.ApplyTo before Authentication.ApplyTo
        tls = (
            server_context(opts.bind_address, opts.tls_cert_file, opts.tls_private_key_file)
            if opts.secure_port
            else None
        )  # ConfigError naming --tls-cert-file / --tls-private-key-file
        delegated = build_request_auth(opts.delegation, opts.kubeconfig, client_certificates=tls is not None)
    except BaseException:
        writes.writer.stop()
        raise
    if tls is not None:
        accept_client_certificates(tls, delegated.client_ca_pem)
    endpoints = _endpoints(
        opts, clock, sched, lease, tls, RequestAuth(delegated.authenticator, delegated.authorizer)
    )
    return RunGraph(
        options=opts,
        clock=clock,
        affinity=affinity,
        thread_policy=policy,
        component_metrics=component_metrics,
        client=client,
        writes=writes,
        pool=pool,
        scheduler=sched,
        prepuller=prepuller,
        lease=lease,
        signals=signals,
        tls=tls,
        delegated=delegated,
        endpoints=endpoints,
    )


def _lease(opts: RunOptions, base: KubeClusterClient, clock: RealClock, signals: LeaseSignals) -> Lease:
    """The elector of ``--leader-elect`` (ConfigError ``leaderElection`` for bad durations)."""
    try:
        cfg = LeaderElectionConfig(
            name=opts.lease_name,
            namespace=opts.lease_namespace,
            identity=opts.identity,
            lease_duration=opts.lease_duration,
            renew_deadline=opts.renew_deadline,
            retry_period=opts.retry_period,
        )
        cfg.validate()
    except ValueError as e:
        raise ConfigError("leaderElection", str(e)) from None
    lease_client = base.with_limiter(TokenBucket(opts.qps, opts.burst, base.clock) if opts.qps != 0 else None)
    elector = LeaderElector(
        lease_client,
        cfg,
        clock,
        on_started_leading=signals.started_leading,
        on_stopped_leading=signals.stopped_leading,
        on_new_leader=lambda who: log.info("new leader elected: %s", who),
    )
    return Lease(cfg, elector, lease_client)


def _prepuller(
    opts: RunOptions, sched: Scheduler, client: KubeClusterClient, clock: RealClock
) -> PrePullController:
    p = opts.prepull
    assert p is not None
    return PrePullController.for_scheduler(
        sched,
        client,
        clock,
        p.catalogue,
        mechanism=p.mechanism,
        registry_settings=p.registry_settings or registry_settings_of(opts.effective),
        namespace=p.namespace,
        interval=p.interval,
        max_new_per_tick=p.max_per_tick,
        timeout_seconds=p.timeout,
        priority_class_name=p.priority_class or None,
    )


def _endpoints(
    opts: RunOptions,
    clock: RealClock,
    sched: Scheduler,
    lease: Lease | None,
    tls: ssl.SSLContext | None,
    auth: RequestAuth,
) -> tuple[Endpoint, ...]:
    """``--secure-port`` (TLS) and ``--port`` (plain), each when non-zero, not listening yet."""
    componentconfig = effective_config_document(opts)

    def configz() -> dict[str, Any]:
        return {"componentconfig": componentconfig}

    def leader_health() -> tuple[bool, float, float] | None:
        if lease is None:
            return None
        return lease.elector.is_leader(), lease.elector.last_renew(), opts.lease_duration

    resources = CollectorRegistry()  # /metrics/resources: the pods' requests and limits, read at each scrape
    resources.register(PodResourcesCollector(lambda: sched.objects("Pod")))
    return tuple(
        Endpoint(
            StatusServer(
                opts.bind_address,
                port,
                synced=sched.has_synced,
                unhealthy_informers=sched.unhealthy_informers,
                leader_health=leader_health,
                now=clock.now,
                profiling=opts.profiling,
                tls=ctx,
                auth=auth,
                configz=configz,
                resources_registry=resources,
            ),
            flag,
        )
        for port, flag, ctx in ((opts.secure_port, "--secure-port", tls), (opts.port, "--port", None))
        if port
    )


def _api_writes(client: KubeClusterClient, opts: RunOptions, clock: RealClock) -> ApiWrites:
    writer = AsyncWriter(workers=4)
    events_client = client.with_limiter(TokenBucket(opts.qps, opts.burst, clock) if opts.qps != 0 else None)
    return ApiWrites(
        WriteBehindClient(client, writer), writer, EventBroadcaster(events_client, clock), events_client
    )


def run(graph: RunGraph, stop: threading.Event) -> int:
    """Run ``graph`` until ``stop`` is set (returns 0 after a graceful stop) or the lease is lost
    (returns 1; 1 too when the informers could not start): events, endpoints, informers, then
    the scheduling loop, the pre-pull controller and the elector (upstream ``Run``). Raises
    ConfigError when an endpoint cannot listen."""
    opts, sched, signals = graph.options, graph.scheduler, graph.signals
    graph.writes.events.start()
    servers: list[StatusServer] = []
    for ep in graph.endpoints:
        try:
            servers.append(ep.server.start())
        except OSError as e:
            _stop_servers(servers)
            _stop_writes(graph)
            raise ListenError(opts.bind_address, ep.server.port, f"--bind-address, {ep.flag}", e) from None
    graph.delegated.follow(graph.tls, stop)  # CA files and the authentication ConfigMap, re-read every minute
    for s in servers:
        log.info(
            "serving /healthz /readyz /metrics%s on %s",
            " /debug/pprof/profile" if opts.profiling else "",
            s.url,
        )
    if graph.affinity.mode == "auto" and graph.affinity.cpu is not None:
        threading.Thread(target=graph.affinity.run, args=(stop,), name="cpu-affinity", daemon=True).start()
    sched_stop = threading.Event()  # scheduling loop
    sched_thread = threading.Thread(target=sched.run, args=(sched_stop,), name="scheduling-loop", daemon=True)

    def graceful() -> int:
        return _graceful(graph, sched_stop, sched_thread, servers)

    start_error: list[BaseException] = []

    def start_informers() -> None:
        try:
            sched.start(queue_flushes=True)  # informers synced, then the queue's flush loops
        except Exception as e:  # closing the client at shutdown ends a list that is still retrying
            if not stop.is_set():
                start_error.append(e)
                stop.set()

    start_thread = threading.Thread(target=start_informers, name="informers-start", daemon=True)
    start_thread.start()
    while start_thread.is_alive() and not stop.is_set():
        start_thread.join(0.2)
    if stop.is_set():
        if start_error:
            log.error("starting the informers failed: %s", start_error[0])
        else:
            log.info("shutting down before the caches synced (no pod was scheduled)")
        code = graceful()
        start_thread.join(5)
        return 1 if start_error else code
    log.info("caches synced: %d nodes, %d pods", len(sched.objects("Node")), len(sched.objects("Pod")))
    # The listed objects live as long as the process (informer stores, cache, parsed pods):
    # leave them out of the cyclic garbage collector's passes from now on (they are still
    # freed by reference counting when replaced; what of them ends in a reference cycle is
    # kept: at most the start-up heap, which was live anyway).
    gc.freeze()
    lease = graph.lease
    if lease is None:
        _start_scheduling(graph, sched_thread, sched_stop, stop)
    else:
        graph.component_metrics.leading(opts.lease_name, False)
        log.info(
            "attempting to acquire lease %s/%s as %s",
            lease.config.namespace,
            lease.config.name,
            lease.config.identity,
        )
        threading.Thread(target=lease.elector.run, args=(stop,), name="leader-election", daemon=True).start()
    while not stop.is_set():
        if not signals.changed.wait(0.2):
            continue
        signals.changed.clear()
        if signals.stopped.is_set():
            graph.component_metrics.leading(opts.lease_name, False)
            if stop.is_set():
                break  # graceful release
            sched_stop.set()
            graph.pool.halt()
            log.error("leaderelection lost")
            return 1
        if signals.started.is_set():
            graph.component_metrics.leading(opts.lease_name, True)
            _start_scheduling(graph, sched_thread, sched_stop, stop)
    return graceful()


def _start_scheduling(
    graph: RunGraph, sched_thread: threading.Thread, sched_stop: threading.Event, stop: threading.Event
) -> None:
    """The scheduling loop and the pre-pull controller, once (upstream ``OnStartedLeading``)."""
    if sched_thread.ident is not None or stop.is_set():
        return
    log.info("starting the scheduling loop")
    sched_thread.start()
    if graph.prepuller is not None:
        threading.Thread(target=graph.prepuller.run, args=(sched_stop,), name="prepull", daemon=True).start()


def _stop_servers(servers: list[StatusServer]) -> None:
    """Stop the endpoints at the same time (each waits for its serving loop to notice)."""
    threads = [threading.Thread(target=s.stop, name="stop-endpoint", daemon=True) for s in servers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)


def _stop_writes(graph: RunGraph) -> None:
    graph.writes.stop()
    graph.client.close()
    if graph.lease is not None:
        graph.lease.client.close()


def _graceful(
    graph: RunGraph, sched_stop: threading.Event, sched_thread: threading.Thread, servers: list[StatusServer]
) -> int:
    """Stop taking pods (:meth:`Scheduler.stop` closes the queue, which wakes the loop's wait at
    once, and ends the watches), finish the scheduling cycle and the in-flight bindings and the
    queued writes, release the lease, close the clients and servers."""
    sched_stop.set()
    graph.scheduler.stop()
    if sched_thread.is_alive():
        sched_thread.join(30)
    graph.pool.shutdown(wait=True)
    graph.writes.stop()
    lease = graph.lease
    if lease is not None and lease.elector.is_leader():
        lease.elector.release()
        log.info("released the lease")
    graph.client.close()
    if lease is not None:
        lease.client.close()
    _stop_servers(servers)
    log.info("stopped")
    return 0
