"""``kubesched run``'s composition root: the client (rate limits, fencing, write-behind, events),
the scheduler, leader election, the pre-pull controller and the secure endpoints, started and
stopped in kube-scheduler's order (``cmd/kube-scheduler/app/server.go: Run``)."""

from __future__ import annotations

import gc
import logging
import signal
import threading
from dataclasses import dataclass
from typing import Any

from kubesched.clock import RealClock
from kubesched.errors import ConfigError
from kubesched.modes.run.cpu_affinity import CpuAffinity
from kubesched.modes.run.effective_config import effective_config_document
from kubesched.modes.run.options import RunOptions
from kubesched.modes.run.plugin_modules import load_plugin_modules

__all__ = ["run_scheduler"]

log = logging.getLogger("kubesched.run")


def run_scheduler(opts: RunOptions) -> int:
    """Run until SIGTERM/SIGINT (returns 0) or a lost lease (returns 1). Raises ConfigError for a
    bad kubeconfig, config or plugin module."""
    from kubesched.client.kube import KubeClusterClient

    clock = RealClock()
    client = KubeClusterClient.from_kubeconfig(opts.kubeconfig, qps=opts.qps, burst=opts.burst, clock=clock)
    # before the scheduler's threads start (they inherit the placement); undone on return
    affinity = CpuAffinity(opts.cpu_affinity)
    affinity.start()
    try:
        return _run(opts, clock, client, affinity)
    finally:
        affinity.restore()


