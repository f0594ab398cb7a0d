"""``kubesched run``: schedule against a Kubernetes API server (``cmd/kube-scheduler/app/server.go``).

Start order follows upstream: the HTTP endpoint, then the informers (list + watch every kind the
scheduler reads) until synced, then -- with leader election -- the campaign for the Lease; the
scheduling loop runs only while leading. Flags override the config file's ``clientConnection``
and ``leaderElection`` (the file's values are the flags' defaults, as upstream's
``Options.ApplyTo`` does).

Exit codes: 0 after a graceful stop (SIGTERM/SIGINT: stop taking pods, finish in-flight bindings,
release the lease); 1 when the lease is lost (scheduling stops at once, as upstream's
``OnStoppedLeading`` exits the process); 2 for a bad flag, config or kubeconfig.
"""

from __future__ import annotations

import importlib
import logging
import os
import signal
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

import click

from kubesched import __version__
from kubesched.cli.pflag import PflagIntRange, bool_flag_options
from kubesched.cli.prepull_flags import PrePullOptions, prepull_flags, prepull_options
from kubesched.clock import RealClock
from kubesched.config.duration import parse_go_duration
from kubesched.config.load import default_config, load_config
from kubesched.config.run_fields import JSON, check_run_fields
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.errors import ConfigError
from kubesched.logs import FORMATS
from kubesched.logs import configure as configure_logging
from kubesched.serving.delegation import DelegationOptions

log = logging.getLogger("kubesched.run")


