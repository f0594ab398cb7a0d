"""``FrameworkOptions``: what a profile's :class:`~kubesched.framework.runtime.Framework` is built
with besides its profile and plugin registry (upstream ``pkg/scheduler/framework/runtime/
framework.go``: the ``frameworkOptions`` set by ``WithClientSet``, ``WithEventRecorder``,
``WithSnapshotSharedLister``, ``WithParallelism``, ``WithExtenders``, ``WithMetricsRecorder``,
``WithPodNominator``, ``WithWaitingPods`` ...).

Every field has the value of a framework outside a scheduler (a plugin test): no clock (plugins
read wall time), no client, no informer objects, no events, no extenders, no metrics.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.clock import Clock
    from kubesched.framework.handle import EventRecorder, Nominator, ObjectLister, PluginClient
    from kubesched.framework.metrics_sink import MetricsSink
    from kubesched.framework.node_info import NodeInfo
    from kubesched.framework.preemption import PreemptionExtender
    from kubesched.framework.snapshot import Snapshot

__all__ = ["NO_OBJECTS", "FrameworkOptions", "NoObjects"]


class NoObjects:
    """The :class:`~kubesched.framework.handle.ObjectLister` of a framework without informers:
    every kind is empty, every namespace unlabelled."""

    def list(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]:
        """No object of any kind."""
        return []

    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        """No object: None."""
        return None

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        """No labels."""
        return {}


NO_OBJECTS = NoObjects()
"""The shared empty object lister."""


@dataclass(frozen=True)
class FrameworkOptions:
    """The inputs of one profile's framework (all optional; see the module docstring).

    ``profile_path`` prefixes configuration errors (``profiles[1].pluginConfig``);
    ``snapshot_provider`` returns the current cycle's snapshot (default: an empty one);
    ``node_info_provider(name)`` the scheduler cache's live NodeInfo (default: the snapshot's);
    ``rng`` defaults to ``random.Random(0)``; ``metrics`` is both the plugins' ``handle.metrics``
    and the runtime's own sink (None: nothing recorded); ``percentage_of_nodes_to_score`` is the
    configuration-wide value (the profile's own wins); ``ignored_resources`` replace
    NodeResourcesFit's ``ignoredResources`` (the extenders' managed resources, upstream
    ``buildExtenders``); ``permit_wait_timeout`` (seconds) caps every Permit wait below upstream's
    15 minutes; ``skip_unavailable`` drops plugins the registry lacks from the profile (the
    default profile only), reporting their names to ``on_skipped``; ``feature_gates`` maps every
    known feature gate to its value (None: ``kubesched.config.feature_gates``' v1.35 defaults).
    """

    profile_path: str = "profiles[0]"
    snapshot_provider: Callable[[], Snapshot] | None = None
    node_info_provider: Callable[[str], NodeInfo | None] | None = None
    clock: Clock | None = None
    rng: random.Random | None = None
    client: PluginClient | None = None
    objects: ObjectLister = NO_OBJECTS
    event_recorder: EventRecorder | None = None
    nominator: Nominator | None = None
    extenders: Sequence[PreemptionExtender] = field(default_factory=tuple)
    metrics: MetricsSink | None = None
    parallelism: int = 16
    percentage_of_nodes_to_score: int | None = None
    ignored_resources: Sequence[str] = ()
    permit_wait_timeout: float | None = None
    skip_unavailable: bool = False
    on_skipped: Callable[[list[str]], None] | None = None
    feature_gates: Mapping[str, bool] | None = None
