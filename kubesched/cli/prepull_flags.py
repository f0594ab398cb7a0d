"""The ``--prepull*`` flags of ``kubesched run`` (the pre-pull controller, :mod:`kubesched.prepull.controller`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from kubesched.cli.units import FiniteFloat
from kubesched.modes.run.options import PrePullOptions

F = TypeVar("F", bound=Callable[..., Any])


def prepull_flags(f: F) -> F:
    """Add the ``--prepull*`` options to a command (their values arrive as keyword arguments
    ``prepull``, ``prepull_namespace``, ...; see :func:`prepull_options`)."""
    options = [
        click.option(
            "--prepull",
            is_flag=True,
            default=False,
            help="Pre-pull the images of applications that keep arriving on nodes with room, with "
            'short-lived puller pods (docs/image-acceleration.md, "Pre-pull on a real cluster").',
        ),
        click.option(
            "--prepull-namespace",
            default="kube-system",
            show_default=True,
            help="Namespace of the puller pods.",
        ),
        click.option(
            "--prepull-interval",
            type=FiniteFloat(min=0.1, max=86400),
            default=15.0,
            show_default=True,
            help="Seconds between two pre-pull ticks.",
        ),
        click.option(
            "--prepull-max-per-tick",
            type=click.IntRange(min=1),
            default=8,
            show_default=True,
            help="Most puller pods started per tick (one per node at a time in any case).",
        ),
        click.option(
            "--prepull-timeout",
            type=FiniteFloat(min=1, max=86400),
            default=600.0,
            show_default=True,
            help="Seconds after which an unfinished puller pod is deleted (outcome timeout).",
        ),
        click.option(
            "--prepull-catalogue",
            type=click.Path(exists=True, dir_okay=False),
            default=None,
            help="Image catalogue YAML (default: the shipped one).",
        ),
        click.option(
            "--prepull-mechanism",
            type=click.Choice(["auto", "pods", "imagepulljob"]),
            default="auto",
            show_default=True,
            help="auto: OpenKruise ImagePullJob objects when the API server serves that CRD, else puller pods.",
        ),
        click.option(
            "--prepull-registry-settings",
            type=click.Path(exists=True, dir_okay=False),
            default=None,
            help="Registry settings YAML: the planner looks up images missing from the catalogue in their "
            "registries (default: the registrySettingsPath of the profiles' ImagePullTimeSaved or "
            "ImageCacheWait args, sharing their lookups; none: catalogue images only).",
        ),
        click.option(
            "--prepull-priority-class",
            default="kubesched-prepull",
            show_default=True,
            help="PriorityClass of puller pods (created with value -1000000 when missing; '' for none).",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def prepull_options(kw: dict[str, Any]) -> PrePullOptions | None:
    """Pop the ``--prepull*`` values out of ``kw``; None without ``--prepull``."""
    enabled = kw.pop("prepull")
    opts = PrePullOptions(
        kw.pop("prepull_namespace"),
        kw.pop("prepull_interval"),
        kw.pop("prepull_max_per_tick"),
        kw.pop("prepull_timeout"),
        kw.pop("prepull_catalogue"),
        kw.pop("prepull_priority_class"),
        kw.pop("prepull_mechanism"),
        kw.pop("prepull_registry_settings"),
    )
    return opts if enabled else None
