"""Resolve a profile's per-extension-point plugin lists (``pkg/scheduler/framework/runtime/framework.go``
``NewFramework``/``expandMultiPointPlugins``).

Input is the profile's ``plugins`` after the config layer merged it with the defaults;
output is, per point, the ordered ``(name, weight)`` list, and the Score weights.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.config.extension_points import EXTENSION_POINT_TABLE
from kubesched.errors import ConfigError
from kubesched.framework.interfaces import EXTENSION_POINTS, Plugin
from kubesched.framework.results import MAX_NODE_SCORE, MAX_TOTAL_SCORE

#: config attribute (snake_case) of each extension point, in upstream order
POINT_ATTRS: dict[str, str] = {p.key: p.attr for p in EXTENSION_POINT_TABLE}


@dataclass
class ResolvedPlugins:
    """Per point (config key such as ``"filter"``) the ordered plugin names; Score weights by name."""

    points: dict[str, list[str]] = field(default_factory=dict)
    weights: dict[str, int] = field(default_factory=dict)
    needed: list[str] = field(default_factory=list)


def _names(entries: Any) -> list[tuple[str, int | None]]:
    return [(e.name, e.weight) for e in (entries or [])]


def resolve_plugins(
    plugins: Any, plugin_class: Callable[[str, str], type[Plugin]], path: str
) -> ResolvedPlugins:
    """Expand multiPoint and validate per-point lists.

    ``plugins`` has attributes ``pre_enqueue`` ... ``post_bind`` and ``multi_point``, each with
    ``enabled``/``disabled`` lists of ``(name, weight)`` entries. ``plugin_class(name, path)``
    returns the class (raising :class:`ConfigError` for unknown names). Raises ConfigError for a
    plugin enabled at a point it does not implement, duplicates, zero or several QueueSort
    plugins, no Bind plugin, and Score weights that could overflow.
    """
    res = ResolvedPlugins()
    mp = plugins.multi_point
    mp_enabled = _names(mp.enabled)
    needed: list[str] = []
    for n, _ in mp_enabled:
        if n not in needed:
            needed.append(n)
    for attr in POINT_ATTRS.values():
        for n, _ in _names(getattr(plugins, attr).enabled):
            if n not in needed:
                needed.append(n)
    classes = {n: plugin_class(n, f"{path}.plugins") for n in needed}
    ifaces = dict(EXTENSION_POINTS)
    for point, attr in POINT_ATTRS.items():
        pset = getattr(plugins, attr)
        iface = ifaces[point]
        explicit: list[str] = []
        for i, (n, _) in enumerate(_names(pset.enabled)):
            if not issubclass(classes[n], iface):
                raise ConfigError(
                    f"{path}.plugins.{point}.enabled[{i}]", f'plugin "{n}" does not extend {point} plugin'
                )
            if n in explicit:
                raise ConfigError(
                    f"{path}.plugins.{point}.enabled[{i}]", f'plugin "{n}" already registered as "{point}"'
                )
            explicit.append(n)
        disabled = {d.name for d in pset.disabled or []}
        overrides: list[str] = []
        mp_only: list[str] = []
        if "*" not in disabled:
            for n, _ in mp_enabled:
                if not issubclass(classes[n], iface) or n in disabled:
                    continue
                if n in explicit:
                    overrides.append(n)
                elif n not in mp_only:
                    mp_only.append(n)
        ordered = (
            [n for n in explicit if n in overrides] + mp_only + [n for n in explicit if n not in overrides]
        )
        res.points[point] = ordered
    if len(res.points["queueSort"]) != 1:
        raise ConfigError(
            f"{path}.plugins.queueSort",
            f"only one queue sort plugin can be enabled, got {len(res.points['queueSort'])}"
            if res.points["queueSort"]
            else "queue sort plugin needed",
        )
    if not res.points["bind"]:
        raise ConfigError(f"{path}.plugins.bind", "at least one bind plugin is needed")
    weights: dict[str, int] = {}
    for n, w in _names(plugins.score.enabled) + mp_enabled:
        if n in res.points["score"] and n not in weights:
            weights[n] = w or 1
    for n in res.points["score"]:
        weights.setdefault(n, 1)
    total = 0
    for n in res.points["score"]:
        total += weights[n] * MAX_NODE_SCORE
        if total > MAX_TOTAL_SCORE:
            raise ConfigError(f"{path}.plugins.score", "total score of Score plugins could overflow")
    res.weights = weights
    res.needed = [n for n in needed if any(n in lst for lst in res.points.values())]
    return res
