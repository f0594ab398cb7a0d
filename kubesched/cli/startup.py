"""``kubesched startup``: pod start-up decomposed from a live cluster (pods, conditions, kubelet
Events), in the replay's report format."""

from __future__ import annotations

import time

import click

from kubesched.cli.output import table_console
from kubesched.cli.paths import OutputDir
from kubesched.cli.shared_flags import context_flag, no_html_flag
from kubesched.errors import ConfigError


def _since_seconds(text: str) -> float | None:
    """``1h``, ``30m``, ``90s``, ``2d``, ``1h30m`` -> seconds; ``all`` -> None."""
    from kubesched.units import parse_go_duration

    if text == "all":
        return None
    days = 0.0
    rest = text
    if "d" in text:
        head, _, rest = text.partition("d")
        try:
            days = float(head)
        except ValueError:
            raise ConfigError("--since", f"invalid duration {text!r} (e.g. 1h, 30m, 2d, all)") from None
    try:
        seconds = days * 86400 + (parse_go_duration(rest) if rest else 0.0)
    except ValueError:
        raise ConfigError("--since", f"invalid duration {text!r} (e.g. 1h, 30m, 2d, all)") from None
    if seconds <= 0:
        raise ConfigError("--since", f"must be > 0, got {text!r}")
    return seconds


@click.command()
@click.option(
    "--kubeconfig",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Kubeconfig of the cluster to read.",
)
@context_flag()
@click.option(
    "-n", "--namespace", default=None, help="Only pods (and Events) of this namespace (default: all)."
)
@click.option(
    "--since",
    "since",
    default="1h",
    show_default=True,
    help="Only pods created within this long before now (1h, 30m, 2d, ...; `all` for every pod).",
)
@click.option(
    "--out",
    "out_dir",
    type=OutputDir(),
    default="startup-report",
    show_default=True,
    help="Directory for report.json, report.html and pods.csv.",
)
@click.option(
    "--top",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Images listed per scheduler in topImages (most pull time first).",
)
@no_html_flag()
def startup(
    kubeconfig: str,
    context: str | None,
    namespace: str | None,
    since: str,
    out_dir: str,
    top: int,
    no_html: bool,
) -> None:
    """Report pod start-up on a live cluster, one row per scheduler (spec.schedulerName): queue and
    scheduling (creation -> PodScheduled), image pull and pull wait (from the kubelet's Pulled
    Events), container start, start-up p50/p95/p99, bytes pulled, cache-hit ratio and the images
    costing most pull time. Works against any cluster whose kubelets write the upstream Events, and
    against `kubesched serve --kubelet`. Needs list access to pods, nodes and events."""

    from kubesched.cli.cluster_read import read_cluster
    from kubesched.modes.report.report_table import summary_table
    from kubesched.modes.startup.analysis import StartupData, analyse
    from kubesched.modes.startup.report import LABEL, TITLE, write_startup_report

    window = _since_seconds(since)
    pods, nodes, events = read_cluster(
        kubeconfig,
        context,
        lambda client: (
            client.list("Pod", namespace).items,
            client.list("Node").items,
            client.list("Event", namespace).items,
        ),
    )
    data = StartupData(
        pods, nodes, events, source=f"{kubeconfig}" + (f" namespace {namespace}" if namespace else "")
    )
    runs = analyse(data, since=None if window is None else time.time() - window)
    for problem in data.problems:
        click.echo(f"warning: {problem}", err=True)
    if not runs:
        click.echo("no pods in the window", err=True)
    source = {"kubeconfig": kubeconfig, "context": context, "namespace": namespace, "since": since}
    paths = write_startup_report(out_dir, runs, source, top=top, html=not no_html)
    console = table_console()
    console.print(summary_table([r.result for r in runs], title=TITLE, label=LABEL, wall=False))
    for run in runs:
        for s in run.images[:3]:
            click.echo(
                f"{run.result.config}: {s.image}: {s.pulls} pulls, {s.total_seconds:.1f} s with waiting, "
                f"{s.hits} cache hits"
            )
    click.echo(f"wrote {', '.join(str(p) for p in paths)}")
