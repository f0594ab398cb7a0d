"""Where commands put what they produce: ``-o`` is always a format (as kubectl's), a file is
written with ``--output FILE`` (the format following its extension unless ``-o`` says otherwise),
and without ``--output`` the result goes to standard output."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from kubesched.cli.paths import OutputFile, check_output_file

__all__ = [
    "OUTPUT_FILE_HELP",
    "PIPED_WIDTH",
    "SNAPSHOT_FORMATS",
    "snapshot_output_flags",
    "table_console",
    "write_objects",
]

F = TypeVar("F", bound=Callable[..., Any])

#: Columns a table printed to a pipe or file may take: rich shortens cells (``Schedulin…``) to fit
#: its width, and a pipe has none, so it gets one no table reaches (tables do not expand to it).
PIPED_WIDTH = 1000

SNAPSHOT_FORMATS = ("yaml", "json")
OUTPUT_FILE_HELP = "Write to this file (YAML, or JSON for a .json name) instead of standard output."


def table_console(*, min_width: int = 0) -> Any:
    """The rich Console tables go to on stdout: the terminal's width (at least ``min_width``) on a
    terminal, :data:`PIPED_WIDTH` otherwise, so that piped output never cuts a name."""
    from rich.console import Console

    if sys.stdout.isatty():
        return Console(width=max(Console().width, min_width)) if min_width else Console()
    return Console(width=PIPED_WIDTH)


def snapshot_output_flags(f: F) -> F:
    """Add ``-o/--format`` (``fmt``: one of :data:`SNAPSHOT_FORMATS`, None to follow the file name)
    and ``--output FILE`` (``output``) to a command that writes a snapshot with :func:`write_objects`."""
    f = click.option("--output", "output", type=OutputFile(), default=None, help=OUTPUT_FILE_HELP)(f)
    return click.option(
        "-o",
        "--format",
        "fmt",
        type=click.Choice(SNAPSHOT_FORMATS),
        default=None,
        help="yaml (default) or json; with --output, default from its extension.",
    )(f)


def write_objects(objects: list[dict[str, Any]], output: str | None, fmt: str | None, flag: str) -> None:
    """Write ``objects`` as a snapshot: to ``output`` (multi-document YAML, or a JSON ``List``) or to
    stdout. ``fmt`` (``yaml``/``json``) overrides the extension. Raises KubeschedError for an
    output path that cannot be created (checked before writing)."""
    from kubesched.embedded.manifests import render_manifests, write_manifests

    if output is not None:
        check_output_file(output, flag)
        as_json = fmt == "json" if fmt else Path(output).suffix.lower() == ".json"
        write_manifests(output, objects, as_json=as_json)
        return
    sys.stdout.write(render_manifests(objects, as_json=fmt == "json"))
