"""ImagePullTimeSaved: score nodes by the image pull time a pod would save there.

A kubesched plugin (no upstream equivalent; it replaces what upstream's
``pkg/scheduler/framework/plugins/imagelocality/image_locality.go`` tries to do,
whose own plugin stays exact in :mod:`kubesched.plugins.imagelocality.image_locality`).

Score (raw, per node, milliseconds; may be negative). It is the pull model of
:mod:`kubesched.images.pull_model` (``F`` = ``pullFixedSeconds`` per image pulled, ``L`` =
``layerLatencySeconds`` per layer fetched, ``bandwidth`` bytes/s) applied to what the node spares
the pod::

    present  = bytes of the pod's distinct layers on the node for certain: listed in its
               status.images, or layers of the images of its started pods (phase Running)
    ours     = bytes of the pod's other layers in flight to the node (layers of the images of the
               node's bound/assumed pods not started yet and of its pre-pulls in flight,
               annotation ``kubesched.io/prepulls-in-flight``, that are not present)
    flight   = every byte in flight to the node (for any pod)
    nI       = the pod's images on the node for certain (listed in status, or an image of a
               started pod there): pulls the pod does not make there
    nP, nO   = how many layers ``present`` and ``ours`` are
    fL, fI   = layers and images in flight to the node (its pending pulls)
    p        = inFlightProgress (0.5: a pull in flight is assumed half done)
    own      = present / bandwidth + F * nI + L * nP          # pulls and fetches the node spares
    seconds  = own                                            # every layer of the pod is present (a hit)
             = own + ours / bandwidth + L * nO                # serializedPulls: the pod waits behind
               - (1 - p) * (flight / bandwidth + L * fL + F * fI)   # the node's whole pull queue
             = own + p * (ours / bandwidth + L * nO)          # serializedPulls: false
             (x damping(recent) when positive, except for a hit)
    raw      = int(1000 * seconds)

(the bytes terms are summed first and divided once: ``(present + ours - (1 - p) * flight) /
bandwidth``). A pull avoided saves its fixed cost too, so a node listing the pod's image beats one
holding all but a small layer of it by at least ``F``; with ``F = L = 0`` the score is the
throughput term alone.

``saved / bandwidth`` is the pull time the pod saves there compared with pulling everything on an
idle node: a node holding the image saves the whole pull, a node pulling it saves the part assumed
done, and a node busy pulling *other* images costs time (negative) because the kubelet pulls one
image at a time. So a pod that must pull goes to an idle node rather than queue behind a
multi-GB pull, and a pod never prefers joining a fresh pull to a node that already has the image.
A pod whose every layer is present pulls nothing: the kubelet starts it at once whatever the node
is pulling for others, so neither the queue term nor the damping below applies to such a hit.

* Layers come from the image catalogue (``cataloguePath``), so images sharing a CUDA or
  PyTorch layer share credit; see :mod:`kubesched.images.layer_index` for what counts as
  present or in flight (node ``status.images`` + images of the node's pods) and for names
  (``nginx:1.25`` matches ``docker.io/library/nginx:1.25``).
* **A started pod's images are present.** The kubelet lists a pulled image in ``status.images``
  only at its next node status update (``nodeStatusUpdateFrequency``, 10 s, whether the images
  changed or not), but it reports a pod ``Running`` as soon as its containers started, and the
  scheduler's pod informer sees that at once. So the images of a node's ``Running`` pods count as
  present (a hit when they are all the pod needs), not as a pull in flight. Without this, the
  score of a node that pulled an image 1-10 s ago depends on where the pull ended on the
  kubelet's 10 s grid: with ``inFlightProgress: 0`` a pull in flight earns nothing (and queues
  the pod behind it), so a pod arriving in that gap pulls the image again elsewhere where, 10 s
  later, it would have found it on the node. A real cluster has the same lag, so the scheduler
  does not wait for the status to know what a started container proves.
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

NormalizeScore: ``lo = min(0, min raw)``, ``score = 100 * (raw - lo) // max(max raw - lo,
int(1000 * scale))`` (integer arithmetic), where ``scale`` (``scoreScale``) is, by default
(``PodPull``), the larger of ``scoreScaleFloorSeconds`` and the pod's whole pull: the most any
scored node could save it, ``max over the scored nodes of pod bytes / bandwidth(node) + F *
images + L * layers`` (every distinct image and layer of the pod). So a node scores 100 when it
spares the pod's whole pull, and a node sharing only part of the pod's layers scores that part's
share of the pull, whichever nodes have room: a node holding a 40 MB base layer of a 3 GB image
scores 1 whether or not a node holding the whole image is feasible. Savings far below the floor
(a 2 MB busybox) score about 0. ``BestNode`` (the earlier rule) scales by the best scored node
instead, ``max(max raw - lo, 1000 * scoreScaleFloorSeconds)``: when every holder of the image is
full, the node sharing most layers gets the top of the range (100, or its saving over the 10 s
floor), however few bytes it shares, and at the recommended weight that outweighs the resource
scores. With a busy node (negative raw) in the list, idle nodes score above it either way.

**Node-size scaling** (``nodeShareExponent`` ``e``, 0 = off, the default). After NormalizeScore, a
node's score is multiplied by ``min(1, (share(node) / q) ** e)`` (and floored), where
``share(node)`` is the mean, over the resources the pod requests (cpu millicores, memory bytes,
extended resources such as ``nvidia.com/gpu``), of request / node allocatable, and ``q`` the lower
quartile of the shares over the nodes scored in the cycle (``numpy.quantile(shares, 0.25)``,
linear interpolation). The largest quarter of the pod's feasible nodes loses image credit, the
rest keeps all of it: a node k times larger than the quartile's keeps ``k ** -e`` of it (half of
it at k = 4 with ``e = 0.5``). Large nodes hold many images because they hold many pods,
so without it a small pod follows its image to them and fills the few nodes that only the largest
pods fit (best fit by node size, applied to the image credit alone; the resource scoring plugins
are unchanged).

Batch form (``score_batch``, :mod:`kubesched.framework.batch`): per image set, ``(present, ours)``
per node-table row, and ``flight`` and bandwidth per row, are cached and recomputed only for the
rows whose NodeInfo changed since the last use, so a cycle costs O(changed nodes) instead of
O(nodes x layers); the values equal the per-node ``score`` exactly (same float64 operations).
PreScore returns Skip for a pod whose images have no known bytes (unknown to the catalogue and
absent from every node status seen so far).
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from dataclasses import dataclass as std_dataclass
from dataclasses import field
from typing import TYPE_CHECKING, Any, Final, Literal

import numpy as np
import numpy.typing as npt
from pydantic import Field
from pydantic.dataclasses import dataclass

from kubesched.api.pod import Pod
from kubesched.api.resources import Resource
from kubesched.config.args import ARGS_CONFIG
from kubesched.framework.cycle_state import CycleState, ReadOnlyStateData
from kubesched.framework.interfaces import (
    PreScorePlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
    SignPlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.results import MAX_NODE_SCORE, NodeScore
from kubesched.framework.signers import IMAGE_NAMES_SIGNER_NAME, SignFragment
from kubesched.framework.status import Code, Status
from kubesched.images.layer_index import BANDWIDTH_KEY, ImageLayerIndex
from kubesched.images.pull_model import (
    DEFAULT_LAYER_SECONDS,
    DEFAULT_PULL_BYTES_PER_SECOND,
    DEFAULT_PULL_FIXED_SECONDS,
)
from kubesched.images.registry_layers import shared_registry_source

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from kubesched.framework.handle import Handle
    from kubesched.framework.node_table import NodeTable

NAME: Final = "ImagePullTimeSaved"
STATE_KEY: Final = "PreScore" + NAME
#: size of the uid -> placement table above which entries older than the window are dropped
_PRUNE_AT: Final = 4096
#: image sets whose per-row saved-bytes column is kept for the batch path (least recently used dropped)
COLUMN_CACHE_SIZE: Final = 256

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


class _Column:
    """Per-row values of one node table, valid at table ``version`` (see :meth:`ImagePullTimeSaved.score_batch`)."""

    __slots__ = ("table", "version", "values")

    def __init__(self, table: NodeTable, version: int, values: np.ndarray) -> None:
        self.table = table
        self.version = version
        self.values = values


@dataclass(config=ARGS_CONFIG)
class ImagePullTimeSavedArgs:
    """Args of :class:`ImagePullTimeSaved` (YAML keys in camelCase).

    * ``catalogue_path`` (``cataloguePath``): image catalogue YAML; None = the shipped
      ``kubesched/data/image-catalogue.yaml``. Images not in it are one opaque layer.
    * ``default_bandwidth_bytes_per_second``: pull throughput of a node without the
      ``bandwidth_key`` annotation/label; default 45e6 B/s, the kubelet model's per-pull throughput
      (:data:`kubesched.images.pull_model.DEFAULT_PULL_BYTES_PER_SECOND`).
    * ``bandwidth_key``: node annotation (or label) with the node's throughput, bytes/s.
    * ``pull_fixed_seconds`` (``pullFixedSeconds``): seconds every image pull costs besides its
      bytes; default 1.0, the pull model's
      (:data:`kubesched.images.pull_model.DEFAULT_PULL_FIXED_SECONDS`, as the kubelet model's key).
    * ``layer_latency_seconds`` (``layerLatencySeconds``): seconds per layer fetched; default 0.037
      (:data:`kubesched.images.pull_model.DEFAULT_LAYER_SECONDS`).
    * ``score_scale_floor_seconds``: a saving of this many seconds or more can reach 100; default 10.
    * ``score_scale`` (``scoreScale``): what a score of 100 stands for. ``PodPull`` (default): the
      pod's whole pull on the slowest scored node (at least ``score_scale_floor_seconds``), so a
      node's score is the share of the pod's pull it spares. ``BestNode``: the best scored node's
      saving (at least the floor), so the node sharing most layers scores 100 however little it
      shares. See the module docstring.
    * ``recent_window_seconds``: window of the piling guard; default 300 (5 min).
    * ``recent_burst``: pods of one image a node takes per window at full credit; default 8 (one
      8-GPU node full of 1-GPU replicas). 0 disables the guard.
    * ``in_flight_progress``: fraction of a pull in flight assumed already done when the pod
      arrives (the scheduler does not see pull progress); default 0.5, in [0, 1].
    * ``serialized_pulls``: the nodes' kubelets pull one image at a time (``serializeImagePulls``,
      the kubelet default), so a pod bound to a node waits behind everything the node is still
      pulling; default true. False: only the pod's own in-flight layers are waited for.
    * ``node_share_exponent`` (``nodeShareExponent``): ``e`` of the node-size scaling: a node's
      normalized score is multiplied by ``min(1, (share / q) ** e)`` (``share`` = the pod's mean
      share of the node's allocatable over the resources it requests, ``q`` the lower quartile of
      the shares over the nodes scored; see the module docstring), so the largest quarter of the
      pod's feasible nodes gets less image credit (``k ** -e`` of it on a node k times larger than
      the quartile's). Default 0: off.
    * ``registry_settings_path``: registry settings YAML
      (:mod:`kubesched.images.registry_settings`); when set, images missing from the catalogue are
      looked up in their registries in the background (:mod:`kubesched.images.registry_layers`):
      the first cycles score such an image as one opaque layer, later ones see its layers.
      Default None: no lookups.
    * ``prepulls_in_flight`` (``prepullsInFlight``): the images a node's
      ``kubesched.io/prepulls-in-flight`` annotation lists (a pre-pull agent's pulls not yet in
      ``status.images``) count as pulls in flight there, as its bound pods' pulls do: their bytes
      queue a pod that pulls something else, and a pod of the same image joins them. Default true.
    """

    catalogue_path: str | None = None
    default_bandwidth_bytes_per_second: float = Field(default=DEFAULT_PULL_BYTES_PER_SECOND, gt=0)
    bandwidth_key: str = BANDWIDTH_KEY
    pull_fixed_seconds: float = Field(default=DEFAULT_PULL_FIXED_SECONDS, ge=0)
    layer_latency_seconds: float = Field(default=DEFAULT_LAYER_SECONDS, ge=0)
    score_scale_floor_seconds: float = Field(default=10.0, gt=0)
    score_scale: Literal["PodPull", "BestNode"] = "PodPull"
    recent_window_seconds: float = Field(default=300.0, ge=0)
    recent_burst: int = Field(default=8, ge=0)
    in_flight_progress: float = Field(default=0.5, ge=0, le=1)
    serialized_pulls: bool = True
    node_share_exponent: float = Field(default=0.0, ge=0)
    registry_settings_path: str | None = None
    prepulls_in_flight: bool = True


@std_dataclass(slots=True)
class _ImageSetState(ReadOnlyStateData):
    key: tuple[str, ...]
    now: float
    #: nodeShareExponent: the pod's share of each scored node (per-node path, by node name) ...
    shares: dict[str, float] = field(default_factory=dict)
    #: ... and of the scored rows, in row order (batch path)
    share_rows: FloatArray | None = None
    #: scoreScale PodPull: the pod's whole pull on the slowest node scored so far (seconds)
    pull_seconds: float = 0.0

    def clone(self) -> _ImageSetState:
        return self


def pod_share(req: Resource, allocatable: Resource) -> float | None:
    """Mean of request / allocatable over the resources ``req`` requests (cpu millicores, memory
    bytes, then scalar resources by name; an allocatable of 0 counts as 1); None when the pod
    requests none of them."""
    total = 0.0
    n = 0
    if req.milli_cpu > 0:
        total += req.milli_cpu / max(allocatable.milli_cpu, 1)
        n += 1
    if req.memory > 0:
        total += req.memory / max(allocatable.memory, 1)
        n += 1
    for name in sorted(req.scalar):
        if req.scalar[name] > 0:
            total += req.scalar[name] / max(allocatable.scalar.get(name, 0), 1)
            n += 1
    return total / n if n else None


def pod_share_rows(req: Resource, table: NodeTable, rows: IntArray) -> FloatArray | None:
    """Vectorised :func:`pod_share` for the nodes at ``rows`` of ``table`` (same float64 operations)."""
    total: FloatArray = np.zeros(len(rows), dtype=np.float64)
    n = 0
    if req.milli_cpu > 0:
        total = total + req.milli_cpu / np.maximum(table.alloc_cpu[rows], 1)
        n += 1
    if req.memory > 0:
        total = total + req.memory / np.maximum(table.alloc_mem[rows], 1)
        n += 1
    for name in sorted(req.scalar):
        if req.scalar[name] > 0:
            total = total + req.scalar[name] / np.maximum(table.scalar(name)[0][rows], 1)
            n += 1
    if not n:
        return None
    out: FloatArray = total / n
    return out


def share_factors(shares: FloatArray, exponent: float) -> FloatArray:
    """``min(1, (share / q) ** exponent)`` per node (dimensionless), ``q`` the lower quartile of
    ``shares`` (``numpy.quantile``, linear); all 1.0 when ``q`` is 0."""
    q = float(np.quantile(shares, 0.25))
    if q <= 0:
        return np.ones(len(shares), dtype=np.float64)
    out: FloatArray = np.minimum(1.0, np.power(shares / q, exponent))
    return out


def damping(recent: int, burst: int) -> float:
    """``min(1, burst / (recent + 1))``; 1.0 when ``burst`` is 0 (guard disabled)."""
    if burst <= 0:
        return 1.0
    return min(1.0, burst / (recent + 1))


class ImagePullTimeSaved(PreScorePlugin, ScorePlugin, ScoreExtensions, ReservePlugin, SignPlugin):
    """Score = estimated image pull seconds saved on the node (see the module docstring)."""

    NAME = NAME
    Args = ImagePullTimeSavedArgs

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        """Scoring depends on the pod's images."""
        return [SignFragment(IMAGE_NAMES_SIGNER_NAME, sorted(set(pod.images)))], None

    def __init__(self, args: ImagePullTimeSavedArgs | None = None, handle: Handle | None = None) -> None:
        super().__init__(args or ImagePullTimeSavedArgs(), handle)
        a: ImagePullTimeSavedArgs = self.args
        source = shared_registry_source(a.registry_settings_path) if a.registry_settings_path else None
        self.index = ImageLayerIndex(
            a.catalogue_path,
            a.bandwidth_key,
            a.default_bandwidth_bytes_per_second,
            source=source,
            prepulls=a.prepulls_in_flight,
        )
        #: image set -> node -> reservation times (the piling guard's memory)
        self._recent: dict[tuple[str, ...], dict[str, deque[float]]] = {}
        self._reserved: dict[str, tuple[str, tuple[str, ...], float]] = {}
        #: batch path: image set -> per-row saved bytes; and the per-row bandwidth column
        self._saved_columns: OrderedDict[tuple[str, ...], _Column] = OrderedDict()
        self._bandwidth_column: _Column | None = None
        self._flight_column: _Column | None = None

    # ---------------------------------------------------------------- time and the guard

    def _now(self) -> float:
        clock = self.handle.clock if self.handle is not None else None
        return clock.now() if clock is not None else time.monotonic()

    def recent_count(self, node: str, key: tuple[str, ...], now: float) -> int:
        """Pods with image set ``key`` reserved on ``node`` in ``(now - window, now]``."""
        by_node = self._recent.get(key)
        q = by_node.get(node) if by_node is not None else None
        if not q:
            return 0
        horizon = now - self.args.recent_window_seconds
        while q and q[0] <= horizon:
            q.popleft()
        if not q:
            self._forget(key, node)
            return 0
        return len(q)

    def _forget(self, key: tuple[str, ...], node: str) -> None:
        by_node = self._recent.get(key)
        if by_node is not None:
            by_node.pop(node, None)
            if not by_node:
                del self._recent[key]

    # ---------------------------------------------------------------- PreScore / Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Skip when the pod's images have no known bytes; else store the per-cycle state."""
        if self.index.sync():  # a registry lookup finished: the cached columns are stale
            self._saved_columns.clear()
            self._flight_column = None
        if self.index.pod_bytes(pod) == 0:
            for ni in nodes:  # unknown image: learn its size from the nodes' status
                self.index.node_layers(ni)
            if self.index.pod_bytes(pod) == 0:
                return Status(Code.Skip)
        state.write(STATE_KEY, _ImageSetState(pod.images, self._now()))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Raw score: milliseconds of pull saved on the node, damped by the piling guard."""
        s = self._state(state, pod)
        if self.args.node_share_exponent > 0:
            share = pod_share(Resource.from_list(pod.requests), node_info.allocatable)
            if share is not None:
                s.shares[node_info.name] = share
        bandwidth = self.index.bandwidth(node_info.node)
        if self.args.score_scale == "PodPull":
            s.pull_seconds = max(
                s.pull_seconds, self.index.pod_bytes(pod) / bandwidth + self._whole_counts(pod)
            )
        present, ours, flight = self.index.saved_parts(pod, node_info)
        if present == 0 and flight == 0:
            return 0, None
        listed, n_present, n_ours = self.index.pull_counts(pod, node_info)
        if 0 < self.index.pod_bytes(pod) <= present:
            # every layer is on the node: the pod pulls nothing, so it neither queues behind the
            # node's pulls nor piles up behind anyone (a hit is never damped)
            return int(1000 * (present / bandwidth + self._own_seconds(listed, n_present))), None
        f_layers, f_images = self.index.in_flight_counts(node_info) if flight else (0, 0)
        seconds = self._saved_bytes(present, ours, flight) / bandwidth + self._count_seconds(
            listed, n_present, n_ours, f_layers, f_images
        )
        if seconds > 0 and self.args.recent_burst > 0 and self._recent:
            seconds *= damping(self.recent_count(node_info.name, s.key, s.now), self.args.recent_burst)
        return int(1000 * seconds), None

    def _state(self, state: CycleState, pod: Pod) -> _ImageSetState:
        """The cycle's state written by PreScore (written now when PreScore did not run)."""
        try:
            s: _ImageSetState = state.read(STATE_KEY)
        except KeyError:
            s = _ImageSetState(pod.images, self._now())
            state.write(STATE_KEY, s)
        return s

    def _whole_counts(self, pod: Pod) -> float:
        """``F * images + L * layers`` of the pod's whole pull (its distinct images and layers), seconds."""
        a = self.args
        return a.pull_fixed_seconds * len(self.index.pod_images(pod)) + a.layer_latency_seconds * len(
            self.index.pod_groups(pod)
        )

    def _span(self, state: CycleState, max_raw: int, lo: int) -> int:
        """The NormalizeScore divisor (ms): ``max(max raw - lo, int(1000 * scale))``, ``scale`` the
        floor, or with ``scoreScale: PodPull`` the larger of the floor and the pod's whole pull."""
        scale = self.args.score_scale_floor_seconds
        if self.args.score_scale == "PodPull":
            scale = max(scale, self._read_state(state).pull_seconds)
        return max(max_raw - lo, int(1000 * scale))

    def _own_seconds(self, listed: Any, n_present: Any) -> Any:
        """``F * nI + L * nP``: the pulls and layer fetches the node spares the pod (scalars or arrays)."""
        a = self.args
        return a.pull_fixed_seconds * listed + a.layer_latency_seconds * n_present

    def _count_seconds(self, listed: Any, n_present: Any, n_ours: Any, f_layers: Any, f_images: Any) -> Any:
        """The per-pull and per-layer terms of a miss (see the module docstring): ``F * nI + L * nP``
        plus, with serialized pulls, ``L * nO - (1 - p) * (L * fL + F * fI)``, else ``p * L * nO``."""
        a = self.args
        p = a.in_flight_progress
        own = self._own_seconds(listed, n_present)
        if a.serialized_pulls:
            return (
                own
                + a.layer_latency_seconds * n_ours
                - (1 - p) * (a.layer_latency_seconds * f_layers + a.pull_fixed_seconds * f_images)
            )
        return own + p * a.layer_latency_seconds * n_ours

    def _saved_bytes(self, present: Any, ours: Any, flight: Any) -> Any:
        """Bytes-equivalent of the pull time saved (works on ints and on int64 arrays alike):
        ``present + ours - (1 - p) * flight`` with serialized pulls, else ``present + p * ours``."""
        p = self.args.in_flight_progress
        if self.args.serialized_pulls:
            return (present + ours) - (1 - p) * flight
        return present + p * ours

    # ---------------------------------------------------------------- batch path (kubesched.framework.batch)

    def _refresh_column(
        self,
        entry: _Column | None,
        table: NodeTable,
        dtype: type,
        value: Callable[[NodeInfo], Any],
        width: int = 0,
    ) -> _Column:
        """``entry`` brought up to date with ``table``: rows changed since its version are
        recomputed with ``value(NodeInfo)`` (0 for free rows); a new column for a new table.
        ``width > 0`` makes it a ``(capacity, width)`` array (``value`` returns a tuple)."""
        shape: tuple[int, ...] = (table.capacity, width) if width else (table.capacity,)
        if entry is None or entry.table is not table:
            col: np.ndarray = np.zeros(shape, dtype=dtype)
            todo: Iterable[int] = range(len(table.infos))
        else:
            col = entry.values
            if len(col) < table.capacity:
                grown: np.ndarray = np.zeros(shape, dtype=dtype)
                grown[: len(col)] = col
                col = grown
            todo = table.changed_rows(entry.version)
        infos = table.infos
        for row in todo:
            if row >= len(infos):
                continue
            ni = infos[row]
            col[row] = value(ni) if ni is not None and ni.node is not None else 0
        return _Column(table, table.version, col)

    def parts_columns(self, pod: Pod, table: NodeTable) -> tuple[IntArray, ...]:
        """Per-row ``(present, ours, flight)`` bytes of :meth:`ImageLayerIndex.saved_parts` and
        ``(listed, present layers, ours layers, flight layers, flight images)`` counts
        (:meth:`ImageLayerIndex.pull_counts`, :meth:`ImageLayerIndex.in_flight_counts`) for the
        nodes of ``table``, cached (per image set for the pod's own values) and recomputed only for
        the rows changed since the last use: a cycle costs O(changed rows), not O(nodes x layers)."""
        key = pod.images
        index = self.index
        entry = self._saved_columns.get(key)
        if entry is not None:
            self._saved_columns.move_to_end(key)
        if entry is None or entry.table is not table or entry.version != table.version:
            # (present, ours, listed, nP, nO) per row, refreshed together per changed row
            entry = self._refresh_column(
                entry,
                table,
                np.int64,
                lambda ni: index.saved_parts(pod, ni)[:2] + index.pull_counts(pod, ni),
                width=5,
            )
            self._saved_columns[key] = entry
            if len(self._saved_columns) > COLUMN_CACHE_SIZE:
                self._saved_columns.popitem(last=False)
        pair: IntArray = entry.values
        flight = self._flight_column
        if flight is None or flight.table is not table or flight.version != table.version:
            flight = self._refresh_column(
                flight,
                table,
                np.int64,
                lambda ni: (index.in_flight_layers(ni)[1], *index.in_flight_counts(ni)),
                width=3,
            )
            self._flight_column = flight
        f: IntArray = flight.values
        return pair[:, 0], pair[:, 1], f[:, 0], pair[:, 2], pair[:, 3], pair[:, 4], f[:, 1], f[:, 2]

    def bandwidth_column(self, table: NodeTable) -> FloatArray:
        """Per-row pull bandwidth (bytes/s) of ``table``'s nodes (1.0 for free rows)."""
        entry = self._bandwidth_column
        if entry is None or entry.table is not table or entry.version != table.version:
            index = self.index
            entry = self._refresh_column(entry, table, np.float64, lambda ni: index.bandwidth(ni.node))
            self._bandwidth_column = entry
        col: FloatArray = entry.values
        return np.where(col > 0, col, 1.0)

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> IntArray | None:
        """Vectorised :meth:`score` (identical values: the same float64 operations per node)."""
        s = self._state(state, pod)
        s.share_rows = (
            pod_share_rows(Resource.from_list(pod.requests), table, rows)
            if self.args.node_share_exponent > 0
            else None
        )
        present, ours, flight, listed, n_present, n_ours, f_layers, f_images = (
            c[rows] for c in self.parts_columns(pod, table)
        )
        bandwidth = self.bandwidth_column(table)[rows]
        total = self.index.pod_bytes(pod)
        if self.args.score_scale == "PodPull" and len(rows):
            whole = total / bandwidth + self._whole_counts(pod)
            s.pull_seconds = max(s.pull_seconds, float(whole.max()))
        hit = (present >= total) & (total > 0)
        f_layers = np.where(flight > 0, f_layers, 0)
        f_images = np.where(flight > 0, f_images, 0)
        seconds = np.where(
            hit,
            present / bandwidth + self._own_seconds(listed, n_present),
            self._saved_bytes(present, ours, flight) / bandwidth
            + self._count_seconds(listed, n_present, n_ours, f_layers, f_images),
        )
        seconds = np.where((present == 0) & (flight == 0), 0.0, seconds)
        by_node = self._recent.get(s.key) if self.args.recent_burst > 0 else None
        if by_node:
            factor = np.ones(table.capacity, dtype=np.float64)
            for node in list(by_node):
                row = table.rows.get(node)
                if row is not None:
                    factor[row] = damping(self.recent_count(node, s.key, s.now), self.args.recent_burst)
            seconds = np.where((seconds > 0) & ~hit, seconds * factor[rows], seconds)
        out: IntArray = (1000 * seconds).astype(np.int64)
        return out

    def normalize_score_batch(self, state: CycleState, pod: Pod, scores: IntArray) -> IntArray:
        """Vectorised :meth:`normalize_score`."""
        if not len(scores):
            return scores
        lo = min(int(scores.min()), 0)
        span = self._span(state, int(scores.max()), lo)
        out: IntArray = MAX_NODE_SCORE * (scores - lo) // span
        shares = self._read_state(state).share_rows if self.args.node_share_exponent > 0 else None
        if shares is not None and len(shares) == len(out):
            scaled: IntArray = (out * share_factors(shares, self.args.node_share_exponent)).astype(np.int64)
            return scaled
        return out

    @staticmethod
    def _read_state(state: CycleState) -> _ImageSetState:
        try:
            s: _ImageSetState = state.read(STATE_KEY)
        except KeyError:
            return _ImageSetState((), 0.0)
        return s

    def score_extensions(self) -> ScoreExtensions | None:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        """``100 * (raw - lo) // max(max raw - lo, int(1000 * scale))`` (``scale``: see
        ``scoreScale`` in the module docstring), then the node-size scaling when
        ``nodeShareExponent`` is above 0."""
        if not scores:
            return None
        lo = min(min(ns.score for ns in scores), 0)
        span = self._span(state, max(ns.score for ns in scores), lo)
        for ns in scores:
            ns.score = MAX_NODE_SCORE * (ns.score - lo) // span
        if self.args.node_share_exponent > 0:
            shares = self._read_state(state).shares
            if shares and all(ns.name in shares for ns in scores):
                factors = share_factors(
                    np.array([shares[ns.name] for ns in scores], dtype=np.float64),
                    self.args.node_share_exponent,
                )
                for ns, f in zip(scores, factors.tolist(), strict=True):
                    ns.score = int(ns.score * f)
        return None

    # ---------------------------------------------------------------- Reserve (guard bookkeeping)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Record the placement for the piling guard (never fails)."""
        if self.args.recent_burst <= 0:
            return None
        now = self._now()
        key = pod.images
        self._recent.setdefault(key, {}).setdefault(node_name, deque()).append(now)
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
        by_node = self._recent.get(entry[1])
        q = by_node.get(entry[0]) if by_node is not None else None
        if q is not None:
            try:
                q.remove(entry[2])
            except ValueError:
                pass
            if not q:
                self._forget(entry[1], entry[0])
