"""Profile defaults of ``KubeSchedulerConfiguration`` v1.

Source: ``pkg/scheduler/apis/config/v1/default_plugins.go`` (``getDefaultPlugins``,
``mergePlugins``, ``mergePluginSet``) and ``defaults.go`` (``SetDefaults_KubeSchedulerConfiguration``).

The default profile enables every in-tree plugin through ``multiPoint`` only; the framework expands
``multiPoint`` to the individual extension points (``pkg/scheduler/framework/runtime/framework.go``
``NewFramework``), so after :func:`apply_defaults` the
other points hold only what the user wrote.

Not done here: upstream also appends default ``pluginConfig`` entries for enabled plugins that have
an args type. In kubesched the args types live in the plugin modules, so a plugin whose profile has no
``pluginConfig`` entry gets its defaults from ``decode_args(args_type, None, path)`` instead.
"""

from __future__ import annotations

from typing import Final

from kubesched.config.types import (
    EXTENSION_POINTS,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    Plugin,
    Plugins,
    PluginSet,
)

DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"

DEFAULT_MULTI_POINT: Final[tuple[tuple[str, int | None], ...]] = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", None),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
)
"""``(name, weight)`` of the default ``multiPoint.enabled`` list, in upstream order (v1.34+, DRA on).
``None`` = weight unset (the framework treats it as 1 for Score plugins)."""


def default_plugins() -> Plugins:
    """A fresh :class:`Plugins` equal to upstream's ``getDefaultPlugins()``: only ``multiPoint``
    is populated (:data:`DEFAULT_MULTI_POINT`), every other point is empty."""
    return Plugins(multi_point=PluginSet(enabled=[Plugin(name=n, weight=w) for n, w in DEFAULT_MULTI_POINT]))


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """Merge a user's plugin set for one point into the default set (upstream ``mergePluginSet``).

    * ``disabled`` = custom disabled entries then default disabled entries (names only; kept so the
      framework's multiPoint expansion honours them).
    * Unless ``*`` is disabled, the default enabled plugins not disabled by name are kept in order,
      each replaced in place by a custom enabled entry of the same name (e.g. to change its weight).
    * Custom enabled entries that replaced nothing are appended in their order (duplicates kept:
      the framework rejects them).
    """
    disabled = [Plugin(name=p.name) for p in custom.disabled] + [
        Plugin(name=p.name) for p in default.disabled
    ]
    disabled_names = {p.name for p in disabled}
    custom_by_name: dict[str, tuple[int, Plugin]] = {}
    for index, plugin in enumerate(custom.enabled):
        custom_by_name[plugin.name] = (index, plugin)
    replaced: set[int] = set()
    enabled: list[Plugin] = []
    if "*" not in disabled_names:
        for plugin in default.enabled:
            if plugin.name in disabled_names:
                continue
            if plugin.name in custom_by_name:
                index, replacement = custom_by_name[plugin.name]
                replaced.add(index)
                plugin = replacement
            enabled.append(plugin.model_copy(deep=True))
    for index, plugin in enumerate(custom.enabled):
        if index not in replaced:
            enabled.append(plugin.model_copy(deep=True))
    return PluginSet(enabled=enabled, disabled=disabled)


def merge_plugins(default: Plugins, custom: Plugins | None) -> Plugins:
    """Merge every point of ``custom`` into ``default`` (upstream ``mergePlugins``); ``None`` -> a copy
    of ``default``."""
    if custom is None:
        return default.model_copy(deep=True)
    merged = {
        point: merge_plugin_set(default.point(point), custom.point(point)) for point in EXTENSION_POINTS
    }
    return Plugins(**merged)


def default_profile(scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> KubeSchedulerProfile:
    """The upstream default profile (``pkg/scheduler/apis/config/v1/default_plugins.go``) under
    ``scheduler_name``."""
    return KubeSchedulerProfile(scheduler_name=scheduler_name, plugins=default_plugins())


def apply_defaults(config: KubeSchedulerConfiguration) -> KubeSchedulerConfiguration:
    """Return a copy of ``config`` with the profile defaults applied (``SetDefaults_KubeSchedulerConfiguration``):

    * no profiles -> one profile;
    * a single profile without ``schedulerName`` -> ``default-scheduler``;
    * each profile's ``plugins`` = :func:`merge_plugins` of :func:`default_plugins` and the user's.

    Idempotent: applying it to its own output changes nothing. Scalar field defaults are already
    applied by the models (:mod:`kubesched.config.types`).
    """
    out = config.model_copy(deep=True)
    if not out.profiles:
        out.profiles = [KubeSchedulerProfile()]
    if len(out.profiles) == 1 and out.profiles[0].scheduler_name is None:
        out.profiles[0].scheduler_name = DEFAULT_SCHEDULER_NAME
    for prof in out.profiles:
        prof.plugins = merge_plugins(default_plugins(), prof.plugins)
    return out
