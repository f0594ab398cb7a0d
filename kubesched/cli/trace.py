"""``kubesched trace``: turn public cluster traces into kubesched inputs."""

from __future__ import annotations

import click

from kubesched.cli.output import snapshot_output_flags, write_objects


@click.group()
def trace() -> None:
    """Turn public cluster traces into kubesched inputs.

    Example: kubesched trace snapshot $OPENB --pods 3000 --output openb.yaml
    """


@trace.command("snapshot")
@click.argument("trace_dir", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--pods",
    "max_pods",
    type=click.IntRange(min=0),
    default=2000,
    show_default=True,
    help="How many pods to include (the first N by creation time; all of them when the trace has fewer).",
)
@click.option(
    "--nodes",
    "max_nodes",
    type=click.IntRange(min=1),
    default=None,
    help="How many nodes to include (the first N of the node list; default: all).",
)
@click.option(
    "--pod-list",
    default="openb_pod_list_default.csv",
    show_default=True,
    help="Pod list of the trace directory: openb_pod_list_default.csv (no GPU-model constraints) or "
    "openb_pod_list_gpuspec33.csv (the same pods, about a third of the GPU pods limited to "
    "GPU models, which become required node affinity).",
)
@click.option(
    "--node-list",
    default="openb_node_list_all_node.csv",
    show_default=True,
    help="Node list of the trace directory: openb_node_list_all_node.csv (1,523 nodes) or "
    "openb_node_list_gpu_node.csv (the 1,213 GPU nodes).",
)
@snapshot_output_flags
def snapshot(
    trace_dir: str,
    max_pods: int,
    max_nodes: int | None,
    pod_list: str,
    node_list: str,
    fmt: str | None,
    output: str | None,
) -> None:
    """Write the trace's nodes (all, or the first --nodes N) and its first N pods (pending, by
    creation time) as a snapshot."""
    from kubesched.trace.openb import load_openb_snapshot

    objs = load_openb_snapshot(
        trace_dir, max_pods=max_pods, pod_list=pod_list, node_list=node_list, max_nodes=max_nodes
    )
    nodes = sum(1 for o in objs if o["kind"] == "Node")
    pods = len(objs) - nodes
    if pods < max_pods:
        click.echo(
            f"note: the trace has {pods} pods, fewer than --pods {max_pods}: all of them are included",
            err=True,
        )
    write_objects(objs, output, fmt, "--output")
    click.echo(f"wrote {nodes} nodes and {pods} pods" + (f" to {output}" if output else ""), err=True)
