"""Flag syntax of kube-scheduler's command line (``github.com/spf13/pflag``) on top of click.

* Boolean flags (``--leader-elect``, ``--profiling``) take an optional value: the bare flag means
  true, ``--flag=false``/``--flag=true`` (any of pflag's ``strconv.ParseBool`` spellings: 1, t, T,
  TRUE, true, True, 0, f, F, FALSE, false, False) set it. As click has no way to tell ``--flag
  false`` from ``--flag`` followed by an argument, ``--flag false`` also sets it to false (pflag
  would read ``false`` as a positional argument, which ``kubesched run`` refuses anyway).
* Durations (``--leader-elect-lease-duration=15s``, ``--authentication-token-webhook-cache-ttl``)
  are Go durations (``time.ParseDuration``: ``1m30s``, ``500ms``); :func:`duration_flag` parses
  them to seconds and refuses negative ones.
* Short flags with ``=``: pflag reads ``-v=4`` as ``-v 4``; click would hand the option the value
  ``=4``. :class:`PflagIntRange` drops that ``=``.
"""

from __future__ import annotations

from typing import Any

import click

from kubesched.config.duration import parse_go_duration

__all__ = ["PFLAG_BOOL", "PflagIntRange", "bool_flag_options", "duration_flag"]

_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


class _PflagBool(click.ParamType):
    """``strconv.ParseBool``: exactly the spellings pflag accepts (``yes``/``on`` are errors)."""

    name = "boolean"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> bool:
        if isinstance(value, bool):
            return value
        text = str(value)
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        self.fail(
            f'invalid argument "{text}": strconv.ParseBool: parsing "{text}": invalid syntax', param, ctx
        )


PFLAG_BOOL = _PflagBool()


def bool_flag_options() -> dict[str, Any]:
    """Keyword arguments of ``click.option`` for a pflag boolean: optional value, bare flag true,
    unset None (so the config file's value applies)."""
    return {"type": PFLAG_BOOL, "is_flag": False, "flag_value": True, "default": None}


class PflagIntRange(click.IntRange):
    """An int range that also accepts the ``=N`` click leaves of ``-v=N``."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.startswith("="):
            value = value[1:]
        return super().convert(value, param, ctx)


def duration_flag(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    """click callback of a pflag ``DurationVar``: a Go duration in seconds (None when absent).
    Raises click.BadParameter with ``time.ParseDuration``'s message, or for a negative duration."""
    if value is None:
        return None
    try:
        seconds = parse_go_duration(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    if seconds < 0:
        raise click.BadParameter("must not be negative")
    return seconds