def _run(opts: RunOptions, clock: RealClock, client: Any, affinity: CpuAffinity) -> int:
    from kubesched.client.client_metrics import ComponentMetrics
    from kubesched.client.fencing import LeaseFence
    from kubesched.client.leader_election import LeaderElectionConfig, LeaderElector
    from kubesched.plugins import in_tree_registry
    from kubesched.scheduler.core import BindingPool
    from kubesched.scheduler.factory import new_scheduler
    from kubesched.serving.delegation import build_request_auth
    from kubesched.serving.http import RequestAuth, StatusServer
    from kubesched.serving.tls import accept_client_certificates, server_context

    component_metrics = ComponentMetrics.for_registry()  # the default registry, served at /metrics
    client.component_metrics = component_metrics
    registry = in_tree_registry()
    load_plugin_modules(registry, opts.plugin_modules)
    pool = BindingPool(max_workers=opts.parallel_bindings, max_in_flight=opts.parallel_bindings * 16)
    from kubesched.metrics import SchedulerMetrics

    try:
        writes = _api_writes(client, opts, clock)
        sched = new_scheduler(client, opts.config, clock=clock, registry=registry, binding_executor=pool,
                              write_client=writes.client, event_sink=writes.events.record,
                              reporting_instance=opts.identity,
                              permit_wait_timeout=opts.permit_wait_timeout or None,
                              metrics=SchedulerMetrics())  # default registry: served at /metrics
    except ConfigError as e:
        if opts.config_file and not e.where:
            raise e.located(opts.config_file) from None
        raise

    prepuller = None
    if opts.prepull is not None:
        from kubesched.prepull.controller import PrePullController
        from kubesched.prepull.image_facts import registry_settings_of

        p = opts.prepull
        prepuller = PrePullController.for_scheduler(
            sched, client, clock, p.catalogue, api_client=client.api, mechanism=p.mechanism,
            registry_settings=p.registry_settings or registry_settings_of(opts.effective),
            namespace=p.namespace, interval=p.interval,
            max_new_per_tick=p.max_per_tick, timeout_seconds=p.timeout, priority_class_name=p.priority_class or None)

    shutdown = threading.Event()   # SIGTERM/SIGINT
    lost = threading.Event()       # lease lost
    sched_stop = threading.Event()  # scheduling loop
    elector: LeaderElector | None = None
    if opts.leader_elect:
        try:
            le_cfg = LeaderElectionConfig(name=opts.lease_name, namespace=opts.lease_namespace, identity=opts.identity,
                                          lease_duration=opts.lease_duration, renew_deadline=opts.renew_deadline,
                                          retry_period=opts.retry_period)
            le_cfg.validate()
        except ValueError as e:
            raise ConfigError("leaderElection", str(e)) from None

    def synced() -> bool:
        return sched.has_synced()

    def leader_health() -> tuple[bool, float, float] | None:
        if elector is None:
            return None
        return elector.is_leader(), elector.last_renew(), opts.lease_duration

    def unhealthy() -> list[str]:
        return sched.unhealthy_informers()

    # the serving certificate first, as upstream's SecureServing.ApplyTo before Authentication.ApplyTo
    tls = server_context(opts.bind_address, opts.tls_cert_file, opts.tls_private_key_file) \
        if opts.secure_port else None  # ConfigError naming --tls-cert-file / --tls-private-key-file
    delegated = build_request_auth(opts.delegation, opts.kubeconfig, client_certificates=tls is not None)
    auth = RequestAuth(delegated.authenticator, delegated.authorizer)
    componentconfig = effective_config_document(opts)

    def configz() -> dict[str, Any]:
        return {"componentconfig": componentconfig}

    from prometheus_client import CollectorRegistry

    from kubesched.metrics.pod_resources import PodResourcesCollector

    resources = CollectorRegistry()  # /metrics/resources: the pods' requests and limits, read at each scrape
    resources.register(PodResourcesCollector(lambda: sched.objects("Pod")))
    servers: list[StatusServer] = []
    if tls is not None:
        accept_client_certificates(tls, delegated.client_ca_pem)
    endpoints = [(opts.secure_port, "--secure-port", tls), (opts.port, "--port", None)]
    for port, flag, ctx in endpoints:
        if not port:
            continue
        try:
            servers.append(StatusServer(opts.bind_address, port, synced=synced, unhealthy_informers=unhealthy,
                                        leader_health=leader_health, now=clock.now, profiling=opts.profiling,
                                        tls=ctx, auth=auth, configz=configz,
                                        resources_registry=resources).start())
        except OSError as e:
            _stop_servers(servers)
            raise ConfigError("--bind-address", f"cannot listen on {opts.bind_address}:{port} ({flag}): "
                              f"{e.strerror or e}") from None
    delegated.follow(tls, shutdown)  # CA files and the authentication ConfigMap, re-read every minute
    for s in servers:
        log.info("serving /healthz /readyz /metrics%s on %s", " /debug/pprof/profile" if opts.profiling else "", s.url)

    def on_signal(signum: int, frame: object) -> None:
        log.info("received %s: shutting down", signal.Signals(signum).name)
        shutdown.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    if affinity.mode == "auto" and affinity.cpu is not None:
        threading.Thread(target=affinity.run, args=(shutdown,), name="cpu-affinity", daemon=True).start()
    sched_thread = threading.Thread(target=sched.run, args=(sched_stop,), name="scheduling-loop", daemon=True)

    def start_scheduling() -> None:
        if opts.leader_elect:
            component_metrics.leading(opts.lease_name, True)
        if not sched_thread.is_alive() and not shutdown.is_set():
            log.info("starting the scheduling loop")
            sched_thread.start()
            if prepuller is not None:
                threading.Thread(target=prepuller.run, args=(sched_stop,), name="prepull", daemon=True).start()

    def stopped_leading() -> None:
        component_metrics.leading(opts.lease_name, False)
        if shutdown.is_set():
            return  # graceful release
        sched_stop.set()
        pool.halt()
        lost.set()

    start_error: list[BaseException] = []

    def start_informers() -> None:
        try:
            sched.start(queue_flushes=True)  # informers synced, then the queue's flush loops
        except Exception as e:  # closing the client at shutdown ends a list that is still retrying
            if not shutdown.is_set():
                start_error.append(e)
                shutdown.set()

    try:
        start_thread = threading.Thread(target=start_informers, name="informers-start", daemon=True)
        start_thread.start()
        while start_thread.is_alive() and not shutdown.is_set():
            start_thread.join(0.2)
        if shutdown.is_set():
            if start_error:
                log.error("starting the informers failed: %s", start_error[0])
            else:
                log.info("shutting down before the caches synced (no pod was scheduled)")
            code = _graceful(sched, sched_stop, sched_thread, pool, elector, client, servers, writes)
            start_thread.join(5)
            return 1 if start_error else code
        log.info("caches synced: %d nodes, %d pods", len(sched.objects("Node")), len(sched.objects("Pod")))
        # The listed objects live as long as the process (informer stores, cache, parsed pods):
        # leave them out of the cyclic garbage collector's passes from now on (they are still
        # freed by reference counting when replaced; what of them ends in a reference cycle is
        # kept: at most the start-up heap, which was live anyway).
        gc.freeze()
        if opts.leader_elect:
            component_metrics.leading(opts.lease_name, False)
            elector = LeaderElector(client, le_cfg, clock, on_started_leading=start_scheduling,
                                    on_stopped_leading=stopped_leading,
                                    on_new_leader=lambda who: log.info("new leader elected: %s", who))
            client.write_guard = LeaseFence(elector.valid_until, stopped_leading)  # no write on a stale lease
            writes.events_client.write_guard = client.write_guard  # the events client is fenced the same way
            log.info("attempting to acquire lease %s/%s as %s", le_cfg.namespace, le_cfg.name, le_cfg.identity)
            threading.Thread(target=elector.run, args=(shutdown,), name="leader-election", daemon=True).start()
        else:
            start_scheduling()
        while not shutdown.is_set() and not lost.is_set():
            shutdown.wait(0.5)
        if lost.is_set() and not shutdown.is_set():
            log.error("leaderelection lost")
            return 1
        return _graceful(sched, sched_stop, sched_thread, pool, elector, client, servers, writes)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _stop_servers(servers: list[Any]) -> None:
    """Stop the endpoints at the same time (each waits for its serving loop to notice)."""
    threads = [threading.Thread(target=s.stop, name="stop-endpoint", daemon=True) for s in servers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)


