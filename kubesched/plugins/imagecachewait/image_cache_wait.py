"""ImageCacheWait: a Permit plugin that briefly holds a pod whose image would have to be pulled on
the chosen node when a node that already holds the image is about to have room for it.

A kubesched plugin (no upstream equivalent; Permit semantics follow
``pkg/scheduler/framework/runtime/framework.go`` and upstream
``pkg/scheduler/framework/runtime/framework.go`` ``RunPermitPlugins``: a Wait is capped at 15 min).

Model (times in seconds, bytes compressed; layer knowledge as in
:mod:`kubesched.images.layer_index`)::

    pull(n)   = 0 when every layer of the pod is listed in n's status, else the pull model
                (:mod:`kubesched.images.pull_model`) over what n still has to pull for the pod:
                (missing bytes + in-flight bytes) / bandwidth(n)
                + layerLatencySeconds * (missing layers + in-flight layers)
                + pullFixedSeconds * (the pod's images n does not list + images in flight)
                # the pod's layers neither on n nor coming, plus every layer n is still pulling
                # for its other pods (serialized image pulls: a new pull queues behind them, and
                # layers the pod shares with them arrive only when those pulls finish)
    free_at(c)= earliest expected end time E of a pod on c such that, with every pod of c expected
                to end by E removed, the pod passes the profile's Filter plugins on c
    gain(c)   = pull(chosen) - (free_at(c) - now + requeueGraceSeconds + pull(c))

The plugin holds the pod when some other node ``c`` has ``pull(c) < pull(chosen)``, a known
``free_at(c)``, and ``gain(c) >= minGainSeconds``; it picks the ``c`` with the largest gain. The
Wait timeout is

    hold = min(free_at(c) - now + requeueGraceSeconds, maxWaitSeconds, pull(chosen) - pull(c), 900)

so it **never holds longer than the pull it saves** (``pull(chosen) - pull(c)``) nor longer than
its args or upstream's 15-minute cap. When the hold times out the framework rejects the pod
(``rejected due to timeout after waiting ...``); it is requeued (the plugin registers for assigned
pod deletions, which is what frees ``c``) and scheduled again, now with ``c`` free and its image
cached, which :class:`~kubesched.plugins.imagepulltimesaved.image_pull_time_saved.ImagePullTimeSaved` favours. A pod
is held at most once (its UID is remembered), so the worst case is one wasted hold bounded as above.

Expected end of a running pod, in order: annotation ``kubesched.io/expected-end-time`` (RFC 3339,
same clock as the scheduler), else ``status.startTime + spec.activeDeadlineSeconds``. Pods with
neither never count as freeing up: without such hints the plugin never holds anything.

Pull time below ``minPullSeconds`` on the chosen node: no hold (Success at once).
"""

from __future__ import annotations

import time
from dataclasses import dataclass as std_dataclass
from typing import TYPE_CHECKING, Final

from pydantic import Field
from pydantic.dataclasses import dataclass

from kubesched.api.pod import Pod
from kubesched.api.timestamps import parse_time
from kubesched.config.args import ARGS_CONFIG
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.interfaces import EnqueueExtensions, PermitPlugin
from kubesched.framework.node_info import NodeInfo, PodInfo
from kubesched.framework.status import Code, Status
from kubesched.images.layer_index import BANDWIDTH_KEY, ImageLayerIndex
from kubesched.images.pull_model import (
    DEFAULT_LAYER_SECONDS,
    DEFAULT_PULL_BYTES_PER_SECOND,
    DEFAULT_PULL_FIXED_SECONDS,
)
from kubesched.images.registry_layers import shared_registry_source

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle

NAME: Final = "ImageCacheWait"
#: pod annotation: expected end of the pod's run (RFC 3339)
EXPECTED_END_ANNOTATION: Final = "kubesched.io/expected-end-time"
#: upstream ``maxTimeout`` of a Permit wait (seconds)
MAX_PERMIT_WAIT: Final = 900.0
_PRUNE_AT: Final = 4096


