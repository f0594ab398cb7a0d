"""``kubesched replay``: replay a trace through the real scheduler with a kubelet image model, once
per config, and report pod start-up latency, image pulls and packing (see :mod:`kubesched.modes.replay.run`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from kubesched.cli.output import table_console
from kubesched.cli.paths import OutputDir
from kubesched.cli.shared_flags import (
    arrival_scale_flag,
    max_pods_flag,
    no_html_flag,
    trace_flag,
    trace_window_flag,
)
from kubesched.cli.units import FiniteFloat
from kubesched.embedded.kubelet.settings_file import read_kubelet_settings
from kubesched.errors import ConfigError

if TYPE_CHECKING:
    from kubesched.embedded.kubelet.config import KubeletImageConfig
    from kubesched.images.catalogue import ImageCatalogue
    from kubesched.images.registry_settings import RegistrySettings
    from kubesched.modes.replay.run import ConfigSpec
    from kubesched.modes.report.result import ReplayResult
    from kubesched.prepull.hook import PlannerFactory
    from kubesched.trace.workload import Workload

_HELP = """Replay TRACE through the real scheduler over virtual time, once per --config, with a kubelet
image model (layered pulls, image GC, node status images), and report start-up latency, pulls
and packing.

\b
TRACE is one of:
  * the openb trace directory as it is (the four openb_*.csv files), or one of its
    openb_pod_list_*.csv files. Pods arrive at creation_time and run deletion_time -
    creation_time once started (pods still running at the end of the trace, until the end);
    Pending pods (empty scheduled_time) are replayed too. --trace-window picks the pods:
    all (default), 30d (the busy last 30 days: 7,355 pods), 12h, or START:END in trace
    seconds with optional units (10309761:12902960, 100d:). A window starts from the
    cluster the trace had when it opens: pods running then arrive at second 0 for the rest
    of their run. Images are assigned per application (or per job) with Zipf popularity
    (--image-mode, --zipf-s, --apps).
  * a recording of a live cluster (`kubesched record --out DIR`): real arrivals, run times,
    images and the nodes' image caches at the start; the kubelet model is calibrated on the
    recording's Pulled events (unless --kubelet), and the report says how well each replay
    reproduces the recorded start-ups (median replayed/recorded ratio, share within 2x).
  * kubesched's simple format: a YAML file
        nodes: [{name: n, cpu: "8", memory: 32Gi, gpu: 0, count: 3}]
        pods:  [{name: p, arrival: 0, duration: 60, cpu: 500m, memory: 1Gi, image: redis}]
    (pods may give a full Pod `template` instead; duration null = until the end;
    optional `horizon`, `kubelet` overrides and `podsCsv`), or a directory with
    nodes.csv (name,cpu,memory,gpu[,count]) and pods.csv
    (name,arrival,duration,cpu,memory,gpu,image[,namespace]).

