"""The ``kubesched`` command line (click). Commands are thin: parse flags, build objects, call
one function, print. Every :class:`~kubesched.errors.KubeschedError` becomes one line on
stderr and exit code 2. A command's module is imported when the command is asked for (click's
lazily loaded subcommands), so one command never pays for the imports of the others."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from kubesched import __version__
from kubesched.errors import KubeschedError

#: command name -> ``module:attribute`` of its click command
COMMANDS: dict[str, str] = {
    "bench": "kubesched.cli.bench:bench",
    "simulate": "kubesched.cli.simulate:simulate",
    "trace": "kubesched.cli.trace:trace",
    "serve": "kubesched.cli.serve:serve",
    "replay": "kubesched.cli.replay:replay",
    "run": "kubesched.cli.run:run",
    "snapshot": "kubesched.cli.snapshot:snapshot",
    "ui": "kubesched.cli.ui:ui",
    "images": "kubesched.cli.images:images",
    "startup": "kubesched.cli.startup:startup",
}


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *super().list_commands(ctx)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        spec = COMMANDS.get(cmd_name)
        if spec is None:
            return super().get_command(ctx, cmd_name)
        module, _, attr = spec.partition(":")
        command = getattr(importlib.import_module(module), attr)
        if not isinstance(command, click.Command):
            raise TypeError(f"{spec} is not a click command")
        return command

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


if __name__ == "__main__":
    main()
