"""``kubesched trace``: turn public cluster traces into kubesched inputs."""

from __future__ import annotations

import click


@click.group()
def trace() -> None:
    """Turn public cluster traces into kubesched inputs.

    Example: kubesched trace snapshot ../shared/data/alibaba-gpu-2023 --pods 3000 -o openb.yaml
    """


@trace.command("snapshot")
@click.argument("trace_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--pods", "max_pods", type=click.IntRange(min=0), default=2000, show_default=True,
              help="How many pods to include.")
@click.option("--pod-list", default="openb_pod_list_default.csv", show_default=True)
@click.option("--node-list", default="openb_node_list_all_node.csv", show_default=True)
@click.option("-o", "--output", "out", type=click.Path(), required=True, help="Snapshot file to write (YAML or JSON).")
def snapshot(trace_dir: str, max_pods: int, pod_list: str, node_list: str, out: str) -> None:
    """Write the trace's nodes and its first N pods (pending, by creation time) as a snapshot."""
    from kubesched.cli.paths import check_output_file
    from kubesched.cluster.manifests import write_manifests
    from kubesched.trace.openb import load_openb_snapshot

    check_output_file(out, "-o")
    objs = load_openb_snapshot(trace_dir, max_pods=max_pods, pod_list=pod_list, node_list=node_list)
    write_manifests(out, objs)
    nodes = sum(1 for o in objs if o["kind"] == "Node")
    click.echo(f"wrote {nodes} nodes and {len(objs) - nodes} pods to {out}")
