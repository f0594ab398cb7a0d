"""``kubesched bench``: run scheduler_perf-shaped workloads and report throughput."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from kubesched.cli.output import table_console
from kubesched.cli.paths import OutputFile
from kubesched.cli.shared_flags import kube_api_burst_flag, kube_api_qps_flag
from kubesched.cli.units import FiniteFloat
from kubesched.errors import ConfigError


def _source_tree(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--baseline-tree``: a directory holding a kubesched source tree (``kubesched/__init__.py``);
    click.BadParameter naming the directory otherwise."""
    if value is not None and not os.path.isfile(os.path.join(value, "kubesched", "__init__.py")):
        raise click.BadParameter(f"{value} is not a kubesched source tree (no kubesched/__init__.py)")
    return value


@click.command()
@click.argument("workloads", nargs=-1)
@click.option("--list", "list_only", is_flag=True, help="Name the available workloads and exit.")
@click.option(
    "--output",
    type=OutputFile(),
    help="Write the results as JSON to this file (-o is a format elsewhere; bench prints a table).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False),
    help="A scheduler_perf-shaped workload file instead of the shipped one.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the scheduler's RNG.")
@click.option(
    "--in-process",
    is_flag=True,
    help="Run in this process (default: one forked process per workload, so that peak RSS is per workload).",
)
@click.option("--no-gc-freeze", is_flag=True, help="Do not gc.freeze() the loaded objects before measuring.")
@click.option(
    "--api",
    "api_mode",
    is_flag=True,
    help="Run each workload through `kubesched serve` + `kubesched run` subprocesses over HTTP "
    "(loopback) and report pods/s first to last bind, CPU and RSS of both processes. A --simulate "
    "cluster file's name (e.g. SimulateSpreading/2000Nodes_20000Pods) runs the same way, every pod measured.",
)
@kube_api_qps_flag(5000.0, help="With --api: run's QPS.")
@kube_api_burst_flag(5000, help="With --api: run's burst.")
@click.option(
    "--measure-pods",
    type=click.IntRange(min=1),
    default=None,
    help="With --api: measure this many pods instead of the workload's count (of a cluster file: its first pods).",
)
@click.option(
    "--timeout",
    type=FiniteFloat(min=1, max=1e6),
    default=600.0,
    show_default=True,
    help="With --api: seconds to wait for the measured pods.",
)
@click.option(
    "--run-flag",
    "run_flags",
    multiple=True,
    metavar="FLAG",
    help="With --api: one more flag for `kubesched run`, e.g. --run-flag=--cpu-affinity=none "
    "or --run-flag=--parallel-bindings=32; repeatable (recorded as runFlags in --output).",
)
@click.option(
    "--simulate",
    "simulate_files",
    multiple=True,
    metavar="FILE|NAME",
    help="Time `kubesched simulate` (table and -o json) and `kubesched ui -f` on a cluster file, or on a "
    "generated one named in --list (SimulateSpreading/...): end to end, load, schedule and output "
    "seconds, peak RSS; one process per run; repeatable.",
)
@click.option(
    "--simulate-mode",
    "simulate_modes",
    multiple=True,
    type=click.Choice(["table", "json", "ui"]),
    help="With --simulate: only these runs (repeatable; default: table, json, ui).",
)
@click.option(
    "--repeat",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="With --simulate: run every mode this many times, in turn.",
)
@click.option(
    "--baseline-tree",
    type=click.Path(exists=True, file_okay=False),
    callback=_source_tree,
    help="With --simulate: before each run, the same run of the kubesched source tree in this directory "
    "(e.g. a `git worktree` of the base commit), for alternating before/after pairs; outputs are "
    "compared by SHA-256.",
)
@click.option(
    "--soak",
    type=click.Choice(["idle-connections", "tls-handshakes", "churn"]),
    default=None,
    help="Instead of workloads: the memory of `kubesched run` (subprocesses on loopback) under "
    "idle TCP connections, stalled TLS handshakes, or sustained pod churn.",
)
@click.option(
    "--connections",
    type=click.IntRange(min=1),
    default=10_000,
    show_default=True,
    help="With --soak idle-connections/tls-handshakes: connections held open.",
)
@click.option(
    "--duration",
    type=FiniteFloat(min=1, max=1e6),
    default=60.0,
    show_default=True,
    help="With --soak churn: seconds of churn.",
)
@click.option(
    "--rate",
    type=FiniteFloat(min=0.1, max=1e6),
    default=100.0,
    show_default=True,
    help="With --soak churn: pods created (and deleted once bound a few seconds) per second.",
)
def bench(
    workloads: tuple[str, ...],
    list_only: bool,
    output: str | None,
    config_path: str | None,
    seed: int,
    in_process: bool,
    no_gc_freeze: bool,
    api_mode: bool,
    kube_api_qps: float,
    kube_api_burst: int,
    measure_pods: int | None,
    timeout: float,
    run_flags: tuple[str, ...],
    simulate_files: tuple[str, ...],
    simulate_modes: tuple[str, ...],
    repeat: int,
    baseline_tree: str | None,
    soak: str | None,
    connections: int,
    duration: float,
    rate: float,
) -> None:
    """Run WORKLOADS (TestCase/Workload or a whole TestCase; default: all) end to end through the
    queue, scheduling cycle, cache and binding into the embedded cluster, and report
    SchedulingThroughput (pods/s sampled every second), attempt latency and peak RSS.

    With --soak: measure kubesched run's resident memory under a flood of idle connections
    (idle-connections: bare TCP; tls-handshakes: stalled TLS handshakes) or under churn,
    and print the figures (exit 1 when a pod was lost or /healthz did not answer)."""
    if soak is not None:
        _bench_soak(soak, connections, duration, rate, output)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    from kubesched.modes.bench import load_workloads, run_isolated, run_workload, select
    from kubesched.modes.bench.report import results_table, write_json

    console = table_console()
    try:
        all_workloads = load_workloads(config_path)
    except ConfigError as e:
        # name the file, unless the error already does (unreadable file, invalid YAML)
        if config_path and not e.where and e.path != str(config_path):
            raise e.located(config_path) from None
        raise
    if list_only:
        from kubesched.modes.bench.simulate_fixture import SIMULATE_FIXTURES

        for w in all_workloads:
            thr = f"{w.threshold:.0f} pods/s" if w.threshold is not None else "-"
            click.echo(f"{w.name}\tnodes={w.nodes}\tmeasuredPods={w.measured_pods}\tthreshold={thr}")
        for fx in SIMULATE_FIXTURES.values():
            click.echo(f"{fx.name}\tnodes={fx.nodes}\tpendingPods={fx.pods}\t(--simulate, --api)")
        return
    if simulate_files:
        if workloads or api_mode:
            raise click.UsageError("--simulate runs alone: give no workloads and no --api")
        _bench_simulate(
            console,
            simulate_files,
            simulate_modes or ("table", "json", "ui"),
            repeat,
            output,
            baseline_tree,
            seed,
        )
        return
    if simulate_modes or repeat != 1 or baseline_tree:
        raise click.UsageError("--simulate-mode, --repeat and --baseline-tree apply to --simulate runs only")
    if not api_mode:
        for flag, value, default in (
            ("--measure-pods", measure_pods, None),
            ("--timeout", timeout, 600.0),
            ("--kube-api-qps", kube_api_qps, 5000.0),
            ("--kube-api-burst", kube_api_burst, 5000),
            ("--run-flag", run_flags, ()),
        ):
            if value != default:
                raise click.UsageError(f"{flag} applies to --api runs only")
    from kubesched.modes.bench.simulate_fixture import SIMULATE_FIXTURES

    if api_mode:
        # a simulate cluster file by name runs through serve + run as the workloads do
        fixtures = [SIMULATE_FIXTURES[n] for n in workloads if n in SIMULATE_FIXTURES]
        names = [n for n in workloads if n not in SIMULATE_FIXTURES]
        chosen: list[Any] = select(all_workloads, names) if names or not fixtures else []
        _bench_api(
            console,
            [*chosen, *fixtures],
            output,
            kube_api_qps,
            kube_api_burst,
            measure_pods,
            timeout,
            run_flags,
        )
        return
    files = [n for n in workloads if n in SIMULATE_FIXTURES]
    if files:
        raise click.UsageError(f"{files[0]} is a cluster file: run it with --simulate or --api")
    chosen = select(all_workloads, list(workloads))
    results: list[Any] = []
    runner = run_workload if in_process else run_isolated
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as prog:
        for w in chosen:
            task = prog.add_task(w.name, total=w.measured_pods)

            def on_progress(done: int, total: int, task: TaskID = task) -> None:
                prog.update(task, completed=done, total=total)

            with _kept_on_interrupt(output, results, len(chosen)):
                res = runner(w, seed=seed, progress=on_progress, freeze_gc=not no_gc_freeze)
            prog.update(task, completed=res.scheduled_pods)
            results.append(res)
            if output:
                write_json(output, results)  # each finished workload kept as it completes
    console.print(results_table(results))
    if output:
        console.print(f"wrote {output}")
    _exit_on_failures(results)