@dataclass(config=ARGS_CONFIG)
class ImageCacheWaitArgs:
    """Args of :class:`ImageCacheWait` (YAML keys in camelCase).

    * ``max_wait_seconds``: longest hold, like ``permitWaitTimeout``; default 60 (capped at 900).
    * ``min_pull_seconds``: holds are considered only when the chosen node's pull takes at least
      this long; default 20.
    * ``min_gain_seconds``: a hold must be expected to save at least this much start-up time; default 10.
    * ``requeue_grace_seconds``: added to the expected free time to cover the requeue and the next
      scheduling cycle (initial backoff 1 s); default 2.
    * ``catalogue_path``, ``default_bandwidth_bytes_per_second``, ``bandwidth_key``,
      ``pull_fixed_seconds``, ``layer_latency_seconds``, ``registry_settings_path``: as for
      ImagePullTimeSaved (defaults: shipped catalogue, 45e6 B/s,
      ``kubesched.io/image-pull-bytes-per-second``, 1.0 s per pull, 0.037 s per layer, no
      registry lookups).
    """

    max_wait_seconds: float = Field(default=60.0, ge=0)
    min_pull_seconds: float = Field(default=20.0, ge=0)
    min_gain_seconds: float = Field(default=10.0, ge=0)
    requeue_grace_seconds: float = Field(default=2.0, ge=0)
    catalogue_path: str | None = None
    default_bandwidth_bytes_per_second: float = Field(default=DEFAULT_PULL_BYTES_PER_SECOND, gt=0)
    bandwidth_key: str = BANDWIDTH_KEY
    pull_fixed_seconds: float = Field(default=DEFAULT_PULL_FIXED_SECONDS, ge=0)
    layer_latency_seconds: float = Field(default=DEFAULT_LAYER_SECONDS, ge=0)
    registry_settings_path: str | None = None


@std_dataclass(frozen=True, slots=True)
class HoldDecision:
    """Outcome of :meth:`ImageCacheWait.decide`: ``node`` to wait for ("" = no hold), ``hold``
    seconds, ``pull_chosen`` / ``pull_target`` (s), ``free_in`` (s until the target has room) and
    ``gain`` (expected start-up seconds saved)."""

    node: str
    hold: float
    pull_chosen: float
    pull_target: float = 0.0
    free_in: float = 0.0
    gain: float = 0.0


def expected_end(pod: Pod) -> float | None:
    """Expected end (epoch seconds) of a running pod: annotation ``kubesched.io/expected-end-time``,
    else ``status.startTime + spec.activeDeadlineSeconds``; None when unknown or unparsable."""
    raw = pod.annotations.get(EXPECTED_END_ANNOTATION)
    if raw:
        try:
            return parse_time(str(raw))
        except ValueError:
            return None
    ads = (pod.raw.get("spec") or {}).get("activeDeadlineSeconds")
    if pod.start_time is not None and isinstance(ads, int) and not isinstance(ads, bool) and ads > 0:
        return pod.start_time + ads
    return None


def fits_by_resources(pod: Pod, ni: NodeInfo) -> bool:
    """NodeResourcesFit's resource check alone: pod count and every requested resource within
    allocatable (used when the plugin runs without a handle)."""
    if len(ni.pods) + 1 > ni.allocatable.allowed_pod_number:
        return False
    req = ni.requested
    alloc = ni.allocatable
    for name, amount in pod.requests.items():
        if amount > 0 and name != "pods" and req.get(name) + amount > alloc.get(name):
            return False
    return True


