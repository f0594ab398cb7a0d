"""The ``kubesched`` command line (click). Commands are thin: parse flags, build objects, call
one function, print. Every :class:`~kubesched.errors.KubeschedError` becomes one line on
stderr and exit code 2."""

from __future__ import annotations

import sys
from typing import Any

import click

from kubesched import __version__
from kubesched.errors import KubeschedError


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KubeschedError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(2)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kubesched", message="%(prog)s v%(version)s (kube-scheduler v1.35 behaviour)")
def main() -> None:
    """kubesched: a Kubernetes scheduler in Python, exact to kube-scheduler, with image-pull-aware placement."""


def _register() -> None:
    from kubesched.cli import bench, serve, simulate, trace

    main.add_command(bench.bench)
    main.add_command(simulate.simulate)
    main.add_command(trace.trace)
    main.add_command(serve.serve)
    from kubesched.cli import replay

    main.add_command(replay.replay)
    from kubesched.cli import run

    main.add_command(run.run)
    from kubesched.cli import snapshot

    main.add_command(snapshot.snapshot)
    from kubesched.cli import ui

    main.add_command(ui.ui)
    from kubesched.cli import images

    main.add_command(images.images)
    from kubesched.cli import startup

    main.add_command(startup.startup)
    from kubesched.cli import record

    main.add_command(record.record)
    from kubesched.cli import load

    main.add_command(load.load)


_register()

if __name__ == "__main__":
    main()
