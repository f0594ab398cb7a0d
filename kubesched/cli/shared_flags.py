"""Flags that several commands take with one meaning. Each flag's name, destination, value type,
bounds and default are defined once here and every command that takes it uses the decorator;
where a command words the help for its own use it passes ``help``, the value means the same
everywhere (``load --arrival-scale`` is ``replay --arrival-scale``, ``load --speed`` is
``serve --speed``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from kubesched.cli.units import FiniteFloat

__all__ = [
    "arrival_scale_flag",
    "context_flag",
    "kube_api_burst_flag",
    "kube_api_qps_flag",
    "max_pods_flag",
    "no_html_flag",
    "speed_flag",
    "trace_flag",
    "trace_window_flag",
]

F = TypeVar("F", bound=Callable[..., Any])


def context_flag(help: str = "Kubeconfig context (default: the current one).") -> Callable[[F], F]:
    """``--context NAME`` (``context``): the kubeconfig context to use; None for its current one."""
    return click.option("--context", default=None, help=help)


def kube_api_qps_flag(default: float | None, help: str) -> Callable[[F], F]:
    """``--kube-api-qps`` (``kube_api_qps``): client-side QPS towards the API server, as
    kube-scheduler's flag (requests per second; ``default`` shown when not None)."""
    return click.option(
        "--kube-api-qps",
        type=FiniteFloat(max=1e6),
        default=default,
        show_default=None if default is None else True,
        help=help,
    )


def kube_api_burst_flag(default: int | None, help: str) -> Callable[[F], F]:
    """``--kube-api-burst`` (``kube_api_burst``): the client's burst above ``--kube-api-qps``, as
    kube-scheduler's flag (requests; ``default`` shown when not None)."""
    return click.option(
        "--kube-api-burst",
        type=int,
        default=default,
        show_default=None if default is None else True,
        help=help,
    )


def speed_flag(help: str, name: str = "--speed") -> Callable[[F], F]:
    """``--speed`` (or ``name``): cluster (or trace) seconds per wall second, in (0, 10000],
    default 1."""
    return click.option(
        name,
        type=FiniteFloat(min=0, min_open=True, max=10000),
        default=1.0,
        show_default=True,
        help=help,
    )


def trace_flag(help: str) -> Callable[[F], F]:
    """``--trace PATH`` (``trace_path``, required): a trace as ``kubesched.trace.load`` reads it."""
    return click.option("--trace", "trace_path", required=True, type=click.Path(exists=True), help=help)


def trace_window_flag(help: str) -> Callable[[F], F]:
    """``--trace-window`` (``window``): the openb window (``all``, ``30d``, ``12h``, ``START:END``)."""
    return click.option("--trace-window", "window", default=None, help=help)


def max_pods_flag(help: str) -> Callable[[F], F]:
    """``--max-pods N`` (``max_pods``, at least 1): only the first N pods of the trace by arrival."""
    return click.option("--max-pods", type=click.IntRange(min=1), default=None, help=help)


def arrival_scale_flag(help: str) -> Callable[[F], F]:
    """``--arrival-scale`` (``arrival_scale``): factor on every arrival time, in (0, 1e6], default 1
    (``Workload.with_arrival_scale``)."""
    return click.option(
        "--arrival-scale",
        type=FiniteFloat(min=0, min_open=True, max=1e6),
        default=1.0,
        show_default=True,
        help=help,
    )


def no_html_flag() -> Callable[[F], F]:
    """``--no-html`` (``no_html``): write the report without report.html."""
    return click.option("--no-html", is_flag=True, help="Skip report.html.")