class ImageCacheWait(PermitPlugin, EnqueueExtensions):
    """Hold a pod at Permit while a cached node is about to free up (see the module docstring)."""

    NAME = NAME
    Args = ImageCacheWaitArgs

    def __init__(self, args: ImageCacheWaitArgs | None = None, handle: Handle | None = None) -> None:
        super().__init__(args or ImageCacheWaitArgs(), handle)
        a: ImageCacheWaitArgs = self.args
        source = shared_registry_source(a.registry_settings_path) if a.registry_settings_path else None
        self.index = ImageLayerIndex(
            a.catalogue_path, a.bandwidth_key, a.default_bandwidth_bytes_per_second, source=source
        )
        self._held: dict[str, float] = {}
        self._hints: dict[str, tuple[int, bool]] = {}

    def _now(self) -> float:
        clock = self.handle.clock if self.handle is not None else None
        return clock.now() if clock is not None else time.time()

    def _has_hints(self, ni: NodeInfo) -> bool:
        """Some pod on ``ni`` has an expected end (cached per node generation)."""
        cached = self._hints.get(ni.name)
        if cached is not None and cached[0] == ni.generation:
            return cached[1]
        has = any(expected_end(pi.pod) is not None for pi in ni.pods)
        self._hints[ni.name] = (ni.generation, has)
        return has

    def pull_seconds(self, pod: Pod, ni: NodeInfo) -> float:
        """Estimated seconds until the pod's images are on ``ni`` if it were bound there now: the
        pull model over the pod's own pulls there and the node's pulls in flight (module docstring)."""
        if not self.index.absent_from_status(pod, ni):
            return 0.0
        a: ImageCacheWaitArgs = self.args
        m_bytes, m_layers, m_images = self.index.missing_pulls(pod, ni)
        f_bytes, f_layers, f_images = self.index.in_flight_pulls(ni, exclude=pod)
        return (
            (m_bytes + f_bytes) / self.index.bandwidth(ni.node)
            + a.layer_latency_seconds * (m_layers + f_layers)
            + a.pull_fixed_seconds * (m_images + f_images)
        )

    def _passes(self, state: CycleState, pod: Pod, ni: NodeInfo) -> bool:
        if self.handle is None:
            return fits_by_resources(pod, ni)
        s = self.handle.run_filter_plugins_with_nominated_pods(state, pod, ni)
        return s is None or s.is_success()

    def free_in(self, state: CycleState, pod: Pod, ni: NodeInfo, now: float) -> float | None:
        """Seconds until the pod fits on ``ni`` once the pods expected to end have ended; None when
        no known end makes it fit (0.0 is never returned: a node the pod fits now is not a reason
        to wait)."""
        ending: list[tuple[float, PodInfo]] = []
        for pi in ni.pods:
            end = expected_end(pi.pod)
            if end is not None:
                ending.append((max(end, now), pi))
        if not ending:
            return None
        ending.sort(key=lambda e: (e[0], e[1].pod.key))
        clone = ni.snapshot()
        st = state.clone()
        handle = self.handle
        i = 0
        while i < len(ending):
            t = ending[i][0]
            while i < len(ending) and ending[i][0] == t:
                pi = ending[i][1]
                clone.remove_pod(pi.pod)
                if handle is not None:
                    handle.run_pre_filter_extension_remove_pod(st, pod, pi, clone)
                i += 1
            if self._passes(st, pod, clone):
                return max(t - now, 0.0)
        return None

    def decide(self, state: CycleState, pod: Pod, node_name: str) -> HoldDecision:
        """The hold decision for ``pod`` assumed on ``node_name`` (see the module docstring)."""
        a: ImageCacheWaitArgs = self.args
        if self.handle is None or pod.uid in self._held:
            return HoldDecision("", 0.0, 0.0)
        snap = self.handle.snapshot()
        chosen = snap.get(node_name)
        if chosen is None:
            return HoldDecision("", 0.0, 0.0)
        pull_chosen = self.pull_seconds(pod, chosen)
        if pull_chosen < a.min_pull_seconds or a.max_wait_seconds <= 0:
            return HoldDecision("", 0.0, pull_chosen)
        now = self._now()
        best = HoldDecision("", 0.0, pull_chosen)
        for ni in snap.list():
            if ni.name == node_name or ni.node is None or not ni.pods:
                continue
            # cheapest test first: a node none of whose pods has an expected end never frees up
            if not self._has_hints(ni):
                continue
            if self.index.saved_bytes(pod, ni) == 0:
                continue
            pull_c = self.pull_seconds(pod, ni)
            if pull_c >= pull_chosen:
                continue
            free = self.free_in(state, pod, ni, now)
            if free is None:
                continue
            gain = pull_chosen - (free + a.requeue_grace_seconds + pull_c)
            if gain < a.min_gain_seconds or gain <= best.gain:
                continue
            hold = min(
                free + a.requeue_grace_seconds, a.max_wait_seconds, pull_chosen - pull_c, MAX_PERMIT_WAIT
            )
            if hold < free:
                continue  # the node would not be free before the hold ends
            best = HoldDecision(ni.name, hold, pull_chosen, pull_c, free, gain)
        return best

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        """Wait (with the bounded hold as timeout) when :meth:`decide` finds a node worth waiting
        for; Success otherwise."""
        self.index.sync()
        d = self.decide(state, pod, node_name)
        if not d.node:
            return None, 0.0
        now = self._now()
        if len(self._held) >= _PRUNE_AT:
            self._held = {uid: t for uid, t in self._held.items() if t > now - MAX_PERMIT_WAIT}
        self._held[pod.uid] = now
        msg = (
            f"waiting up to {d.hold:g}s for node {d.node} (image cached, room expected in {d.free_in:g}s) "
            f"instead of a {d.pull_chosen:g}s pull on {node_name}"
        )
        return Status(Code.Wait, msg), d.hold

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Assigned pod deletions (what frees the awaited node) and node additions/updates."""
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Delete)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable)
            ),
        ]
