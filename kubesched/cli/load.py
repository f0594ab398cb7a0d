"""``kubesched load``: drive a trace (openb window, simple trace or recording) against a live API
server, then report pod start-up as ``kubesched startup`` does."""

from __future__ import annotations

import signal
import sys
from typing import Any

import click

from kubesched.cli.paths import OutputDir
from kubesched.cli.shared_flags import (
    arrival_scale_flag,
    context_flag,
    max_pods_flag,
    speed_flag,
    trace_flag,
    trace_window_flag,
)
from kubesched.cli.units import FiniteFloat


@click.command()
@trace_flag(
    help="openb directory or pod list, simple YAML trace, directory with nodes.csv and pods.csv, or a "
    "`kubesched record` directory (as `kubesched replay --trace`)."
)
@click.option(
    "--kubeconfig",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Kubeconfig of the API server to load.",
)
@context_flag()
@speed_flag(help="Trace seconds per wall second (match `serve --speed`).")
@click.option(
    "--namespace-prefix",
    default="load-",
    show_default=True,
    help="Pods of trace namespace NS go to namespace PREFIX+NS (created when missing, deleted at the end).",
)
@click.option(
    "--scheduler-name",
    default=None,
    help="spec.schedulerName of every pod (default: the trace's, default-scheduler for most traces).",
)
@click.option(
    "--keep", is_flag=True, help="Leave the pods and namespaces created (default: delete them at the end)."
)
@click.option(
    "--timeout",
    type=FiniteFloat(min=0, max=1e6),
    default=600.0,
    show_default=True,
    help="Wall seconds to wait after the last arrival for the pods to finish.",
)
@click.option(
    "--images",
    "images_path",
    type=click.Path(exists=True, dir_okay=False),
    help="Image catalogue YAML for image assignment (default: the shipped one; give serve the same).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of image assignment.")
@trace_window_flag(help="openb only: all | 30d | START:END.")
@max_pods_flag(help="Only the first N pods by arrival.")
@arrival_scale_flag(help="Multiply arrival times by this factor (as replay's).")
@click.option(
    "--out",
    "out_dir",
    type=OutputDir(),
    default="load-report",
    show_default=True,
    help="Directory for the startup report (report.json, pods.csv).",
)
def load(
    trace_path: str,
    kubeconfig: str,
    context: str | None,
    speed: float,
    namespace_prefix: str,
    scheduler_name: str | None,
    keep: bool,
    timeout: float,
    images_path: str | None,
    seed: int,
    window: str | None,
    max_pods: int | None,
    arrival_scale: float,
    out_dir: str,
) -> None:
    """Create the trace's pods at their arrival times (divided by --speed), delete each when its
    run time ends, label everything `kubesched.io/load=<run id>`, and end with the `kubesched
    startup` report of those pods. Ctrl-C stops creating pods and removes what was created (unless
    --keep). The same trace replays in virtual time with `kubesched replay --trace`; schedule the
    pods live with `kubesched run` (its profile's schedulerName as --scheduler-name)."""
    from rich.console import Console

    from kubesched.cli.cluster_read import read_cluster
    from kubesched.client.kube import KubeClusterClient
    from kubesched.images.assign import ImageAssigner
    from kubesched.images.catalogue import load_catalogue
    from kubesched.modes.load.driver import LOAD_LABEL, LoadDriver, LoadOptions
    from kubesched.modes.record.recording import is_recording
    from kubesched.modes.record.replay_input import load_recording_input
    from kubesched.modes.report.report_table import summary_table
    from kubesched.modes.startup.analysis import analyse
    from kubesched.modes.startup.report import LABEL, TITLE, write_startup_report
    from kubesched.trace.load import load_workload

    catalogue = load_catalogue(images_path)
    if is_recording(trace_path):
        workload = load_recording_input(trace_path, catalogue).workload
    else:
        assigner = ImageAssigner(catalogue, seed=seed)
        workload = load_workload(trace_path, assigner, window=window, max_pods=max_pods)
    # unreachable: one line, after the trace is read and before anything is created
    read_cluster(kubeconfig, context, lambda c: c.list("Node"))
    workload = workload.with_arrival_scale(arrival_scale)
    options = LoadOptions(
        speed=speed,
        namespace_prefix=namespace_prefix,
        scheduler_name=scheduler_name,
        keep=keep,
        timeout=timeout,
    )
    client = KubeClusterClient.from_kubeconfig(kubeconfig, qps=100, burst=200, context=context)
    driver = LoadDriver(client, workload, options)

    def on_signal(signum: int, frame: Any) -> None:
        click.echo(
            "stopping: no more pods are created" + ("" if keep else "; removing what was created"), err=True
        )
        driver.stop()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    click.echo(
        f"loading {len(workload.pods)} pods from {workload.description} at speed {speed:g} "
        f"(label {LOAD_LABEL}={options.run_id})",
        err=True,
    )
    try:
        driver.run()
        nodes = client.list("Node").items
        events = client.list("Event").items
        data = driver.startup_data(nodes, events)
    finally:
        try:
            driver.cleanup()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            client.close()
    for problem in driver.problems:
        click.echo(f"warning: {problem}", err=True)
    runs = analyse(data)
    source = {"kubeconfig": kubeconfig, "trace": trace_path, "speed": speed, "runId": options.run_id}
    paths = write_startup_report(out_dir, runs, source, html=False)
    console = Console(width=200) if not sys.stdout.isatty() else Console()
    console.print(summary_table([r.result for r in runs], title=TITLE, label=LABEL, wall=False))
    click.echo(f"wrote {', '.join(str(p) for p in paths)}")
