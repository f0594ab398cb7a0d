"""kubesched's in-tree plugins: one package per plugin, named as upstream's package
(``pkg/scheduler/framework/plugins/<package>``), and :mod:`kubesched.plugins.helper` for what
several plugins share. Plugin packages never import each other (``lint-imports``).

``IN_TREE`` maps each upstream plugin name to ``"module:Class"``; modules are imported
lazily so that a profile only loads what it uses. Third-party plugins are found through
the entry-point group ``kubesched.plugins`` (see :mod:`kubesched.framework.registry`).
"""

from __future__ import annotations

from kubesched.framework.registry import Registry

IN_TREE: dict[str, str] = {
    "PrioritySort": "kubesched.plugins.queuesort.priority_sort:PrioritySort",
    "SchedulingGates": "kubesched.plugins.schedulinggates.scheduling_gates:SchedulingGates",
    "NodeUnschedulable": "kubesched.plugins.nodeunschedulable.node_unschedulable:NodeUnschedulable",
    "NodeName": "kubesched.plugins.nodename.node_name:NodeName",
    "TaintToleration": "kubesched.plugins.tainttoleration.taint_toleration:TaintToleration",
    "NodeAffinity": "kubesched.plugins.nodeaffinity.node_affinity:NodeAffinity",
    "NodePorts": "kubesched.plugins.nodeports.node_ports:NodePorts",
    "NodeResourcesFit": "kubesched.plugins.noderesources.fit:NodeResourcesFit",
    "NodeResourcesBalancedAllocation": "kubesched.plugins.noderesources.balanced_allocation:NodeResourcesBalancedAllocation",
    "ImageLocality": "kubesched.plugins.imagelocality.image_locality:ImageLocality",
    "DefaultBinder": "kubesched.plugins.defaultbinder.default_binder:DefaultBinder",
    "PodTopologySpread": "kubesched.plugins.podtopologyspread.plugin:PodTopologySpread",
    "InterPodAffinity": "kubesched.plugins.interpodaffinity.plugin:InterPodAffinity",
    "VolumeBinding": "kubesched.plugins.volumebinding.volume_binding:VolumeBinding",
    "VolumeRestrictions": "kubesched.plugins.volumerestrictions.volume_restrictions:VolumeRestrictions",
    "VolumeZone": "kubesched.plugins.volumezone.volume_zone:VolumeZone",
    "NodeVolumeLimits": "kubesched.plugins.nodevolumelimits.csi:NodeVolumeLimits",
    "DefaultPreemption": "kubesched.plugins.defaultpreemption.default_preemption:DefaultPreemption",
    "DynamicResources": "kubesched.plugins.dynamicresources.dynamic_resources:DynamicResources",
    "ImagePullTimeSaved": "kubesched.plugins.imagepulltimesaved.image_pull_time_saved:ImagePullTimeSaved",
    "ImageCacheWait": "kubesched.plugins.imagecachewait.image_cache_wait:ImageCacheWait",
}


def in_tree_registry() -> Registry:
    """A registry of the in-tree plugins plus those installed through the ``kubesched.plugins`` entry points."""
    return Registry(IN_TREE)
