"""Default profile and plugin-set merge rules (upstream default_plugins.go)."""

from __future__ import annotations

from kubesched.config import (
    DEFAULT_MULTI_POINT,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    Plugin,
    Plugins,
    PluginSet,
    apply_defaults,
    default_config,
    default_plugins,
    merge_plugin_set,
    merge_plugins,
)
from kubesched.config.types import EXTENSION_POINTS

DEFAULT_ORDER = [
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
]


def _pairs(ps: PluginSet) -> list[tuple[str, int | None]]:
    return [(p.name, p.weight) for p in ps.enabled]


def test_default_multi_point_list() -> None:
    assert list(DEFAULT_MULTI_POINT) == DEFAULT_ORDER
    plugins = default_plugins()
    assert _pairs(plugins.multi_point) == DEFAULT_ORDER
    assert plugins.multi_point.disabled == []
    for point in EXTENSION_POINTS:
        if point != "multi_point":
            assert plugins.point(point) == PluginSet()


def test_default_plugins_returns_fresh_copies() -> None:
    a = default_plugins()
    a.multi_point.enabled.clear()
    assert len(default_plugins().multi_point.enabled) == 19


def test_default_config_has_one_default_profile() -> None:
    c = default_config()
    assert len(c.profiles) == 1
    prof = c.profiles[0]
    assert prof.scheduler_name == "default-scheduler"
    assert prof.percentage_of_nodes_to_score is None
    assert prof.plugin_config == []
    assert prof.plugins == default_plugins()
    assert c.profile("default-scheduler") is prof


def test_single_unnamed_profile_gets_default_name_but_not_multiple() -> None:
    one = apply_defaults(KubeSchedulerConfiguration(profiles=[KubeSchedulerProfile()]))
    assert one.profiles[0].scheduler_name == "default-scheduler"
    two = apply_defaults(
        KubeSchedulerConfiguration(profiles=[KubeSchedulerProfile(), KubeSchedulerProfile()])
    )
    assert [p.scheduler_name for p in two.profiles] == [None, None]
    named = apply_defaults(KubeSchedulerConfiguration(profiles=[KubeSchedulerProfile(scheduler_name="x")]))
    assert named.profiles[0].scheduler_name == "x"


def test_merge_replaces_weight_in_place() -> None:
    custom = PluginSet(
        enabled=[Plugin(name="ImageLocality", weight=5), Plugin(name="TaintToleration", weight=1)]
    )
    merged = merge_plugin_set(default_plugins().multi_point, custom)
    expected = [
        (n, 5 if n == "ImageLocality" else 1 if n == "TaintToleration" else w) for n, w in DEFAULT_ORDER
    ]
    assert _pairs(merged) == expected


def test_merge_disable_by_name_and_append() -> None:
    custom = PluginSet(
        enabled=[Plugin(name="NodeNumber", weight=2), Plugin(name="Other")],
        disabled=[Plugin(name="NodePorts"), Plugin(name="ImageLocality")],
    )
    merged = merge_plugin_set(default_plugins().multi_point, custom)
    expected = [p for p in DEFAULT_ORDER if p[0] not in ("NodePorts", "ImageLocality")]
    assert _pairs(merged) == expected + [("NodeNumber", 2), ("Other", None)]
    assert [p.name for p in merged.disabled] == ["NodePorts", "ImageLocality"]


def test_merge_disable_star_keeps_only_custom() -> None:
    custom = PluginSet(
        enabled=[Plugin(name="PrioritySort"), Plugin(name="DefaultBinder")], disabled=[Plugin(name="*")]
    )
    merged = merge_plugin_set(default_plugins().multi_point, custom)
    assert _pairs(merged) == [("PrioritySort", None), ("DefaultBinder", None)]
    assert [p.name for p in merged.disabled] == ["*"]


def test_merge_disabled_then_reenabled_moves_to_end() -> None:
    custom = PluginSet(enabled=[Plugin(name="NodePorts")], disabled=[Plugin(name="NodePorts")])
    merged = merge_plugin_set(default_plugins().multi_point, custom)
    assert merged.enabled_names()[-1] == "NodePorts"
    assert merged.enabled_names().count("NodePorts") == 1


def test_merge_duplicate_custom_entries_kept() -> None:
    custom = PluginSet(
        enabled=[Plugin(name="ImageLocality", weight=4), Plugin(name="ImageLocality", weight=6)]
    )
    merged = merge_plugin_set(default_plugins().multi_point, custom)
    names = merged.enabled_names()
    # the last duplicate replaces in place, the first one is appended (the framework rejects it)
    assert merged.enabled[names.index("ImageLocality")].weight == 6
    assert (merged.enabled[-1].name, merged.enabled[-1].weight) == ("ImageLocality", 4)


def test_merge_default_disabled_are_preserved() -> None:
    default = PluginSet(enabled=[Plugin(name="A"), Plugin(name="B")], disabled=[Plugin(name="B")])
    merged = merge_plugin_set(default, PluginSet(disabled=[Plugin(name="C")]))
    assert merged.enabled_names() == ["A"]
    assert [p.name for p in merged.disabled] == ["C", "B"]


def test_merge_plugins_other_points_keep_custom() -> None:
    custom = Plugins(
        score=PluginSet(enabled=[Plugin(name="NodeResourcesFit", weight=10)], disabled=[Plugin(name="*")]),
        filter=PluginSet(disabled=[Plugin(name="NodePorts")]),
    )
    merged = merge_plugins(default_plugins(), custom)
    assert _pairs(merged.multi_point) == DEFAULT_ORDER
    assert _pairs(merged.score) == [("NodeResourcesFit", 10)]
    assert [p.name for p in merged.score.disabled] == ["*"]
    assert merged.filter == PluginSet(disabled=[Plugin(name="NodePorts")])
    assert merge_plugins(default_plugins(), None) == default_plugins()


def test_apply_defaults_is_idempotent_and_pure() -> None:
    original = KubeSchedulerConfiguration(
        profiles=[
            KubeSchedulerProfile(
                plugins=Plugins(
                    multi_point=PluginSet(
                        enabled=[Plugin(name="X", weight=3)], disabled=[Plugin(name="NodePorts")]
                    )
                )
            )
        ]
    )
    once = apply_defaults(original)
    assert original.profiles[0].scheduler_name is None
    assert original.profiles[0].plugins is not None
    assert original.profiles[0].plugins.multi_point.enabled_names() == ["X"]
    assert apply_defaults(once) == once
