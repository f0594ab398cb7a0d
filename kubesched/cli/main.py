"""The ``kubesched`` command line (click). Commands are thin: parse flags, build objects, call
one function, print.

One error path for every command (:class:`_Group`): a :class:`~kubesched.errors.KubeschedError`
(bad input, a busy port, an unreachable cluster, a missing extra) and a click usage error (a bad
flag value, an output path that cannot be written) are one line on stderr, ``error: ...``, exit
code 2. Interrupts end a command as a Unix tool ends: SIGINT (Ctrl-C) exits 130 and SIGTERM 143
(128 + the signal number), after the work already finished has been written (commands write each
finished result as it completes, under a temporary name renamed when complete). The servers
(``serve``, ``run``, ``ui``) handle both signals themselves and stop gracefully with exit 0.
"""

from __future__ import annotations

import importlib
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from kubesched import __version__
from kubesched.api.kube_version import KUBE_GIT_VERSION
from kubesched.errors import KubeschedError

#: Exit codes of an interrupted command (128 + signal number, as a shell reports them).
EXIT_SIGINT = 128 + signal.SIGINT
EXIT_SIGTERM = 128 + signal.SIGTERM
#: Exit code of bad input or usage.
EXIT_USAGE = 2


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: raised in the main thread so that ``finally`` blocks and ``except
    KeyboardInterrupt`` clean-ups run as for Ctrl-C."""


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` in the main thread while the command runs (commands that
    install their own handler, the servers, replace it for their run)."""

    def raise_terminated(signum: int, frame: object) -> None:
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, raise_terminated)
    except ValueError:  # not the main thread (an in-process test runner): nothing to install
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _one_line(text: str) -> str:
    """``text`` on one line (line breaks become spaces; other spacing is kept, as upstream's
    messages have it)."""
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


class _Group(click.Group):
    """The ``kubesched`` group: commands of :data:`COMMANDS` loaded on first use, and one error
    path for all of them (see the module docstring)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = self.commands.get(cmd_name)
        if found is None and cmd_name in COMMANDS:
            module, _, attr = COMMANDS[cmd_name].partition(":")
            found = getattr(importlib.import_module(module), attr)
            assert isinstance(found, click.Command)
            self.add_command(found, cmd_name)
        return found

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with _sigterm_raises():
                return super().invoke(ctx)
        except KubeschedError as e:
            click.echo(f"error: {_one_line(str(e))}", err=True)
            sys.exit(EXIT_USAGE)
        except click.UsageError as e:
            click.echo(f"error: {_one_line(e.format_message())}", err=True)
            sys.exit(e.exit_code)
        except Terminated:
            click.echo("interrupted (SIGTERM)", err=True)
            sys.exit(EXIT_SIGTERM)
        except KeyboardInterrupt:
            click.echo("interrupted (SIGINT)", err=True)
            sys.exit(EXIT_SIGINT)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    __version__,
    prog_name="kubesched",
    message=f"%(prog)s v%(version)s (kube-scheduler {KUBE_GIT_VERSION} behaviour)",
)
def main() -> None:
    """kubesched: a Kubernetes scheduler in Python, exact to kube-scheduler, with image-pull-aware placement."""


#: Command name -> ``module:attribute`` of its click command, imported when the command is run
#: (or listed by ``--help``): the commands' imports (numpy, the kubernetes models) then happen
#: inside :meth:`_Group.invoke`, so that an interrupt during them exits 130 like any other, and
#: ``kubesched --version`` stays fast. A new command is one entry here.
COMMANDS: dict[str, str] = {
    "bench": "kubesched.cli.bench:bench",
    "images": "kubesched.cli.images:images",
    "load": "kubesched.cli.load:load",
    "record": "kubesched.cli.record:record",
    "replay": "kubesched.cli.replay:replay",
    "run": "kubesched.cli.run:run",
    "serve": "kubesched.cli.serve:serve",
    "simulate": "kubesched.cli.simulate:simulate",
    "snapshot": "kubesched.cli.snapshot:snapshot",
    "startup": "kubesched.cli.startup:startup",
    "trace": "kubesched.cli.trace:trace",
    "ui": "kubesched.cli.ui:ui",
}


if __name__ == "__main__":
    main()
