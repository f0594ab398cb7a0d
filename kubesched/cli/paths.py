"""Output paths given on the command line, checked when the flags are parsed, before any work:
:class:`OutputFile` and :class:`OutputDir` are click parameter types, so a command declares
``type=OutputFile()`` and a path that cannot be written fails at once, in one line naming the
flag as every input error does (``error: --out r/x: r is a file, not a directory``), exit 2.

A path can be written when it is not a directory (a file) or not a file (a directory), and the
directory that will hold it exists (or, for a directory, its nearest existing ancestor is a
directory) and takes a new file: writability is probed by creating and removing a temporary
file there, which also catches read-only file systems and holds for root.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import click

from kubesched.errors import KubeschedError

__all__ = ["OutputDir", "OutputFile", "check_output_file", "output_dir_problem", "output_file_problem"]


def _directory_problem(directory: Path) -> str | None:
    """Why a new file cannot be created in existing ``directory``, or None."""
    try:
        fd, name = tempfile.mkstemp(prefix=".kubesched-probe-", dir=directory)  # a named file, as the output
        os.close(fd)
        os.unlink(name)
    except OSError as e:
        return f"directory {directory} is not writable ({e.strerror or e})"
    return None


def _nearest_existing(path: Path) -> Path:
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _container_problem(parent: Path, create: bool) -> str | None:
    """Why ``parent`` cannot hold a new entry (``create``: it may be created with its ancestors)."""
    if parent.is_dir():
        return _directory_problem(parent)
    if parent.exists():
        return f"{parent} is a file, not a directory"
    if not create:
        ancestor = _nearest_existing(parent)
        if ancestor.exists() and not ancestor.is_dir():
            return f"{ancestor} is a file, not a directory"
        return f"directory {parent} does not exist"
    ancestor = _nearest_existing(parent)
    if not ancestor.is_dir():
        return f"{ancestor} is a file, not a directory"
    return _directory_problem(ancestor)


def output_file_problem(path: str) -> str | None:
    """Why the file ``path`` cannot be written (``out: is a directory``, ``out/x: out is a file,
    not a directory``, ``out/x: directory out does not exist``, ``x: directory . is not writable
    (Permission denied)``), or None. The directory that will hold it must exist: files are never
    written into directories made for them."""
    p = Path(path)
    if p.is_dir():
        return f"{path}: is a directory"
    if p.exists() and not os.access(p, os.W_OK):
        return f"{path}: not writable"
    parent = p.parent if str(p.parent) else Path(".")
    problem = _container_problem(parent, False)
    return f"{path}: {problem}" if problem else None


def output_dir_problem(path: str) -> str | None:
    """Why the directory ``path`` cannot be written into or created (with its parents), or None."""
    p = Path(path)
    if p.exists():
        if not p.is_dir():
            return f"{path}: is a file, not a directory"
        problem = _directory_problem(p)
        return f"{path}: {problem}" if problem else None
    problem = _container_problem(p.parent if str(p.parent) else Path("."), True)
    return f"{path}: {problem}" if problem else None


def check_output_file(path: str, flag: str) -> None:
    """Raise :class:`KubeschedError` (``--write-snapshot out/x.yaml: directory out does not exist``)
    unless ``path`` can be created as a file (see :func:`output_file_problem`); for paths that are
    not flags' values (the flags themselves use :class:`OutputFile`)."""
    problem = output_file_problem(path)
    if problem:
        raise KubeschedError(f"{flag} {problem}")


def _refuse(problem: str | None, param: click.Parameter | None) -> None:
    """Raise KubeschedError ``--flag PATH: problem`` for a problem (the main group prints it as one
    line, exit 2)."""
    if problem:
        flag = max(param.opts, key=len) if param is not None and param.opts else "path"
        raise KubeschedError(f"{flag} {problem}")


class OutputFile(click.ParamType):
    """A file the command will write (``--output``, ``--write-snapshot``, ``--write-kubeconfig``):
    refused at parse time when it cannot be (see :func:`output_file_problem`). ``-`` passes
    through when ``allow_dash`` (standard output)."""

    name = "file"

    def __init__(self, *, allow_dash: bool = False) -> None:
        self.allow_dash = allow_dash

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = os.fspath(value)
        if self.allow_dash and text == "-":
            return text
        _refuse(output_file_problem(text), param)
        return text


class OutputDir(click.ParamType):
    """A directory the command will create if needed and write into (``replay --out``,
    ``startup --out``): refused at parse time when it cannot be (see :func:`output_dir_problem`)."""

    name = "directory"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = os.fspath(value)
        _refuse(output_dir_problem(text), param)
        return text
