"""``kubesched snapshot``: read a live cluster (or ``kubesched serve``) into a snapshot file that
``simulate`` and ``serve`` load unchanged (see :mod:`kubesched.client.live_snapshot`)."""

from __future__ import annotations

import sys

import click

from kubesched.cli.output import snapshot_output_flags, write_objects


@click.command()
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False),
    default=None,
    help="kubeconfig of the cluster (default: in-cluster service account).",
)
@click.option("--context", default=None, help="kubeconfig context (default: its current-context).")
@click.option(
    "-n",
    "--namespace",
    default=None,
    help="Namespaced objects of this namespace only (bound pods of every namespace are still read: "
    "they hold their nodes' resources).",
)
@snapshot_output_flags
def snapshot(
    kubeconfig: str | None, context: str | None, namespace: str | None, fmt: str | None, output: str | None
) -> None:
    """Read every kind `simulate` loads from a cluster (never Secrets, never a write), strip
    managedFields and status noise, and write them as one snapshot.

    Example: kubesched snapshot --kubeconfig ~/.kube/config -n shop --output snapshot.yaml"""
    from kubesched.cli.cluster_read import read_cluster
    from kubesched.client.live_snapshot import read_snapshot

    objects = read_cluster(kubeconfig, context, lambda client: read_snapshot(client, namespace))
    write_objects(objects, output, fmt, "--output")
    counts: dict[str, int] = {}
    for o in objects:
        counts[o["kind"]] = counts.get(o["kind"], 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in counts.items()) or "no objects"
    click.echo(f"read {summary}" + (f"; wrote {output}" if output else ""), err=True)
    sys.stdout.flush()
