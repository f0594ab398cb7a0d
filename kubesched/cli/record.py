"""``kubesched record``: record a live cluster (nodes and their image caches, pods, workload
owners, the kubelet's image Events) into a recording that ``kubesched replay --trace`` reads."""

from __future__ import annotations

import signal
import threading
from typing import Any

import click

from kubesched.cli.paths import OutputDir
from kubesched.cli.shared_flags import context_flag, kube_api_burst_flag, kube_api_qps_flag
from kubesched.cli.units import FiniteFloat, Seconds


@click.command()
@click.option(
    "--kubeconfig",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Kubeconfig of the cluster to record.",
)
@context_flag()
@click.option(
    "-n",
    "--namespace",
    default=None,
    help="Record the pods, owners and Events of this namespace only (nodes are always recorded).",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=OutputDir(),
    help="Recording directory (created; a new run adds a segment after the ones present).",
)
@click.option(
    "--duration",
    type=Seconds(),
    default=None,
    help="Stop after this long (24h, 30m, 2d, ...; default: until Ctrl-C or SIGTERM).",
)
@click.option(
    "--flush-interval",
    type=FiniteFloat(min=0.1, max=86400),
    default=5.0,
    show_default=True,
    help="Seconds between two writes to disk (a crash loses at most this much).",
)
@click.option(
    "--segment",
    type=Seconds(),
    default="1h",
    show_default=True,
    help="Start a new segment file after this long.",
)
@kube_api_qps_flag(20.0, help="QPS towards the API server.")
@kube_api_burst_flag(40, help="Burst towards the API server.")
def record(
    kubeconfig: str,
    context: str | None,
    namespace: str | None,
    out_dir: str,
    duration: float | None,
    flush_interval: float,
    segment: float,
    kube_api_qps: float,
    kube_api_burst: int,
) -> None:
    """Record a cluster for replay: Nodes (with status.images), Pods, workload owners and the
    kubelet's image Events (Pulling, Pulled, Failed), as a compressed append-only log of changes
    (segments of gzip members, fsynced every --flush-interval; never Secrets, env values or
    managedFields). Restart it on the same --out after a crash: what was written stays, and the new
    run re-lists and goes on. Needs get/list/watch on those kinds (deploy/record). Then
    `kubesched replay --trace OUT`."""
    from kubesched.cli.cluster_read import read_cluster
    from kubesched.client.kube import KubeClusterClient
    from kubesched.logs import configure as configure_logging
    from kubesched.modes.record.log import RecordWriter
    from kubesched.modes.record.recorder import Recorder

    configure_logging(0, "text")
    for flag, value in (("--duration", duration), ("--segment", segment)):
        if value is not None and not value > 0:
            raise click.BadParameter(f"must be > 0, got {value:g}", param_hint=f"'{flag}'")
    read_cluster(
        kubeconfig, context, lambda c: c.list("Node")
    )  # unreachable: one line, before anything is written
    writer = RecordWriter(out_dir, segment_seconds=segment)
    client = KubeClusterClient.from_kubeconfig(
        kubeconfig, qps=kube_api_qps, burst=kube_api_burst, context=context
    )
    recorder = Recorder(client, writer, namespace=namespace, source=kubeconfig)
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        click.echo(
            f"recording {kubeconfig}{f' namespace {namespace}' if namespace else ''} into {out_dir} "
            f"({', '.join(recorder.kinds)})",
            err=True,
        )
        recorder.run(duration=duration, flush_seconds=flush_interval, stop=stop)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        client.close()
    counts = ", ".join(f"{k} {n}" for k, n in recorder.counts.items())
    click.echo(
        f"wrote {writer.records} records ({counts}) in {writer.members} flushes, "
        f"{writer.bytes_written} bytes, to {', '.join(p.name for p in writer.paths)} in {out_dir}"
    )
