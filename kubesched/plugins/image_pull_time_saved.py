"""ImagePullTimeSaved: score nodes by the image pull time a pod would save there.

A kubesched plugin (no upstream equivalent; it replaces what upstream's
``pkg/scheduler/framework/plugins/imagelocality/image_locality.go`` tries to do, spec §8.7,
whose own plugin stays exact in :mod:`kubesched.plugins.image_locality`).

Score (raw, per node, milliseconds)::

    saved_bytes = bytes of the pod's distinct layers present on the node or in flight to it
    saved_s     = saved_bytes / bandwidth(node)                         # seconds
    raw         = int(1000 * saved_s * damping(recent))

* Layers come from the image catalogue (``cataloguePath``), so images sharing a CUDA or
  PyTorch layer share credit; see :mod:`kubesched.plugins.image_layer_index` for what counts as
  present or in flight (node ``status.images`` + images of the node's pods) and for names
  (``nginx:1.25`` matches ``docker.io/library/nginx:1.25``).
* ``bandwidth(node)``: node annotation/label ``kubesched.io/image-pull-bytes-per-second``, else
  ``defaultBandwidthBytesPerSecond``.
* No ImageLocality spread factor (``num_nodes / total_nodes``): that factor makes a cached
  multi-GB image worth nothing exactly when it is on few nodes, which is when it matters.

**Guard against piling** (why upstream has the spread factor: every replica of a workload
chasing the one node holding its image). ``damping(recent) = min(1, recentBurst / (recent + 1))``
where ``recent`` counts the pods with the same image set that this plugin saw reserved on the
node during the last ``recentWindowSeconds``. A node takes ``recentBurst`` pods of one image per
window at full credit (they share one pull, which is exactly the saving we want); past that its
credit decays as ``burst / (n + 1)``, so a burst of replicas spills over to other nodes (which then
pull in parallel and become holders themselves) instead of queueing behind one node's capacity
and failure domain. We chose a recent-placement damping over a spare-capacity cap because the
Filter plugins already refuse a node without room; what they do not prevent is the *correlated*
placement of a burst, which is what damping addresses. It costs O(1) per node (a dict lookup).

NormalizeScore: ``score = 100 * raw // max(max(raw over nodes), 1000 * scoreScaleFloorSeconds)``
(integer arithmetic), so the best node gets 100 when it saves at least the floor, and savings far
below the floor (a 2 MB busybox) score about 0 instead of dominating the resource scores.
PreScore returns Skip for a pod whose images have no known bytes (unknown to the catalogue and
absent from every node status seen so far).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass as std_dataclass
from typing import TYPE_CHECKING, Final

from pydantic import Field
from pydantic.dataclasses import dataclass

from kubesched.api.pod import Pod
from kubesched.config.args import ARGS_CONFIG
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import PreScorePlugin, ReservePlugin, ScoreExtensions, ScorePlugin
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.results import MAX_NODE_SCORE, NodeScore
from kubesched.framework.status import Code, Status
from kubesched.plugins.image_layer_index import BANDWIDTH_KEY, ImageLayerIndex

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kubesched.framework.handle import Handle

NAME: Final = "ImagePullTimeSaved"
STATE_KEY: Final = "PreScore" + NAME
#: size of the uid -> placement table above which entries older than the window are dropped
_PRUNE_AT: Final = 4096


@dataclass(config=ARGS_CONFIG)
class ImagePullTimeSavedArgs:
    """Args of :class:`ImagePullTimeSaved` (YAML keys in camelCase).

    * ``catalogue_path`` (``cataloguePath``): image catalogue YAML; None = the shipped
      ``kubesched/data/image-catalogue.yaml``. Images not in it are one opaque layer.
    * ``default_bandwidth_bytes_per_second``: pull throughput of a node without the
      ``bandwidth_key`` annotation/label; default 80e6 B/s (pulls are bound by single-core gzip
      inflate, 80-100 MB/s, ``../shared/data/image-catalogue-facts.md`` §3a, well under NIC speed).
    * ``bandwidth_key``: node annotation (or label) with the node's throughput, bytes/s.
    * ``score_scale_floor_seconds``: a saving of this many seconds or more can reach 100; default 10.
    * ``recent_window_seconds``: window of the piling guard; default 300 (5 min).
    * ``recent_burst``: pods of one image a node takes per window at full credit; default 8 (one
      8-GPU node full of 1-GPU replicas). 0 disables the guard.
    """

    catalogue_path: str | None = None
    default_bandwidth_bytes_per_second: float = Field(default=80e6, gt=0)
    bandwidth_key: str = BANDWIDTH_KEY
    score_scale_floor_seconds: float = Field(default=10.0, gt=0)
    recent_window_seconds: float = Field(default=300.0, ge=0)
    recent_burst: int = Field(default=8, ge=0)


@std_dataclass(slots=True)
class _PreScoreState:
    key: tuple[str, ...]
    now: float

    def clone(self) -> _PreScoreState:
        return self


def damping(recent: int, burst: int) -> float:
    """``min(1, burst / (recent + 1))``; 1.0 when ``burst`` is 0 (guard disabled)."""
    if burst <= 0:
        return 1.0
    return min(1.0, burst / (recent + 1))


class ImagePullTimeSaved(PreScorePlugin, ScorePlugin, ScoreExtensions, ReservePlugin):
    """Score = estimated image pull seconds saved on the node (see the module docstring)."""

    NAME = NAME
    Args = ImagePullTimeSavedArgs

    def __init__(self, args: ImagePullTimeSavedArgs | None = None, handle: Handle | None = None) -> None:
        super().__init__(args or ImagePullTimeSavedArgs(), handle)
        a: ImagePullTimeSavedArgs = self.args
        self.index = ImageLayerIndex(a.catalogue_path, a.bandwidth_key, a.default_bandwidth_bytes_per_second)
        self._recent: dict[tuple[str, tuple[str, ...]], deque[float]] = {}
        self._reserved: dict[str, tuple[str, tuple[str, ...], float]] = {}

    # ---------------------------------------------------------------- time and the guard

    def _now(self) -> float:
        clock = getattr(self.handle, "clock", None) if self.handle is not None else None
        return clock.now() if clock is not None else time.monotonic()

    def recent_count(self, node: str, key: tuple[str, ...], now: float) -> int:
        """Pods with image set ``key`` reserved on ``node`` in ``(now - window, now]``."""
        q = self._recent.get((node, key))
        if not q:
            return 0
        horizon = now - self.args.recent_window_seconds
        while q and q[0] <= horizon:
            q.popleft()
        if not q:
            del self._recent[(node, key)]
            return 0
        return len(q)

    # ---------------------------------------------------------------- PreScore / Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Skip when the pod's images have no known bytes; else store the per-cycle state."""
        if self.index.pod_bytes(pod) == 0:
            for ni in nodes:  # unknown image: learn its size from the nodes' status
                self.index.node_layers(ni)
            if self.index.pod_bytes(pod) == 0:
                return Status(Code.Skip)
        state.write(STATE_KEY, _PreScoreState(pod.images, self._now()))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Raw score: milliseconds of pull saved on the node, damped by the piling guard."""
        try:
            s: _PreScoreState = state.read(STATE_KEY)
        except KeyError:
            s = _PreScoreState(pod.images, self._now())
        saved = self.index.saved_bytes(pod, node_info)
        if saved == 0:
            return 0, None
        seconds = saved / self.index.bandwidth(node_info.node)
        if self.args.recent_burst > 0 and self._recent:
            seconds *= damping(self.recent_count(node_info.name, s.key, s.now), self.args.recent_burst)
        return int(1000 * seconds), None

    def score_extensions(self) -> ScoreExtensions | None:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        """``100 * raw // max(max raw, 1000 * scoreScaleFloorSeconds)``."""
        top = max((ns.score for ns in scores), default=0)
        denom = max(top, int(1000 * self.args.score_scale_floor_seconds))
        for ns in scores:
            ns.score = MAX_NODE_SCORE * ns.score // denom
        return None

    # ---------------------------------------------------------------- Reserve (guard bookkeeping)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Record the placement for the piling guard (never fails)."""
        if self.args.recent_burst <= 0:
            return None
        now = self._now()
        key = pod.images
        self._recent.setdefault((node_name, key), deque()).append(now)
        if len(self._reserved) >= _PRUNE_AT:
            horizon = now - self.args.recent_window_seconds
            self._reserved = {uid: e for uid, e in self._reserved.items() if e[2] > horizon}
        self._reserved[pod.uid] = (node_name, key, now)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Forget the placement recorded by :meth:`reserve` (idempotent)."""
        entry = self._reserved.pop(pod.uid, None)
        if entry is None:
            return
        q = self._recent.get((entry[0], entry[1]))
        if q is not None:
            try:
                q.remove(entry[2])
            except ValueError:
                pass
            if not q:
                del self._recent[(entry[0], entry[1])]
