"""Timing of extension points and plugins, attached to a framework only when metrics are on
(spec §12; upstream ``frameworkImpl.Run*Plugins`` defers and ``runXPlugin`` sampling).

Nothing here touches the un-instrumented hot path: :func:`instrument_framework` and
:func:`instrument_placement` replace methods **on the instances** with timed wrappers, so a
scheduler built without metrics runs the plain methods.

What is recorded:

* ``framework_extension_point_duration_seconds{extension_point, status, profile}`` around every
  ``run_*`` of the framework (PreFilter, PostFilter, PreScore, Score, Reserve, Unreserve, Permit,
  PreBindPreFlight, PreBind, Bind, PostBind) with the returned status code (no status = Success,
  an exception = Error), and ``Filter`` once per cycle around the whole node search.
* ``plugin_execution_duration_seconds{plugin, extension_point, status}`` for each plugin call,
  only in cycles whose ``CycleState.record_plugin_metrics`` is set (10% sampling by the scheduler).
* ``plugin_evaluation_total{plugin, extension_point, profile}``: PreFilter/PreScore per plugin
  run, Filter per plugin and node evaluated, Score per non-skipped plugin and cycle.

With metrics on, the vectorised filter path is turned off for the instrumented framework so that
Filter evaluations are counted per node exactly as upstream (the per-node path chooses the same
nodes; it is slower on large clusters).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from kubesched.metrics.definitions import (
    EXTENSION_POINT_DURATION,
    PLUGIN_EVALUATION_TOTAL,
    PLUGIN_EXECUTION_DURATION,
)
from kubesched.metrics.recorder import SchedulerMetrics

StatusOf = Callable[[Any], Any]


def _self(r: Any) -> Any:
    return r


def _first(r: Any) -> Any:
    return r[0] if isinstance(r, tuple) else None


def _second(r: Any) -> Any:
    return r[1] if isinstance(r, tuple) else None


def _none(r: Any) -> Any:
    return None


def code_label(status: Any) -> str:
    """Upstream ``Status.Code().String()``: ``Success`` for no status."""
    return "Success" if status is None else str(status.code)


#: framework method -> (extension point label, how to find the status in its return value)
FRAMEWORK_POINTS: tuple[tuple[str, str, StatusOf], ...] = (
    ("run_pre_filter_plugins", "PreFilter", _second),
    ("run_post_filter_plugins", "PostFilter", _second),
    ("run_pre_score_plugins", "PreScore", _self),
    ("run_score_plugins", "Score", _second),
    ("run_reserve_plugins_reserve", "Reserve", _self),
    ("run_reserve_plugins_unreserve", "Unreserve", _none),
    ("run_permit_plugins", "Permit", _self),
    ("run_pre_bind_pre_flights", "PreBindPreFlight", _self),
    ("run_pre_bind_plugins", "PreBind", _self),
    ("run_bind_plugins", "Bind", _self),
    ("run_post_bind_plugins", "PostBind", _none),
)

#: (framework plugin list, plugin method, extension point label, status finder, count evaluations per call)
PLUGIN_POINTS: tuple[tuple[str, str, str, StatusOf, bool], ...] = (
    ("pre_filter_plugins", "pre_filter", "PreFilter", _second, True),
    ("filter_plugins", "filter", "Filter", _self, True),
    ("post_filter_plugins", "post_filter", "PostFilter", _second, False),
    ("pre_score_plugins", "pre_score", "PreScore", _self, True),
    ("score_plugins", "score", "Score", _second, False),
    ("reserve_plugins", "reserve", "Reserve", _self, False),
    ("reserve_plugins", "unreserve", "Unreserve", _none, False),
    ("permit_plugins", "permit", "Permit", _first, False),
    ("pre_bind_plugins", "pre_bind_pre_flight", "PreBindPreFlight", _self, False),
    ("pre_bind_plugins", "pre_bind", "PreBind", _self, False),
    ("bind_plugins", "bind", "Bind", _self, False),
    ("post_bind_plugins", "post_bind", "PostBind", _none, False),
)


def _timed_point(fn: Callable[..., Any], metrics: SchedulerMetrics, point: str, profile: str,
                 status_of: StatusOf) -> Callable[..., Any]:
    hist = metrics._collectors[EXTENSION_POINT_DURATION]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kw: Any) -> Any:
        t0 = time.perf_counter()
        code = "Error"
        try:
            r = fn(*args, **kw)
            code = code_label(status_of(r))
            return r
        finally:
            hist.labels(point, code, profile).observe(time.perf_counter() - t0)

    return wrapper


def _timed_plugin(fn: Callable[..., Any], metrics: SchedulerMetrics, plugin: str, point: str, profile: str,
                  status_of: StatusOf, count: bool) -> Callable[..., Any]:
    hist = metrics._collectors[PLUGIN_EXECUTION_DURATION]
    evals = metrics.child(PLUGIN_EVALUATION_TOTAL, {"plugin": plugin, "extension_point": point,
                                                    "profile": profile}) if count else None

    @functools.wraps(fn)
    def wrapper(state: Any, *args: Any, **kw: Any) -> Any:
        if evals is not None:
            evals.inc()
        if not getattr(state, "record_plugin_metrics", False):
            return fn(state, *args, **kw)
        t0 = time.perf_counter()
        code = "Error"
        try:
            r = fn(state, *args, **kw)
            code = code_label(status_of(r))
            return r
        finally:
            hist.labels(plugin, point, code).observe(time.perf_counter() - t0)

    return wrapper


def instrument_framework(fwk: Any, metrics: SchedulerMetrics) -> None:
    """Attach extension-point and plugin timing to one profile's framework (module docstring)."""
    profile = fwk.profile_name
    for method, point, status_of in FRAMEWORK_POINTS:
        fn = getattr(fwk, method, None)
        if fn is not None:
            setattr(fwk, method, _timed_point(fn, metrics, point, profile, status_of))
    for list_attr, method, point, status_of, count in PLUGIN_POINTS:
        for pl in getattr(fwk, list_attr, ()):
            fn = getattr(pl, method, None)
            if fn is None:
                continue
            try:
                setattr(pl, method, _timed_plugin(fn, metrics, pl.NAME, point, profile, status_of, count))
            except AttributeError:  # a plugin with __slots__ and no __dict__ stays untimed
                pass
    score_run = fwk.run_score_plugins
    score_evals = {pl.NAME: metrics.child(PLUGIN_EVALUATION_TOTAL, {"plugin": pl.NAME, "extension_point": "Score",
                                                                    "profile": profile})
                   for pl in fwk.score_plugins}

    @functools.wraps(score_run)
    def run_score_plugins(state: Any, *args: Any, **kw: Any) -> Any:
        skip = state.skip_score_plugins
        for name, c in score_evals.items():
            if name not in skip:
                c.inc()
        return score_run(state, *args, **kw)

    fwk.run_score_plugins = run_score_plugins
    # per-node Filter path only, so that Filter evaluations are counted per node
    fwk.run_filter_plugins_batch = _no_batch


def _no_batch(*args: Any, **kw: Any) -> None:
    return None


def instrument_placement(placement: Any, metrics: SchedulerMetrics) -> None:
    """Time the Filter extension point once per cycle around the node search
    (``findNodesThatPassFilters``' deferred observation): Success, or Error when it raised."""
    find = placement.find_nodes_that_pass_filters
    hist = metrics._collectors[EXTENSION_POINT_DURATION]

    @functools.wraps(find)
    def find_nodes_that_pass_filters(fwk: Any, *args: Any, **kw: Any) -> Any:
        t0 = time.perf_counter()
        code = "Error"
        try:
            r = find(fwk, *args, **kw)
            code = "Success"
            return r
        finally:
            hist.labels("Filter", code, fwk.profile_name).observe(time.perf_counter() - t0)

    placement.find_nodes_that_pass_filters = find_nodes_that_pass_filters
