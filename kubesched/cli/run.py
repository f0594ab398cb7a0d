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

import logging
import os
import sys
from typing import Any

import click

from kubesched import __version__
from kubesched.api.kube_version import KUBE_GIT_VERSION
from kubesched.atomic_file import atomic_write_text
from kubesched.cli.delegation_flags import delegation_flags, delegation_options
from kubesched.cli.paths import OutputFile
from kubesched.cli.pflag import PflagIntRange, bool_flag_options, duration_flag
from kubesched.cli.ports import check_listen
from kubesched.cli.prepull_flags import prepull_flags, prepull_options
from kubesched.cli.shared_flags import kube_api_burst_flag, kube_api_qps_flag, speed_flag
from kubesched.config.load import default_config, load_config
from kubesched.config.run_fields import check_run_fields
from kubesched.errors import ConfigError
from kubesched.logs import FORMATS
from kubesched.logs import configure as configure_logging
from kubesched.modes.run import RunOptions, effective_config_document, run_scheduler
from kubesched.modes.run.cpu_affinity import allowed_cpus, check_cpu, parse_cpu_affinity
from kubesched.modes.run.thread_policy import parse_thread_policy

log = logging.getLogger("kubesched.run")


@click.command()
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False),
    default=None,
    help="Kubeconfig of the API server (default: clientConnection.kubeconfig of --config); "
    "without either, the in-cluster service account is used.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1).",
)
@kube_api_qps_flag(None, help="QPS towards the API server (default: clientConnection.qps, 50).")
@kube_api_burst_flag(None, help="Burst towards the API server (default: clientConnection.burst, 100).")
@click.option(
    "--leader-elect",
    **bool_flag_options(),
    help="Campaign for a Lease and schedule only while leading; the bare flag means true "
    "(default: leaderElection.leaderElect, true).",
)
@click.option("--leader-elect-lease-duration", callback=duration_flag, default=None, help="Default 15s.")
@click.option("--leader-elect-renew-deadline", callback=duration_flag, default=None, help="Default 10s.")
@click.option("--leader-elect-retry-period", callback=duration_flag, default=None, help="Default 2s.")
@click.option("--leader-elect-resource-lock", default=None, help="Only 'leases' is supported.")
@click.option("--leader-elect-resource-name", default=None, help="Lease name (default kube-scheduler).")
@click.option(
    "--leader-elect-resource-namespace", default=None, help="Lease namespace (default kube-system)."
)
@click.option("--leader-elect-identity", default=None, help="Holder identity (default <hostname>_<uuid>).")
@click.option(
    "--permit-wait-timeout",
    callback=duration_flag,
    default="0s",
    show_default=True,
    help="Longest any Permit plugin may hold a pod (0: the plugin's own timeout, capped at 15m).",
)
@click.option(
    "--profiling",
    **bool_flag_options(),
    help="Serve /debug/pprof/profile; the bare flag means true (default: enableProfiling, true).",
)
@click.option(
    "--bind-address",
    default="127.0.0.1",
    show_default=True,
    help="Address of the health/metrics endpoint (0.0.0.0 for every interface).",
)
@click.option(
    "--secure-port",
    type=click.IntRange(0, 65535),
    default=10259,
    show_default=True,
    help="HTTPS port of the endpoint (0 disables HTTPS).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Plain-HTTP port of the endpoint (0 disables it).",
)
@click.option(
    "--tls-cert-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Serving certificate for --secure-port (default: self-signed at start).",
)
@click.option(
    "--tls-private-key-file", type=click.Path(dir_okay=False), default=None, help="Key of --tls-cert-file."
)
@click.option(
    "--plugin-module",
    "plugin_modules",
    multiple=True,
    help="Python module whose register(registry) adds out-of-tree plugins; repeatable.",
)
@click.option(
    "--parallel-bindings",
    type=click.IntRange(1, 256),
    default=16,
    show_default=True,
    help="Binding cycles running at once.",
)
@click.option(
    "--cpu-affinity",
    default="auto",
    show_default=True,
    metavar="auto|none|CPU",
    help="Keep the scheduler's threads on one CPU (they share Python's GIL): auto picks one of the "
    "allowed CPUs and moves to an idler one when other tasks crowd it; a number pins to that "
    "CPU; none leaves placement to the kernel.",
)
@click.option(
    "--thread-policy",
    default="batch",
    show_default=True,
    metavar="batch|normal",
    help="Linux scheduling policy of the scheduler's threads: batch (SCHED_BATCH) lets a waking I/O "
    "thread (binding, Event writer, watch) wait for the running scheduling loop instead of "
    "preempting it, for less CPU per pod under a backlog at the cost of later binds then; normal "
    "keeps the policy the process started with.",
)
@click.option(
    "-v",
    "--v",
    "verbosity",
    type=PflagIntRange(0, 10),
    default=0,
    help="klog verbosity: 2 logs every pod's outcome, 4 debug detail, 6+ the HTTP client too.",
)
@click.option(
    "--logging-format",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text: klog lines; json: one JSON object per line (as kube-scheduler's --logging-format).",
)
@click.option(
    "--write-config-to",
    type=OutputFile(),
    default=None,
    help="Write the effective configuration (defaults and flags applied) to this file and exit.",
)
@click.version_option(
    __version__,
    "--version",
    prog_name="kubesched",
    message=f"%(prog)s v%(version)s (kube-scheduler {KUBE_GIT_VERSION} behaviour)",
)
@speed_flag(
    help="Cluster seconds per wall second of the cluster scheduled (match `serve --speed`): the "
    "scheduler's clock (queue backoffs, the unschedulable pods' flush, plugins' time windows, Permit "
    "timeouts) and the pre-pull agent's run at that speed; the API client's rate limit, leader "
    "election and the endpoints keep wall time."
)
@prepull_flags
@delegation_flags
def run(
    kubeconfig: str | None,
    config_file: str | None,
    kube_api_qps: float | None,
    kube_api_burst: int | None,
    leader_elect: bool | None,
    leader_elect_lease_duration: float | None,
    leader_elect_renew_deadline: float | None,
    leader_elect_retry_period: float | None,
    leader_elect_resource_lock: str | None,
    leader_elect_resource_name: str | None,
    leader_elect_resource_namespace: str | None,
    leader_elect_identity: str | None,
    permit_wait_timeout: float,
    profiling: bool | None,
    bind_address: str,
    secure_port: int,
    port: int,
    tls_cert_file: str | None,
    tls_private_key_file: str | None,
    plugin_modules: tuple[str, ...],
    parallel_bindings: int,
    cpu_affinity: str,
    thread_policy: str,
    verbosity: int,
    logging_format: str,
    write_config_to: str | None,
    speed: float,
    **flags: Any,
) -> None:
    """Schedule pods of a Kubernetes cluster (or of `kubesched serve`) as a second scheduler: pods
    whose spec.schedulerName names a profile of the config are bound through pods/binding."""
    from kubesched.client.leader_election import default_identity
    from kubesched.config.defaults import apply_defaults

    configure_logging(verbosity, logging_format)
    placement = parse_cpu_affinity(cpu_affinity)
    check_cpu(placement, allowed_cpus())
    policy = parse_thread_policy(thread_policy)
    config = load_config(config_file) if config_file else None
    effective = apply_defaults(config.model_copy(deep=True) if config is not None else default_config())
    cc, le = effective.client_connection, effective.leader_election
    try:
        check_run_fields(config)
    except ConfigError as e:
        raise e.located(config_file or "") from None
    if leader_elect_resource_lock is not None and leader_elect_resource_lock != "leases":
        raise ConfigError(
            "--leader-elect-resource-lock", f'only "leases" is supported, got "{leader_elect_resource_lock}"'
        )
    if bool(tls_cert_file) != bool(tls_private_key_file):
        raise ConfigError("--tls-cert-file", "--tls-cert-file and --tls-private-key-file go together")
    opts = RunOptions(
        kubeconfig=kubeconfig or cc.kubeconfig or None,
        config=config,
        effective=effective,
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
        bind_address=bind_address,
        secure_port=secure_port,
        port=port,
        tls_cert_file=tls_cert_file,
        tls_private_key_file=tls_private_key_file,
        plugin_modules=plugin_modules,
        parallel_bindings=parallel_bindings,
        cpu_affinity=placement,
        thread_policy=policy,
        config_file=config_file,
        speed=speed,
        prepull=prepull_options(flags),
        delegation=delegation_options(flags),
    )
    if opts.burst < 1 and opts.qps > 0:
        raise ConfigError("--kube-api-burst", "must be at least 1")
    if write_config_to:
        write_effective_config(opts, write_config_to)
        click.echo(f"wrote the effective configuration to {write_config_to}", err=True)
        return
    # the listeners first, as upstream's SecureServing.ApplyTo creates them before authentication
    for port_flag, port_value in (("--secure-port", secure_port), ("--port", port)):
        check_listen(bind_address, port_value, f"--bind-address, {port_flag}")
    _exit(run_scheduler(opts))


def write_effective_config(opts: RunOptions, path: str) -> None:
    """Write :func:`effective_config_document` as YAML to ``path``. Raises KubeschedError for a path
    that cannot be created."""
    import yaml

    from kubesched.cli.paths import check_output_file

    check_output_file(path, "--write-config-to")
    atomic_write_text(path, yaml.safe_dump(effective_config_document(opts), sort_keys=False))


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