\b
Writes to --out: report.json (one entry per config), report.html (self-contained plots:
start-up latency CDF, bytes pulled, cache hit ratio, utilisation) and pods.csv (per-pod
timelines). Prints a summary table.
"""


def _check_profiles(path: str, config: Any) -> None:
    """Build the scheduler of ``config`` once on an empty cluster, as the replay will, so that a
    plugin typo or bad plugin args fail at once, naming ``path``. Raises ConfigError."""
    from kubesched.clock import VirtualClock
    from kubesched.embedded.store import MemoryCluster
    from kubesched.scheduler import new_scheduler

    clock = VirtualClock(0.0)
    try:
        new_scheduler(MemoryCluster(clock), config, clock=clock, on_skipped_plugins=None)
    except ConfigError as e:
        raise (e.located(path) if not e.where else e) from None


@click.command(help=_HELP)
@trace_flag(help="openb directory or pod list, simple YAML trace, or directory with nodes.csv and pods.csv.")
@click.option(
    "--images",
    "images_path",
    type=click.Path(exists=True, dir_okay=False),
    help="Image catalogue YAML (default: the shipped kubesched/data/image-catalogue.yaml).",
)
@click.option(
    "--config",
    "configs",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="KubeSchedulerConfiguration file; repeat to compare. None: the upstream default profile.",
)
@click.option(
    "--out",
    "out_dir",
    type=OutputDir(),
    default="replay-report",
    show_default=True,
    help="Directory for report.json, report.html and pods.csv.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of image assignment and scheduler tie-breaking (same seed, same result).",
)
@click.option(
    "--scheduler-seed",
    type=int,
    default=None,
    help="Seed of the scheduler's tie-breaking only (default: --seed). The same workload with "
    "ties broken another way: how far start-ups move by random tie-breaks alone.",
)
@trace_window_flag(help="openb only: all | 30d | 12h | START:END (see above).")
@max_pods_flag(help="Replay only the first N pods by arrival.")
@click.option(
    "--nodes",
    "max_nodes",
    type=click.IntRange(min=1),
    default=None,
    help="Use only the first N nodes of the trace.",
)
@click.option(
    "--image-mode",
    type=click.Choice(["per-app", "per-job"]),
    default="per-app",
    show_default=True,
    help="Image assignment for pods without an image: one image per application, or per pod.",
)
@click.option(
    "--zipf-s",
    type=FiniteFloat(min=0, min_open=True, max=100),
    default=1.1,
    show_default=True,
    help="Zipf exponent of image (and application) popularity.",
)
@click.option(
    "--apps",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="Applications per pod kind (GPU / CPU) in per-app mode.",
)
@click.option(
    "--kubelet",
    "kubelet_path",
    type=click.Path(exists=True, dir_okay=False),
    help="YAML of kubelet image-model settings (camelCase, e.g. serializeImagePulls, "
    "nodeBandwidthBytesPerSecond, imageGCHighThresholdPercent); overrides the trace's.",
)
@click.option(
    "--prepull",
    is_flag=True,
    default=False,
    help="Enable the pre-pull planner kubesched.prepull.planner:PrePullPlanner.",
)
@click.option(
    "--attempt-seconds",
    type=FiniteFloat(min=0, max=3600),
    default=0.0,
    show_default=True,
    help="Virtual seconds one scheduling attempt keeps the scheduler busy.",
)
@arrival_scale_flag(help="Multiply arrival times by this factor (< 1 packs the same pods into less time).")
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Run the configs in this many local processes at once (same results; 1 = one after the other "
    "in this process).",
)
@click.option(
    "--dask-scheduler",
    "dask_scheduler",
    default=None,
    metavar="ADDRESS",
    help="Run the configs on the Dask cluster whose scheduler listens at ADDRESS (tcp://host:8786); "
    "needs the dask extra (dask.distributed).",
)
@click.option(
    "--registry-settings",
    "registry_path",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Recordings only: look up the layers of recorded images missing from the catalogue in their "
    "registries (cached in the recording's registry-cache.json, so later replays need no network).",
)
@click.option(
    "--gpu",
    "gpu_mode",
    type=click.Choice(["device-plugin", "dra"]),
    default="device-plugin",
    show_default=True,
    help="How pods get GPUs: device-plugin (nvidia.com/gpu and alibabacloud.com/gpu-milli requests, GPU "
    "models by node affinity) or dra (each GPU request becomes a ResourceClaimTemplate for "
    "devices of the gpu.kubesched.io DRA driver, which publishes every node's GPUs as a "
    "ResourceSlice; GPU models become CEL selectors; a fractional GPU takes a whole device).",
)
@no_html_flag()
def replay(
    trace_path: str,
    images_path: str | None,
    configs: tuple[str, ...],
    out_dir: str,
    seed: int,
    scheduler_seed: int | None,
    window: str | None,
    max_pods: int | None,
    max_nodes: int | None,
    image_mode: str,
    zipf_s: float,
    apps: int,
    kubelet_path: str | None,
    prepull: bool,
    attempt_seconds: float,
    arrival_scale: float,
    workers: int,
    dask_scheduler: str | None,
    gpu_mode: str,
    registry_path: str | None,
    no_html: bool,
) -> None:
    from kubesched.config.load import load_config
    from kubesched.embedded.kubelet.config import KubeletImageConfig
    from kubesched.images.assign import ImageAssigner
    from kubesched.images.catalogue import load_catalogue
    from kubesched.images.registry_settings import load_registry_settings
    from kubesched.modes.replay.run import ConfigSpec
    from kubesched.prepull.hook import DEFAULT_PLANNER, load_planner_factory
    from kubesched.trace.load import load_workload

    planners: list[PlannerFactory] = [load_planner_factory(DEFAULT_PLANNER)] if prepull else []
    specs = [ConfigSpec(path, load_config(path)) for path in configs] or [
        ConfigSpec("upstream-default", None)
    ]
    for path, spec in zip(configs, specs, strict=False):
        _check_profiles(path, spec.config)  # before the (long) trace load
    catalogue = load_catalogue(images_path)
    registry_settings = load_registry_settings(registry_path) if registry_path is not None else None
    recording = _recording_input(trace_path, catalogue, kubelet_path, registry_settings)
    if recording is not None:
        catalogue, workload = recording.catalogue, recording.workload
    else:
        assigner = ImageAssigner(catalogue, seed=seed, mode=image_mode, zipf_s=zipf_s, apps=apps)  # type: ignore[arg-type]
        workload = load_workload(trace_path, assigner, window=window, max_pods=max_pods, max_nodes=max_nodes)
    workload = workload.with_arrival_scale(arrival_scale)
    if gpu_mode == "dra":
        from kubesched.modes.replay.dra_gpus import with_dra_gpus

        workload = with_dra_gpus(workload)
    overrides = {
        **workload.kubelet,
        **(recording.kubelet if recording is not None else {}),
        **read_kubelet_settings(kubelet_path),
    }
    kubelet = KubeletImageConfig.from_mapping(overrides, kubelet_path or workload.description)
    tie_seed = seed if scheduler_seed is None else scheduler_seed
    err = Console(stderr=True)
    click.echo(replaying_line(workload), err=True)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    order = {spec.name: i for i, spec in enumerate(specs)}
    finished: list[ReplayResult] = []

    def keep(r: ReplayResult) -> None:
        """Write report.json and pods.csv of every config finished so far (in --config order)."""
        finished.append(r)
        finished.sort(key=lambda x: order.get(x.config, len(order)))
        _write_data(out, finished, workload, kubelet)

    try:
        if workers > 1 or dask_scheduler:
            from kubesched.modes.replay.parallel import jobs_for, run_on_dask, run_parallel

            jobs = jobs_for(
                workload,
                specs,
                catalogue=catalogue,
                kubelet_config=kubelet,
                seed=tie_seed,
                planners=planners,
                attempt_seconds=attempt_seconds,
            )

            def done(r: ReplayResult) -> None:
                keep(r)
                click.echo(f"{r.config}: done in {r.wall_seconds:.1f} s", err=True)

            if dask_scheduler:
                run_on_dask(jobs, dask_scheduler, done)
            else:
                run_parallel(jobs, workers, done)
        else:
            _run_here(workload, specs, catalogue, kubelet, tie_seed, planners, attempt_seconds, err, keep)
    except KeyboardInterrupt:
        names = ", ".join(r.config for r in finished)
        kept = (
            (
                f"kept {out / 'report.json'} and {out / 'pods.csv'} with {len(finished)} of {len(specs)} "
                f"config(s): {names}"
            )
            if finished
            else "no config had finished"
        )
        click.echo(f"replay interrupted: {kept}", err=True)
        raise
    if recording is not None:
        from kubesched.modes.report.report_json import write_report_json

        write_report_json(
            out / "report.json",
            finished,
            workload,
            kubelet.to_mapping(),
            _recording_agreement(recording, finished),
        )
    _finish(out, finished, workload, kubelet, no_html)


def replaying_line(workload: Workload) -> str:
    """What the replay will run, on one line: ``replaying 40 pods on 2 nodes from trace.yaml``, or
    with workloads among the trace's objects, whose pods their controllers create as time passes
    (how many depends on the run: completions, failures, nodes joining), ``replaying 0 pods and 1
    workload (1 Job) on 2 nodes from trace.yaml``. Workloads owned by another (a Deployment's
    ReplicaSet) are not counted: their owner is."""
    from kubesched.embedded.controllers.manager import WORKLOAD_KINDS

    kinds: dict[str, int] = {}
    for obj in workload.objects:
        owners = (obj.get("metadata") or {}).get("ownerReferences") or ()
        if obj.get("kind") in WORKLOAD_KINDS and not any(o.get("controller") for o in owners):
            kinds[str(obj["kind"])] = kinds.get(str(obj["kind"]), 0) + 1
    what = f"{len(workload.pods)} pods"
    if kinds:
        count = sum(kinds.values())
        listed = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
        what += f" and {count} workload{'s' if count != 1 else ''} ({listed})"
    return f"replaying {what} on {len(workload.nodes)} nodes from {workload.description}"


def _recording_input(
    trace_path: str,
    catalogue: ImageCatalogue,
    kubelet_path: str | None,
    registry_settings: RegistrySettings | None,
) -> Any:
    """The recording's replay input when ``trace_path`` is a recording (calibration printed), else None."""
    from kubesched.modes.record.recording import is_recording
    from kubesched.modes.record.replay_input import load_recording_input

    if not is_recording(trace_path):
        return None
    fetch = None
    client = None
    if registry_settings is not None:
        from kubesched.images.registry import RegistryClient, RegistryError

        client = RegistryClient(registry_settings)
        registry = client

        def fetch(ref: str) -> Any:
            try:
                found = registry.image_layers(ref)
            except RegistryError as e:
                click.echo(f"warning: layers of {ref} unknown: {e}", err=True)
                return None
            return found.digest, list(found.layers)

    try:
        inp = load_recording_input(
            trace_path,
            catalogue,
            fetch=fetch,
            kubelet_settings=read_kubelet_settings(kubelet_path) if kubelet_path else None,
        )
    finally:
        if client is not None:
            client.close()
    c = inp.calibration
    if c is not None:
        click.echo(
            f"kubelet model calibrated on {c.pulls} recorded pulls: {c.bytes_per_second / 1e6:.1f} MB/s, "
            f"{c.fixed_seconds:.3f} s per pull; fit error: median {100 * c.median_relative_error:.1f} % of "
            f"the pull time ({c.outliers} outliers); container start {inp.container_start_seconds} s",
            err=True,
        )
    for note in inp.notes:
        click.echo(f"note: {note}", err=True)
    return inp


