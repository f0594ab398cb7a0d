"""``kubesched simulate``: schedule a snapshot on the embedded cluster and explain the verdicts."""

from __future__ import annotations

import dataclasses
import gc
import logging
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import click
import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kubesched.cli.paths import OutputFile
from kubesched.cli.pflag import PflagIntRange
from kubesched.config.load import load_config
from kubesched.embedded.controllers.manager import WORKLOAD_KINDS
from kubesched.embedded.manifests import Manifest, load_manifests, write_manifests
from kubesched.embedded.unknown_fields import unknown_fields
from kubesched.errors import ConfigError, ManifestError
from kubesched.logs.kv import v_info
from kubesched.modes.simulate.report import (
    explain_grids,
    find_pod,
    iter_result_json,
    pod_names,
    pods_grid,
    print_grids,
    render_plain,
    render_rich,
    result_dict,
    summary_line,
)
from kubesched.modes.simulate.run import run_simulation

#: Exit code when the run finished but some pod ended in ``Error`` (malformed pod, unknown
#: PriorityClass, SchedulerError); input and usage errors exit with 2, as every command.
EXIT_POD_ERRORS = 1

_FORMATS = ["table", "wide", "name", "json", "yaml"]

_log = logging.getLogger(__name__)


class _PlainDumper(yaml.SafeDumper):
    """YAML without anchors and aliases: repeated objects are written out in full each time."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


@click.command()
@click.option(
    "-f",
    "--filename",
    "files",
    multiple=True,
    type=click.Path(allow_dash=True),
    help="Manifest file or directory (YAML, JSON, kind: List); repeatable; - reads standard input. "
    "With --kubeconfig: extra objects (e.g. pending pods) added to the live state.",
)
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False),
    default=None,
    help="Start from a live cluster's state (read only, as `kubesched snapshot` reads it); "
    "nothing is ever written to that cluster.",
)
@click.option("--context", default=None, help="With --kubeconfig: the kubeconfig context.")
@click.option(
    "-n",
    "--namespace",
    default=None,
    help="With --kubeconfig: namespaced objects of this namespace only (bound pods of every namespace "
    "are still read).",
)
@click.option(
    "-R", "--recursive", is_flag=True, help="Also read the subdirectories of -f directories (as kubectl -R)."
)
@click.option("--config", "config_path", type=click.Path(), help="A KubeSchedulerConfiguration (v1) file.")
@click.option(
    "--seed", type=int, default=None, help="Seed for tie-breaking; the same seed gives the same output."
)
@click.option(
    "-o",
    "--output",
    type=click.Choice(_FORMATS),
    default="table",
    show_default=True,
    help="table: one row per pod (wide: with profile, priority, nominated node); name: pod/<name> per "
    "line; json/yaml: the SimulationResult document (see --detail).",
)
@click.option(
    "--detail",
    type=click.Choice(["compact", "full"]),
    default="compact",
    show_default=True,
    help="json/yaml: compact keeps each pod's last attempt with Filter verdicts counted per plugin and "
    "reason and the chosen node's scores; full keeps every attempt with every node's verdicts and "
    "scores (large: nodes x attempts).",
)
@click.option(
    "--no-headers", is_flag=True, help="table/wide: print no header row, title or summary (as kubectl)."
)
@click.option(
    "--strict",
    is_flag=True,
    help="Unknown fields in manifests are errors (exit 2) instead of warnings (kubectl --validate=strict).",
)
@click.option("--explain", "explain", metavar="POD", help="Show per-node plugin verdicts and scores for POD.")
@click.option("--write-snapshot", type=OutputFile(), help="Write the resulting cluster as a manifest file.")
@click.option(
    "-v",
    "--v",
    "verbosity",
    type=PflagIntRange(0, 10),
    default=0,
    help="klog verbosity on stderr: 1 the wall time of each phase (load, schedule, output), "
    "2 every pod's outcome, 4 debug detail.",
)
@click.option(
    "--no-controllers",
    is_flag=True,
    help="Do not expand Deployments, ReplicaSets, StatefulSets, DaemonSets and Jobs into their pods "
    "before scheduling (by default the workload controllers run once and their pods are "
    "scheduled with the others).",
)
def simulate(
    files: tuple[str, ...],
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
    recursive: bool,
    config_path: str | None,
    seed: int | None,
    output: str,
    detail: str,
    no_headers: bool,
    strict: bool,
    explain: str | None,
    write_snapshot: str | None,
    verbosity: int,
    no_controllers: bool,
) -> None:
    """Schedule the pending pods of a cluster snapshot with the real scheduler and report the result.

    Pods are scheduled in queue order (priority first, as PrioritySort orders them) and listed in
    file order (-f files, documents, List items), so that runs line up row by row.

    Exit codes: 0 when every pod got an outcome other than Error, 1 when some pod ended in Error
    (each named with its file and document), 2 for bad input or usage."""
    if not files and not kubeconfig:
        raise click.UsageError("give manifests with -f/--filename, or a cluster with --kubeconfig")
    if verbosity:
        from kubesched.logs import configure as configure_logging

        configure_logging(verbosity)
    t_start = time.perf_counter()
    # The loaded objects live until the process ends: the cyclic collector's passes over them
    # while they are built find nothing (PyYAML builds plain dicts and lists), so it is paused
    # and the result frozen; run_simulation freezes the cluster it builds on them likewise.
    gc.disable()
    try:
        loaded = load_manifests(list(files), recursive=recursive)
    finally:
        gc.enable()
    gc.freeze()
    for line in loaded.warnings():
        click.echo(f"warning: {line}", err=True)
    if files and not loaded.manifests:
        click.echo(f"warning: no objects found in {', '.join(files)}", err=True)
    report_unknown_fields(loaded.manifests, strict=strict)
    if kubeconfig:
        loaded.manifests[:0] = live_manifests(kubeconfig, context, namespace)
    if explain:
        check_explain_ref(explain, loaded.manifests, workload_pods=not no_controllers)
    config = load_config(config_path) if config_path else None
    record: bool | Callable[[Any], bool] = output in ("json", "yaml")
    explained: Callable[[Any], bool] | None = None
    if explain:
        ref = explain

        def explained(pod: Any) -> bool:
            return bool(pod.key == ref or ("/" not in ref and pod.name == ref))

        if not record:
            record = explained
    compact = record is True and detail == "compact"
    try:
        with simulation_progress() as progress:
            res = run_simulation(
                loaded.manifests,
                config,
                seed=seed,
                record=record,
                compact=compact,
                progress=progress,
                full_detail=explained if compact else None,
                controllers=not no_controllers,
                freeze_gc=True,
            )
    except ConfigError as e:
        if config_path and not e.where:
            raise e.located(config_path) from None
        raise
    t_output = time.perf_counter()
    phases = res.timings
    read_seconds = t_output - t_start - sum(phases.values())  # reading files, checking fields, the config
    v_info(
        _log,
        1,
        "Loaded the input",
        loadSeconds=round(read_seconds + phases.get("load", 0.0), 3),
        readSeconds=round(read_seconds, 3),
        objects=len(loaded.manifests),
    )
    v_info(
        _log,
        1,
        "Scheduled until quiet",
        scheduleSeconds=round(phases.get("schedule", 0.0), 3),
        attempts=res.attempts,
        pods=len(res.pods),
    )
    if write_snapshot:
        write_manifests(write_snapshot, res.cluster.snapshot_objects())
    terminal = sys.stdout.isatty()
    if output == "json":
        sys.stdout.flush()
        out = sys.stdout.buffer
        for chunk in iter_result_json(res):  # streamed: results of big snapshots exceed 2 GiB
            out.write(chunk)
        out.write(b"\n")
        out.flush()
    elif output == "yaml":
        yaml.dump(result_dict(res), sys.stdout, Dumper=_PlainDumper, sort_keys=False, allow_unicode=True)
    elif output == "name":
        sys.stdout.write("".join(n + "\n" for n in pod_names(res)))
    else:
        grid = pods_grid(res, wide=output == "wide")
        if terminal and not no_headers:
            Console().print(render_rich(grid))
        else:
            sys.stdout.write(render_plain(grid, headers=not no_headers))
        if not no_headers:
            sys.stdout.write(summary_line(res) + "\n")
    if explain:
        try:
            pod = find_pod(res, explain)
        except KeyError as e:
            raise click.BadParameter(str(e.args[0]), param_hint="--explain") from None
        full = res.full_records.get(f"{pod.namespace}/{pod.name}")
        if full is not None:  # compact -o json|yaml: the explained pod was also recorded in full
            pod = dataclasses.replace(pod, results=list(full))
        to_stderr = output not in ("table", "wide")
        stream = sys.stderr if to_stderr else sys.stdout
        console = Console(stderr=to_stderr) if stream.isatty() else None
        print_grids(explain_grids(pod), console, stream)
    sys.stdout.flush()
    v_info(
        _log,
        1,
        "Wrote the output",
        outputSeconds=round(time.perf_counter() - t_output + phases.get("collect", 0.0), 3),
        output=output,
        totalSeconds=round(time.perf_counter() - t_start, 3),
    )
    errors = [p for p in res.pods if p.status == "Error"]
    if errors:
        click.echo(f"error: {len(errors)} pod(s) ended in Error:", err=True)
        for p in errors:
            click.echo(f"  {p.message}", err=True)  # the message names file, document and pod
        sys.exit(EXIT_POD_ERRORS)


@contextmanager
def simulation_progress() -> Iterator[Callable[[int, int, float], None]]:
    """A progress bar on stderr (pods settled / pending, virtual time), shown only on a terminal."""
    console = Console(stderr=True)
    with Progress(
        TextColumn("simulating"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("pods"),
        TextColumn("[dim]virtual {task.fields[vt]:.0f}s"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    ) as bar:
        task = bar.add_task("simulate", total=None, vt=0.0)

        def update(settled: int, total: int, virtual_seconds: float) -> None:
            bar.update(task, completed=settled, total=total, vt=virtual_seconds)

        yield update


def check_explain_ref(ref: str, manifests: Sequence[Manifest], *, workload_pods: bool = True) -> None:
    """Refuse ``--explain POD`` before the run when no Pod of the input is ``ns/name`` (or a unique
    ``name``). With ``workload_pods`` and a workload (Deployment, ReplicaSet, StatefulSet,
    DaemonSet, Job) in the input, a ref found among no input pod may name a pod the controllers
    create: it is resolved after the run instead (the pods' names are stable for a given input).
    Raises click.BadParameter."""
    keys = [f"{m.namespace}/{m.name}" for m in manifests if m.kind == "Pod"]
    hits = [k for k in keys if k == ref or ("/" not in ref and k.split("/", 1)[1] == ref)]
    if not hits and workload_pods and any(m.kind in WORKLOAD_KINDS for m in manifests):
        return
    if not hits:
        raise click.BadParameter(f"pod {ref!r} not found among the input's pods", param_hint="--explain")
    if len(hits) > 1:
        raise click.BadParameter(f"pod name {ref!r} is ambiguous; use namespace/name", param_hint="--explain")


def live_manifests(kubeconfig: str, context: str | None, namespace: str | None) -> list[Manifest]:
    """The live state of a cluster as manifests located ``cluster <kubeconfig> (Kind ns/name)``."""
    from kubesched.cli.cluster_read import read_cluster
    from kubesched.client.live_snapshot import read_snapshot

    objects = read_cluster(kubeconfig, context, lambda client: read_snapshot(client, namespace))
    return [Manifest(o, f"cluster {kubeconfig}", i) for i, o in enumerate(objects, start=1)]


def report_unknown_fields(manifests: Sequence[Manifest], *, strict: bool) -> None:
    """Warn on stderr, once per field, as kubectl's client-side validation does:
    ``warning: cluster.yaml doc 3 (Pod shop/web): unknown field "spec.nodeSelecter"``; with
    ``strict`` the first one is a :class:`ManifestError` instead (exit 2)."""
    for m in manifests:
        for path in unknown_fields(m.obj):
            if strict:
                raise ManifestError("", f'unknown field "{path}"', where=m.where)
            click.echo(f'warning: {m.where}: unknown field "{path}"', err=True)
