"""Duration flags of the commands (``--since``, ``--duration``, ``--segment``): Go durations
(``90s``, ``1h30m``) with a leading days part (``2d``, ``1d12h``)."""

from __future__ import annotations

from kubesched.errors import ConfigError

__all__ = ["parse_duration"]


def parse_duration(text: str, flag: str) -> float:
    """``24h``, ``90m``, ``1h30m``, ``2d``, ``1d12h`` -> seconds (> 0). Raises ConfigError naming
    ``flag`` for anything else (``invalid duration '5x' (e.g. 1h, 30m, 2d)``, ``must be > 0``)."""
    from kubesched.modes.startup.analysis import parse_go_duration

    days, rest = 0.0, text
    if "d" in text:
        head, _, rest = text.partition("d")
        try:
            days = float(head)
        except ValueError:
            raise ConfigError(flag, f"invalid duration {text!r} (e.g. 1h, 30m, 2d)") from None
    try:
        seconds = days * 86400 + (parse_go_duration(rest) if rest else 0.0)
    except ValueError:
        raise ConfigError(flag, f"invalid duration {text!r} (e.g. 1h, 30m, 2d)") from None
    if seconds <= 0:
        raise ConfigError(flag, f"must be > 0, got {text!r}")
    return seconds
