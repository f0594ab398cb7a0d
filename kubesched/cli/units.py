"""Values with units on the command line, one click parameter type per unit so that every flag
taking one reads it the same way (see :mod:`kubesched.units` for the forms accepted):
:class:`Bytes` for sizes and bandwidths (``5Gi``, ``5GB``, ``100MB/s``), :class:`Seconds` for
spans (``12h``, ``30d``, ``1d12h``, ``90``), :class:`FiniteFloat` for plain numbers (rates, factors,
seconds) within bounds. ``nan``, ``inf`` and numbers beyond a flag's upper bound are refused by
all three (a huge value would otherwise overflow where it is turned into an int). A bad value is a usage error naming the flag
(``error: Invalid value for '--size': '5XB' is not a size: ...``), exit 2.
"""

from __future__ import annotations

import math
from typing import Any

import click

from kubesched.units import parse_bytes, parse_seconds

__all__ = ["Bytes", "FiniteFloat", "Seconds"]


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
            value = float(raw)
        else:
            try:
                value = parse_seconds(str(raw))
            except ValueError as e:
                self.fail(str(e), param, ctx)
        if not math.isfinite(value):
            self.fail(f"{raw!r} is not a finite duration.", param, ctx)
        return value


class FiniteFloat(click.FloatRange):
    """A number flag: a finite float within ``[min, max]`` (``min_open``/``max_open`` exclude the
    bound, as :class:`click.FloatRange`). ``nan`` and ``inf`` are refused (FloatRange lets ``nan``
    through, since every comparison with it is false). Every float flag of every command uses
    this type. Raises click.BadParameter (a usage error, exit 2) naming the flag."""

    name = "float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.types.FloatParamType.convert(self, value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return super().convert(number, param, ctx)