@dataclass
class ApiWrites:
    """The non-blocking write path of ``run``: the write-behind client (status patches, victim
    deletions), its worker pool and the event broadcaster (own token bucket)."""

    client: Any
    writer: Any
    events: Any
    #: the events' own client (own token bucket), sharing the main client's connection settings
    events_client: Any = None

    def stop(self) -> None:
        """Finish the queued writes and events (pending series counts included)."""
        self.writer.stop()
        self.events.stop()


def _api_writes(client: Any, opts: RunOptions, clock: Any) -> ApiWrites:
    from kubesched.client.event_broadcaster import EventBroadcaster
    from kubesched.client.rate_limit import TokenBucket
    from kubesched.client.write_behind import AsyncWriter, WriteBehindClient

    writer = AsyncWriter(workers=4)
    events_client = client.with_limiter(TokenBucket(opts.qps, opts.burst, clock) if opts.qps != 0 else None)
    return ApiWrites(WriteBehindClient(client, writer), writer, EventBroadcaster(events_client, clock).start(),
                     events_client)


def _graceful(sched: Any, sched_stop: threading.Event, sched_thread: threading.Thread, pool: Any, elector: Any,
              client: Any, servers: list[Any], writes: ApiWrites | None = None) -> int:
    """Stop taking pods (:meth:`Scheduler.stop` closes the queue, which wakes the loop's wait at
    once, and ends the watches), finish the scheduling cycle and the in-flight bindings, release
    the lease, close the client and servers."""
    sched_stop.set()
    sched.stop()
    if sched_thread.is_alive():
        sched_thread.join(30)
    pool.shutdown(wait=True)
    if writes is not None:
        writes.stop()
    if elector is not None and elector.is_leader():
        elector.release()
        log.info("released the lease")
    client.close()
    _stop_servers(servers)
    log.info("stopped")
    return 0
