"""Checks of output paths given on the command line, done before any long-running work."""

from __future__ import annotations

from pathlib import Path

from kubesched.errors import KubeschedError


def check_output_file(path: str, flag: str) -> None:
    """Raise :class:`KubeschedError` (``--write-snapshot out/x.yaml: directory out does not exist``)
    unless ``path`` can be created as a file: its parent directory exists and it is not a directory."""
    p = Path(path)
    if p.is_dir():
        raise KubeschedError(f"{flag} {path}: is a directory")
    parent = p.parent
    if not parent.is_dir():
        raise KubeschedError(f"{flag} {path}: directory {parent} does not exist")
