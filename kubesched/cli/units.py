"""Values with units on the command line, one click parameter type per unit so that every flag
taking one reads it the same way (see :mod:`kubesched.units` for the forms accepted):
:class:`Bytes` for sizes and bandwidths (``5Gi``, ``5GB``, ``100MB/s``), :class:`Seconds` for
spans (``12h``, ``30d``, ``1d12h``, ``90``). A bad value is a usage error naming the flag
(``error: Invalid value for '--size': '5XB' is not a size: ...``), exit 2.
"""

from __future__ import annotations

from typing import Any

import click

from kubesched.units import parse_bytes, parse_seconds

__all__ = ["Bytes", "Seconds"]


class Bytes(click.ParamType):
    """A byte size or bandwidth flag (see :func:`parse_bytes`); the value is an int (bytes)."""

    name = "bytes"

    def convert(self, raw: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(raw, int):
            return raw
        try:
            return parse_bytes(str(raw))
        except ValueError as e:
            self.fail(str(e), param, ctx)


class Seconds(click.ParamType):
    """A duration flag (see :func:`parse_seconds`); the value is a float (seconds)."""

    name = "duration"

    def convert(self, raw: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(raw, int | float):
            return float(raw)
        try:
            return parse_seconds(str(raw))
        except ValueError as e:
            self.fail(str(e), param, ctx)