def _bench_simulate(
    console: Any,
    files: tuple[str, ...],
    modes: tuple[str, ...],
    repeat: int,
    output: str | None,
    baseline_tree: str | None,
    seed: int,
) -> None:
    from kubesched.modes.bench.report import simulate_table, write_simulate_json
    from kubesched.modes.bench.simulate_bench import bench_simulate

    try:
        runs = bench_simulate(
            files,
            modes,
            repeat,
            progress=lambda what: console.print(f"running {what}", markup=False),
            baseline_tree=baseline_tree,
            seed=seed,
        )
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--simulate") from None
    console.print(simulate_table(runs))
    if output:
        write_simulate_json(output, runs)
        console.print(f"wrote {output}")
    bad = [r for r in runs if r.status != "ok"]
    if bad:
        click.echo(f"error: {len(bad)} of {len(runs)} runs failed", err=True)
        sys.exit(1)


def _bench_soak(kind: str, connections: int, duration: float, rate: float, output: str | None) -> None:
    from kubesched.modes.bench.soak import soak_churn, soak_idle_connections, to_json

    result: Any
    if kind == "churn":
        result = soak_churn(rate, duration)
        failed = result.lost > 0 or result.over_capacity > 0
    else:
        result = soak_idle_connections(connections, tls_hello=kind == "tls-handshakes")
        failed = result.healthz_status != 200 or result.bound < result.pods
    for line in result.lines():
        click.echo(line)
    if output:
        with open(output, "w") as f:
            f.write(to_json(result) + "\n")
        click.echo(f"wrote {output}")
    if failed:
        sys.exit(1)


