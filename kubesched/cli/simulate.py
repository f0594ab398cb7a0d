"""``kubesched simulate``: schedule a snapshot on the embedded cluster and explain the verdicts."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

import click
import yaml
from rich.console import Console

from kubesched.cli.paths import check_output_file
from kubesched.cluster.manifests import load_manifests, write_manifests
from kubesched.config.load import load_config
from kubesched.errors import ConfigError
from kubesched.modes.simulate.report import explain_tables, find_pod, print_table, result_dict
from kubesched.modes.simulate.run import run_simulation


@click.command()
@click.option("-f", "--filename", "files", multiple=True, required=True, type=click.Path(),
              help="Manifest file or directory (YAML, JSON, kind: List); repeatable.")
@click.option("-R", "--recursive", is_flag=True, help="Also read the subdirectories of -f directories (as kubectl -R).")
@click.option("--config", "config_path", type=click.Path(), help="A KubeSchedulerConfiguration (v1) file.")
@click.option("--seed", type=int, default=None, help="Seed for tie-breaking; the same seed gives the same output.")
@click.option("-o", "--output", type=click.Choice(["table", "json", "yaml"]), default="table", show_default=True,
              help="table: one row per pod; json/yaml: the SimulationResult document with every attempt.")
@click.option("--explain", "explain", metavar="POD", help="Show per-node plugin verdicts and scores for POD.")
@click.option("--write-snapshot", type=click.Path(), help="Write the resulting cluster as a manifest file.")
def simulate(files: tuple[str, ...], recursive: bool, config_path: str | None, seed: int | None, output: str,
             explain: str | None, write_snapshot: str | None) -> None:
    """Schedule the pending pods of a cluster snapshot with the real scheduler and report the result."""
    if write_snapshot:
        check_output_file(write_snapshot, "--write-snapshot")
    loaded = load_manifests(list(files), recursive=recursive)
    for kind, count in sorted(loaded.skipped_kinds.items()):
        click.echo(f"warning: skipped {count} object(s) of unsupported kind {kind}", err=True)
    if not loaded.manifests:
        click.echo(f"warning: no objects found in {', '.join(files)}", err=True)
    config = load_config(config_path) if config_path else None
    record: bool | Callable[[Any], bool] = output != "table"
    if not record and explain:
        ref = explain

        def record(pod: Any) -> bool:
            return bool(pod.key == ref or ("/" not in ref and pod.name == ref))
    try:
        res = run_simulation(loaded.manifests, config, seed=seed, record=record)
    except ConfigError as e:
        if config_path and not e.where:
            raise e.located(config_path) from None
        raise
    if write_snapshot:
        write_manifests(write_snapshot, res.cluster.snapshot_objects())
    if output == "json":
        json.dump(result_dict(res), sys.stdout, indent=2)  # streamed: results of big snapshots exceed 2 GiB
        sys.stdout.write("\n")
    elif output == "yaml":
        yaml.safe_dump(result_dict(res), sys.stdout, sort_keys=False)
    else:
        # on a terminal rich follows its width; piped output keeps rows whole (COLUMNS overrides)
        print_table(res, Console() if sys.stdout.isatty() else Console(width=int(os.environ.get("COLUMNS", 200))))
    if explain:
        try:
            pod = find_pod(res, explain)
        except KeyError as e:
            raise click.BadParameter(str(e.args[0]), param_hint="--explain") from None
        console = Console(stderr=output != "table")
        for t in explain_tables(pod):
            console.print(t)
