"""ImageLocality: favour nodes that already hold the pod's container images.

Follows upstream ``pkg/scheduler/framework/plugins/imagelocality/image_locality.go``.
Image sizes are bytes; the per-image contribution is scaled by the fraction of nodes holding it
to avoid piling pods onto the few nodes that have an image.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import numpy as np

from kubesched.api.pod import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import ScorePlugin, SignPlugin
from kubesched.framework.node_info import ImageStateSummary, NodeInfo
from kubesched.framework.results import MAX_NODE_SCORE
from kubesched.framework.signers import IMAGE_NAMES_SIGNER_NAME, SignFragment
from kubesched.framework.status import Status

if TYPE_CHECKING:
    from kubesched.framework.batch import IntArray
    from kubesched.framework.handle import Handle
    from kubesched.framework.node_table import NodeTable

NAME: Final = "ImageLocality"
MB: Final = 1024 * 1024
#: Below this sum (bytes) the score is 0 (``minThreshold``).
MIN_THRESHOLD: Final = 23 * MB
#: Per-container cap (bytes); the sum is capped at this times the number of containers.
MAX_CONTAINER_THRESHOLD: Final = 1000 * MB


def normalized_image_name(name: str) -> str:
    """``normalizedImageName``: append ``:latest`` when the image has no tag, i.e. the last ``:``
    is not after the last ``/`` (no registry or ``library/`` defaulting)."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def scaled_image_score(state: ImageStateSummary, total_num_nodes: int) -> int:
    """``scaledImageScore``: ``int64(float64(size) * (float64(num_nodes) / float64(total)))``."""
    spread = float(state.num_nodes) / float(total_num_nodes)
    return int(float(state.size) * spread)


def sum_image_scores(node_info: NodeInfo, pod: Pod, total_num_nodes: int) -> int:
    """Sum of :func:`scaled_image_score` over init and regular containers whose image is on the node."""
    states = node_info.image_states
    total = 0
    for c in pod.init_containers + pod.containers:
        st = states.get(normalized_image_name(c.image))
        if st is not None:
            total += scaled_image_score(st, total_num_nodes)
    return total


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """``calculatePriority``: clamp to ``[23 MiB, 1000 MiB * num_containers]`` and map linearly to 0..100."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    sum_scores = max(MIN_THRESHOLD, min(sum_scores, max_threshold))
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality(ScorePlugin, SignPlugin):
    """Score 0..100 from the sizes of the pod's images already present on the node, weighted by
    their spread over the cluster (``image_states`` built by the cache). No args, no normalization."""

    NAME = NAME
    Args = None

    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        """Scoring depends on the pod's images."""
        return [SignFragment(IMAGE_NAMES_SIGNER_NAME, sorted(set(pod.images)))], None

    def __init__(self, args: None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """Score ``node_info``; the total node count comes from ``handle.snapshot()``."""
        total = len(self.handle.snapshot()) if self.handle is not None else 0
        if total == 0:
            total = 1
        n = len(pod.init_containers) + len(pod.containers)
        return calculate_priority(sum_image_scores(node_info, pod, total), n), None

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray) -> IntArray | None:
        """Vectorised :meth:`score` over the table's per-image presence columns (same float
        operations as :func:`scaled_image_score`, so identical results).

        Only the nodes holding one of the pod's images can score above 0 (a sum of 0 is clamped
        to ``minThreshold``, which maps to 0), so the sums are built over each image's holders
        (all of the table's rows, found once per image) and read at ``rows``; when no node holds
        any of the images every score is 0 and no column is read at ``rows``."""
        if not table.exact:
            return None
        total = len(self.handle.snapshot()) if self.handle is not None else 0
        if total == 0:
            total = 1
        containers = pod.init_containers + pod.containers
        acc: IntArray | None = None
        for c in containers:
            ic = table.image(normalized_image_name(c.image))
            held = np.flatnonzero(ic.present)
            if not len(held):
                continue
            if acc is None:
                acc = np.zeros(len(ic.present), dtype=np.int64)
            spread = ic.num_nodes[held].astype(np.float64) / float(total)
            acc[held] += (ic.size[held].astype(np.float64) * spread).astype(np.int64)
        if acc is None:
            return np.zeros(len(rows), dtype=np.int64)
        sums = acc[rows]
        max_threshold = MAX_CONTAINER_THRESHOLD * len(containers)
        clipped = np.maximum(MIN_THRESHOLD, np.minimum(sums, max_threshold))
        out: IntArray = MAX_NODE_SCORE * (clipped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)
        return out