@contextmanager
def _kept_on_interrupt(output: str | None, results: list[Any], total: int) -> Iterator[None]:
    """On Ctrl-C or SIGTERM, say which finished workloads ``output`` keeps, and re-raise."""
    try:
        yield
    except KeyboardInterrupt:
        names = ", ".join(r.name for r in results)
        kept = (
            f"{output} keeps {len(results)} of {total} workload(s): {names}"
            if output and results
            else "no workload had finished"
            if not results
            else f"finished: {names} (no --output)"
        )
        click.echo(f"bench interrupted: {kept}", err=True)
        raise


def _exit_on_failures(results: list[Any]) -> None:
    """Exit 1 when a workload did not complete (``failed``, ``incomplete``), as scheduler_perf's
    test fails; a throughput below its threshold is reported in the table, not an exit code."""
    bad = [r.name for r in results if r.status != "ok"]
    if bad:
        click.echo(
            f"error: {len(bad)} of {len(results)} workloads did not complete: {', '.join(bad)}", err=True
        )
        sys.exit(1)


def _bench_api(
    console: Any,
    chosen: list[Any],
    output: str | None,
    qps: float,
    burst: int,
    measure_pods: int | None,
    timeout: float,
    run_flags: tuple[str, ...],
) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    from kubesched.modes.bench.api import run_api_workload
    from kubesched.modes.bench.report import api_results_table, write_api_json
    from kubesched.modes.bench.simulate_fixture import SimulateFixture

    results: list[Any] = []
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as prog:
        for w in chosen:
            total = w.pods if isinstance(w, SimulateFixture) else w.measured_pods
            task = prog.add_task(f"{w.name} (api)", total=min(measure_pods or total, total))

            def on_progress(done: int, total: int, task: TaskID = task) -> None:
                prog.update(task, completed=done, total=total)

            with _kept_on_interrupt(output, results, len(chosen)):
                results.append(
                    run_api_workload(
                        w,
                        qps=qps,
                        burst=burst,
                        measure_pods=measure_pods,
                        timeout=timeout,
                        run_args=run_flags,
                        progress=on_progress,
                    )
                )
            if output:
                write_api_json(output, results)  # each finished workload kept as it completes
    console.print(api_results_table(results))
    for r in results:
        if r.status != "ok":
            console.print(r.error, markup=False)
    if output:
        console.print(f"wrote {output}")
    _exit_on_failures(results)
