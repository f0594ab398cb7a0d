"""kubesched's in-tree plugins, one module per plugin named after it.

``IN_TREE`` maps each upstream plugin name to ``"module:Class"``; modules are imported
lazily so that a profile only loads what it uses. Third-party plugins are found through
the entry-point group ``kubesched.plugins`` (see :mod:`kubesched.framework.registry`).
"""

from __future__ import annotations

from kubesched.framework.registry import Registry

IN_TREE: dict[str, str] = {
    "PrioritySort": "kubesched.plugins.priority_sort:PrioritySort",
    "SchedulingGates": "kubesched.plugins.scheduling_gates:SchedulingGates",
    "NodeUnschedulable": "kubesched.plugins.node_unschedulable:NodeUnschedulable",
    "NodeName": "kubesched.plugins.node_name:NodeName",
    "TaintToleration": "kubesched.plugins.taint_toleration:TaintToleration",
    "NodeAffinity": "kubesched.plugins.node_affinity:NodeAffinity",
    "NodePorts": "kubesched.plugins.node_ports:NodePorts",
    "NodeResourcesFit": "kubesched.plugins.node_resources_fit:NodeResourcesFit",
    "NodeResourcesBalancedAllocation": "kubesched.plugins.node_resources_balanced_allocation:NodeResourcesBalancedAllocation",
    "ImageLocality": "kubesched.plugins.image_locality:ImageLocality",
    "DefaultBinder": "kubesched.plugins.default_binder:DefaultBinder",
    "PodTopologySpread": "kubesched.plugins.pod_topology_spread:PodTopologySpread",
    "InterPodAffinity": "kubesched.plugins.inter_pod_affinity:InterPodAffinity",
    "VolumeBinding": "kubesched.plugins.volume_binding:VolumeBinding",
    "VolumeRestrictions": "kubesched.plugins.volume_restrictions:VolumeRestrictions",
    "VolumeZone": "kubesched.plugins.volume_zone:VolumeZone",
    "NodeVolumeLimits": "kubesched.plugins.node_volume_limits:NodeVolumeLimits",
    "DefaultPreemption": "kubesched.plugins.default_preemption:DefaultPreemption",
    "DynamicResources": "kubesched.plugins.dynamic_resources:DynamicResources",
    "ImagePullTimeSaved": "kubesched.plugins.image_pull_time_saved:ImagePullTimeSaved",
    "ImageCacheWait": "kubesched.plugins.image_cache_wait:ImageCacheWait",
}


def in_tree_registry() -> Registry:
    """A registry of the in-tree plugins plus those installed through the ``kubesched.plugins`` entry points."""
    return Registry(IN_TREE)