def _duration(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    try:
        seconds = parse_go_duration(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    if seconds < 0:
        raise click.BadParameter("must not be negative")
    return seconds


@dataclass
class RunOptions:
    """Everything ``run`` needs, after flags and the config file are combined."""

    kubeconfig: str | None
    config: KubeSchedulerConfiguration | None
    effective: KubeSchedulerConfiguration
    qps: float
    burst: int
    leader_elect: bool
    lease_duration: float
    renew_deadline: float
    retry_period: float
    lease_name: str
    lease_namespace: str
    identity: str
    permit_wait_timeout: float
    profiling: bool
    bind_address: str
    secure_port: int
    port: int
    tls_cert_file: str | None
    tls_private_key_file: str | None
    plugin_modules: tuple[str, ...]
    parallel_bindings: int
    #: the --config file (names the file in config errors found while building the profiles)
    config_file: str | None = None
    #: --prepull settings (None: no pre-pull controller)
    prepull: PrePullOptions | None = None
    #: delegated authentication/authorization of the endpoints
    delegation: DelegationOptions = field(default_factory=DelegationOptions)


def load_plugin_modules(registry: Any, modules: tuple[str, ...]) -> None:
    """Import each module and call its ``register(registry)`` (out-of-tree plugins without an
    installed entry point). Raises ConfigError naming the module."""
    for name in modules:
        try:
            mod = importlib.import_module(name)
        except ImportError as e:
            raise ConfigError("--plugin-module", f"cannot import {name}: {e}") from None
        register = getattr(mod, "register", None)
        if not callable(register):
            raise ConfigError("--plugin-module", f"module {name} has no register(registry) function")
        register(registry)


@click.command()
@click.option("--kubeconfig", type=click.Path(dir_okay=False), default=None,
              help="Kubeconfig of the API server (default: clientConnection.kubeconfig of --config); "
                   "without either, the in-cluster service account is used.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
              help="KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1).")
@click.option("--kube-api-qps", type=float, default=None,
              help="QPS towards the API server (default: clientConnection.qps, 50).")
@click.option("--kube-api-burst", type=int, default=None,
              help="Burst towards the API server (default: clientConnection.burst, 100).")
@click.option("--leader-elect", **bool_flag_options(),
              help="Campaign for a Lease and schedule only while leading; the bare flag means true "
                   "(default: leaderElection.leaderElect, true).")
@click.option("--leader-elect-lease-duration", callback=_duration, default=None, help="Default 15s.")
@click.option("--leader-elect-renew-deadline", callback=_duration, default=None, help="Default 10s.")
@click.option("--leader-elect-retry-period", callback=_duration, default=None, help="Default 2s.")
@click.option("--leader-elect-resource-lock", default=None, help="Only 'leases' is supported.")
@click.option("--leader-elect-resource-name", default=None, help="Lease name (default kube-scheduler).")
@click.option("--leader-elect-resource-namespace", default=None, help="Lease namespace (default kube-system).")
@click.option("--leader-elect-identity", default=None, help="Holder identity (default <hostname>_<uuid>).")
@click.option("--permit-wait-timeout", callback=_duration, default="0s", show_default=True,
              help="Longest any Permit plugin may hold a pod (0: the plugin's own timeout, capped at 15m).")
@click.option("--profiling", **bool_flag_options(),
              help="Serve /debug/pprof/profile; the bare flag means true (default: enableProfiling, true).")
@click.option("--bind-address", default="127.0.0.1", show_default=True,
              help="Address of the health/metrics endpoint (0.0.0.0 for every interface).")
@click.option("--secure-port", type=click.IntRange(0, 65535), default=10259, show_default=True,
              help="HTTPS port of the endpoint (0 disables HTTPS).")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Plain-HTTP port of the endpoint (0 disables it).")
@click.option("--tls-cert-file", type=click.Path(dir_okay=False), default=None,
              help="Serving certificate for --secure-port (default: self-signed at start).")
@click.option("--tls-private-key-file", type=click.Path(dir_okay=False), default=None,
              help="Key of --tls-cert-file.")
@click.option("--authentication-kubeconfig", type=click.Path(dir_okay=False), default=None,
              help="Kubeconfig of the API server that checks bearer tokens (TokenReview) of requests to the "
                   "endpoints (default: the scheduler's own kubeconfig, else in-cluster).")
@click.option("--authorization-kubeconfig", type=click.Path(dir_okay=False), default=None,
              help="Kubeconfig of the API server that authorises requests to the endpoints "
                   "(SubjectAccessReview; default: the scheduler's own kubeconfig, else in-cluster).")
@click.option("--authorization-always-allow-paths", default="/healthz,/readyz,/livez", show_default=True,
              help="Comma-separated paths served without authorization (a trailing * matches a prefix).")
@click.option("--plugin-module", "plugin_modules", multiple=True,
              help="Python module whose register(registry) adds out-of-tree plugins; repeatable.")
@click.option("--parallel-bindings", type=click.IntRange(1, 256), default=16, show_default=True,
              help="Binding cycles running at once.")
@click.option("-v", "--v", "verbosity", type=PflagIntRange(0, 10), default=0,
              help="klog verbosity: 2 logs every pod's outcome, 4 debug detail, 6+ the HTTP client too.")
@click.option("--logging-format", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text: klog lines; json: one JSON object per line (as kube-scheduler's --logging-format).")
@click.option("--write-config-to", type=click.Path(dir_okay=False), default=None,
              help="Write the effective configuration (defaults and flags applied) to this file and exit.")
@click.version_option(__version__, "--version", prog_name="kubesched",
                      message="%(prog)s v%(version)s (kube-scheduler v1.35 behaviour)")
@prepull_flags
def run(kubeconfig: str | None, config_file: str | None, kube_api_qps: float | None, kube_api_burst: int | None,
        leader_elect: bool | None, leader_elect_lease_duration: float | None,
        leader_elect_renew_deadline: float | None, leader_elect_retry_period: float | None,
        leader_elect_resource_lock: str | None, leader_elect_resource_name: str | None,
        leader_elect_resource_namespace: str | None, leader_elect_identity: str | None,
        permit_wait_timeout: float, profiling: bool | None, bind_address: str, secure_port: int, port: int,
        tls_cert_file: str | None, tls_private_key_file: str | None, authentication_kubeconfig: str | None,
        authorization_kubeconfig: str | None, authorization_always_allow_paths: str, plugin_modules: tuple[str, ...],
        parallel_bindings: int, verbosity: int, logging_format: str, write_config_to: str | None,
        **prepull: Any) -> None:
    """Schedule pods of a Kubernetes cluster (or of `kubesched serve`) as a second scheduler: pods
    whose spec.schedulerName names a profile of the config are bound through pods/binding."""
    from kubesched.cluster.leader_election import default_identity
    from kubesched.config.defaults import apply_defaults

    configure_logging(verbosity, logging_format)
    config = load_config(config_file) if config_file else None
    effective = apply_defaults(config.model_copy(deep=True) if config is not None else default_config())
    cc, le = effective.client_connection, effective.leader_election
    try:
        check_run_fields(config)
    except ConfigError as e:
        raise e.located(config_file or "") from None
    if leader_elect_resource_lock is not None and leader_elect_resource_lock != "leases":
        raise ConfigError("--leader-elect-resource-lock", f'only "leases" is supported, got "{leader_elect_resource_lock}"')
    if bool(tls_cert_file) != bool(tls_private_key_file):
        raise ConfigError("--tls-cert-file", "--tls-cert-file and --tls-private-key-file go together")
    opts = RunOptions(
        kubeconfig=kubeconfig or cc.kubeconfig or None, config=config, effective=effective,
        qps=kube_api_qps if kube_api_qps is not None else cc.qps,
        burst=kube_api_burst if kube_api_burst is not None else cc.burst,
        leader_elect=leader_elect if leader_elect is not None else le.leader_elect,
        lease_duration=leader_elect_lease_duration or le.lease_duration,
        renew_deadline=leader_elect_renew_deadline or le.renew_deadline,
        retry_period=leader_elect_retry_period or le.retry_period,
        lease_name=leader_elect_resource_name or le.resource_name,
        lease_namespace=leader_elect_resource_namespace or le.resource_namespace,
        identity=leader_elect_identity or default_identity(),
        permit_wait_timeout=permit_wait_timeout,
        profiling=profiling if profiling is not None else effective.enable_profiling,
        bind_address=bind_address, secure_port=secure_port, port=port, tls_cert_file=tls_cert_file,
        tls_private_key_file=tls_private_key_file, plugin_modules=plugin_modules,
        parallel_bindings=parallel_bindings, config_file=config_file, prepull=prepull_options(prepull),
        delegation=DelegationOptions(authentication_kubeconfig, authorization_kubeconfig,
                                     tuple(p for p in authorization_always_allow_paths.split(",") if p.strip())))
    if opts.burst < 1 and opts.qps > 0:
        raise ConfigError("--kube-api-burst", "must be at least 1")
    if write_config_to:
        write_effective_config(opts, write_config_to)
        click.echo(f"wrote the effective configuration to {write_config_to}", err=True)
        return
    _exit(run_scheduler(opts))


def effective_config_document(opts: RunOptions) -> dict[str, Any]:
    """The configuration ``run`` uses, as a v1 document: the file's (or the default) with every
    default applied and the command-line flags that override fields written into it, as
    kube-scheduler's ``--write-config-to`` and ``/configz`` show it
    (``cmd/kube-scheduler/app/options/options.go: ApplyTo``)."""
    from kubesched.config.load import dump_config

    le = opts.effective.leader_election.model_copy(update={
        "leader_elect": opts.leader_elect, "lease_duration": opts.lease_duration,
        "renew_deadline": opts.renew_deadline, "retry_period": opts.retry_period,
        "resource_name": opts.lease_name, "resource_namespace": opts.lease_namespace})
    # what is in effect: kubesched talks JSON and has no contention profile (config/run_fields.py)
    cc = opts.effective.client_connection.model_copy(update={"qps": opts.qps, "burst": opts.burst,
                                                             "kubeconfig": opts.kubeconfig or "",
                                                             "content_type": JSON})
    cfg = opts.effective.model_copy(update={"leader_election": le, "client_connection": cc,
                                            "enable_profiling": opts.profiling,
                                            "enable_contention_profiling": False})
    return dump_config(cfg)


def write_effective_config(opts: RunOptions, path: str) -> None:
    """Write :func:`effective_config_document` as YAML to ``path``. Raises KubeschedError for a path
    that cannot be created."""
    import yaml

    from kubesched.cli.paths import check_output_file

    check_output_file(path, "--write-config-to")
    with open(path, "w", encoding="utf-8") as fh:
        yaml.safe_dump(effective_config_document(opts), fh, sort_keys=False)


def _exit(code: int) -> None:
    """Exit with ``code`` once everything is stopped. As the process's own command line (stdio not
    redirected by a test runner) it flushes the logs and leaves with ``os._exit``: tearing the
    interpreter down (thousands of modules of the ``kubernetes`` client) adds a noticeable delay
    after ``stopped`` for nothing, as kube-scheduler exits at once after its shutdown."""
    if sys.stdout is sys.__stdout__ and sys.stderr is sys.__stderr__:
        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    sys.exit(code)


def run_scheduler(opts: RunOptions) -> int:
    """Run until SIGTERM/SIGINT (returns 0) or a lost lease (returns 1). Raises ConfigError for a
    bad kubeconfig, config or plugin module."""
    from kubesched.cluster.fencing import LeaseFence
    from kubesched.cluster.kube import KubeClusterClient
    from kubesched.cluster.leader_election import LeaderElectionConfig, LeaderElector
    from kubesched.plugins import in_tree_registry
    from kubesched.scheduler.core import BindingPool
    from kubesched.scheduler.factory import new_scheduler
    from kubesched.serving.delegation import build_request_auth
    from kubesched.serving.http import RequestAuth, StatusServer
    from kubesched.serving.tls import server_context

    clock = RealClock()
    client = KubeClusterClient.from_kubeconfig(opts.kubeconfig, qps=opts.qps, burst=opts.burst, clock=clock)
    from kubesched.cluster.client_metrics import ComponentMetrics

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

        p = opts.prepull
        prepuller = PrePullController.for_scheduler(
            sched, client, clock, p.catalogue, api_client=client.api, mechanism=p.mechanism,
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
        return sched.informers.has_synced()

    def leader_health() -> tuple[bool, float, float] | None:
        if elector is None:
            return None
        return elector.is_leader(), elector.last_renew(), opts.lease_duration

    def unhealthy() -> list[str]:
        return sched.informers.unhealthy()

    authenticator, authorizer, _review_clients = build_request_auth(opts.delegation, opts.kubeconfig)
    auth = RequestAuth(authenticator, authorizer)
    componentconfig = effective_config_document(opts)

    def configz() -> dict[str, Any]:
        return {"componentconfig": componentconfig}

    from prometheus_client import CollectorRegistry

    from kubesched.metrics.pod_resources import PodResourcesCollector

    resources = CollectorRegistry()  # /metrics/resources: the pods' requests and limits, read at each scrape
    resources.register(PodResourcesCollector(lambda: sched.informers.list("Pod")))
    servers: list[StatusServer] = []
    tls = server_context(opts.bind_address, opts.tls_cert_file, opts.tls_private_key_file) \
        if opts.secure_port else None  # ConfigError naming --tls-cert-file / --tls-private-key-file
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
    for s in servers:
        log.info("serving /healthz /readyz /metrics%s on %s", " /debug/pprof/profile" if opts.profiling else "", s.url)

    def on_signal(signum: int, frame: object) -> None:
        log.info("received %s: shutting down", signal.Signals(signum).name)
        shutdown.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
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
            sched.start()
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
        sched.queue.run()
        log.info("caches synced: %d nodes, %d pods", len(sched.informers.list("Node")), len(sched.informers.list("Pod")))
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
    from kubesched.cluster.event_broadcaster import EventBroadcaster
    from kubesched.cluster.rate_limit import TokenBucket
    from kubesched.cluster.write_behind import AsyncWriter, WriteBehindClient

    writer = AsyncWriter(workers=4)
    events_client = client.with_limiter(TokenBucket(opts.qps, opts.burst, clock) if opts.qps != 0 else None)
    return ApiWrites(WriteBehindClient(client, writer), writer, EventBroadcaster(events_client, clock).start(),
                     events_client)


def _graceful(sched: Any, sched_stop: threading.Event, sched_thread: threading.Thread, pool: Any, elector: Any,
              client: Any, servers: list[Any], writes: ApiWrites | None = None) -> int:
    """Stop taking pods (closing the queue wakes the loop's wait at once), finish the scheduling
    cycle and the in-flight bindings, release the lease, close watches and servers."""
    sched_stop.set()
    sched.queue.close()
    if sched_thread.is_alive():
        sched_thread.join(30)
    pool.shutdown(wait=True)
    if writes is not None:
        writes.stop()
    if elector is not None and elector.is_leader():
        elector.release()
        log.info("released the lease")
    sched.informers.stop()
    client.close()
    _stop_servers(servers)
    log.info("stopped")
    return 0