def _recording_agreement(inp: Any, results: list[ReplayResult]) -> dict[str, Any]:
    """``{"recording": {...}}`` of report.json: calibration and, per config, how the replayed
    start-ups compare with the recorded ones (also printed)."""
    from kubesched.modes.record.agreement import recorded_startups, startup_agreement
    from kubesched.modes.record.replay_input import calibration_summary

    recorded = recorded_startups(inp.recording)
    agreement = {}
    for r in results:
        a = agreement[r.config] = startup_agreement(recorded, r)
        if a["pods"]:
            click.echo(
                f"{r.config}: replay vs recording over {a['pods']} pods: median start-up ratio "
                f"{a['medianRatio']:.2f}, {100 * a['within2x']:.0f} % within 2x; p50 {a['replayed']['p50']:.1f} s "
                f"vs {a['recorded']['p50']:.1f} s, p95 {a['replayed']['p95']:.1f} s vs {a['recorded']['p95']:.1f} s",
                err=True,
            )
    return {
        "recording": {
            "path": str(inp.recording.path),
            "sessions": inp.recording.sessions,
            "calibration": calibration_summary(inp),
            "notes": inp.notes,
            "agreement": agreement,
        }
    }


def _run_here(
    workload: Workload,
    specs: list[ConfigSpec],
    catalogue: ImageCatalogue,
    kubelet: KubeletImageConfig,
    seed: int,
    planners: list[PlannerFactory],
    attempt_seconds: float,
    err: Console,
    done: Callable[[ReplayResult], None],
) -> None:
    """The configs one after the other in this process, with a progress bar per config; ``done``
    gets each result as its run ends."""
    from kubesched.modes.replay.run import run_replay

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("pods"),
        TextColumn("[dim]day {task.fields[day]:.1f}"),
        TimeElapsedColumn(),
        console=err,
        transient=False,
        disable=not err.is_terminal,
    ) as bar:
        for spec in specs:
            task = bar.add_task(spec.name, total=len(workload.pods), day=0.0)

            def update(t: float, created: int, total: int, task: TaskID = task) -> None:
                bar.update(task, completed=created, day=t / 86400.0)

            result = run_replay(
                workload,
                spec,
                catalogue=catalogue,
                kubelet_config=kubelet,
                seed=seed,
                planners=[make() for make in planners],
                attempt_seconds=attempt_seconds,
                progress=update,
            )
            done(result)
            if not err.is_terminal:  # the progress bar says it on a terminal
                click.echo(f"{result.config}: done in {result.wall_seconds:.1f} s", err=True)


def _write_data(
    out: Path, results: list[ReplayResult], workload: Workload, kubelet: KubeletImageConfig
) -> None:
    """report.json and pods.csv of ``results`` (each file replaced atomically)."""
    from kubesched.modes.report.report_json import write_pods_csv, write_report_json

    write_report_json(out / "report.json", results, workload, kubelet.to_mapping())
    write_pods_csv(out / "pods.csv", results)


def _finish(
    out: Path, results: list[ReplayResult], workload: Workload, kubelet: KubeletImageConfig, no_html: bool
) -> None:
    """report.html (unless ``no_html`` or plotly is missing) and the summary table."""
    from kubesched.modes.report.report_table import summary_table

    written = ["report.json", "pods.csv"]
    if not no_html:
        from kubesched.modes.report.report_html import write_report_html
        from kubesched.modes.report.report_plots import require_plotly

        try:
            require_plotly()
        except ImportError as e:
            click.echo(f"note: report.html skipped: {e}", err=True)
        else:
            write_report_html(out / "report.html", results, workload, kubelet.to_mapping())
            written.append("report.html")
    console = table_console(min_width=160)
    console.print(summary_table(results))
    click.echo(f"wrote {', '.join(str(out / w) for w in written)}")
