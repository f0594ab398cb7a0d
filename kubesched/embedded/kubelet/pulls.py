"""Image pull jobs and how download bandwidth is shared between them.

A :class:`PullJob` pulls one image on one node. Its life, in virtual seconds:

1. ``requested`` -- created; waits for a node pull slot (FIFO per node: one slot with
   ``serializeImagePulls``, N with ``maxParallelImagePulls``) and then for a registry slot
   (global FIFO, when ``registry_max_concurrent_pulls`` is set);
2. ``started`` -- it holds both slots; the layers to fetch are decided now: layers on the node
   are skipped (cache hits), layers being fetched by another active job on the node are joined
   (not fetched twice), the rest (``own_layers``) are fetched by this job;
3. latency phase of ``pull_fixed_seconds + len(own_layers) * layer_latency_seconds`` (manifest and
   config requests, one request per layer fetched);
4. transfer phase: ``own_bytes`` at a rate that changes when other jobs start or end:
   ``rate = min(decompress_bps, node_bandwidth / transferring jobs on the node)``, then, when a
   registry bandwidth is set, max-min fair shares of it across all transferring jobs
   (:func:`allocate_registry_bandwidth`);
5. ``done`` -- once its own transfer ended and every job it joined ended its transfer; the image
   is then present on the node and the slots are released.

With constant rates the pull time is ``fixed + len(own_layers) * latency + own_bytes / min(bandwidth
share, decompress)``. Layers fetched by a job count on the node when its image completes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.clock import Timer
from kubesched.images.catalogue import CatalogueImage, Layer

__all__ = ["PullJob", "allocate_registry_bandwidth"]


@dataclass(eq=False, slots=True)
class PullJob:
    """One image pull on one node (see the module docstring for the phases)."""

    node: str
    image: CatalogueImage
    requested: float
    owner: str | None  # pod key that caused the pull; None for a pre-pull
    holds_slot: bool = True  # takes one of the node's kubelet pull slots
    waiters: list[str] = field(default_factory=list)  # pod keys that joined this pull
    started: float | None = None
    own_layers: tuple[Layer, ...] = ()
    own_bytes: int = 0
    present_bytes: int = 0  # compressed bytes already on the node at start
    joined_bytes: int = 0  # compressed bytes fetched by other active jobs
    deps: list[PullJob] = field(default_factory=list)
    dependents: list[PullJob] = field(default_factory=list)
    transferring: bool = False
    transfer_done: bool = False
    done: bool = False
    finished: float | None = None
    remaining: float = 0.0  # bytes left in the transfer phase as of ``progress_at``
    rate: float = 0.0  # bytes/s now
    progress_at: float = 0.0
    timer: Timer | None = None

    def advance(self, now: float) -> None:
        """Account the bytes transferred since ``progress_at`` at the current rate."""
        if self.transferring and now > self.progress_at:
            self.remaining = max(0.0, self.remaining - self.rate * (now - self.progress_at))
        self.progress_at = now


def allocate_registry_bandwidth(caps: list[float], total: float) -> list[float]:
    """Max-min fair split of ``total`` bytes/s among flows each capped at ``caps[i]`` (water-filling):
    flows below the fair level get their cap, the others share the rest equally. Returns the
    rates in input order; when ``sum(caps) <= total`` the caps themselves."""
    if sum(caps) <= total:
        return list(caps)
    order = sorted(range(len(caps)), key=caps.__getitem__)
    rates = [0.0] * len(caps)
    left = total
    n = len(caps)
    for pos, i in enumerate(order):
        share = left / (n - pos)
        if caps[i] <= share:
            rates[i] = caps[i]
            left -= caps[i]
        else:
            for j in order[pos:]:
                rates[j] = share
            break
    return rates
