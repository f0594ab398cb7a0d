"""Per-pod and per-run records of the kubelet image model (:mod:`kubesched.embedded.kubelet.model`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PodPullRecord", "PullMetrics"]


@dataclass(slots=True)
class PodPullRecord:
    """Timing and bytes of one pod's images (seconds on the model's clock; bytes compressed).

    ``pull_wait_seconds``: time its image requests spent queued before the pull serving them
    started (node slot + registry slot); ``pull_seconds``: time from the later of request and pull
    start to the image being present; both summed over the pod's images. ``pulls_done_at``: when
    its last image was present; ``started_at``: container start. Bytes requested = cache hit +
    joined + pulled once every image is present. ``image_bytes_pulled``: the whole size (distinct
    layer bytes) of each image the pod's own pulls got, however many of its layers the node had:
    what the kubelet's ``Pulled`` Event reports (``Image size: N bytes``) and what ``kubesched
    startup`` counts as pulled on a live cluster.
    """

    pod_key: str
    node: str
    bound_at: float
    images: tuple[str, ...]
    pull_wait_seconds: float = 0.0
    pull_seconds: float = 0.0
    pulls_done_at: float | None = None
    started_at: float | None = None
    finished_at: float | None = None
    bytes_requested: int = 0
    bytes_cache_hit: int = 0
    bytes_joined: int = 0
    bytes_pulled: int = 0
    pulls_joined: int = 0
    image_bytes_pulled: int = 0

    @property
    def start_seconds(self) -> float | None:
        """Container start time after the pulls (``started_at - pulls_done_at``)."""
        if self.started_at is None or self.pulls_done_at is None:
            return None
        return self.started_at - self.pulls_done_at

    @property
    def startup_seconds(self) -> float | None:
        """Bind to container start (``started_at - bound_at``)."""
        return None if self.started_at is None else self.started_at - self.bound_at


@dataclass(slots=True)
class PullMetrics:
    """Run totals. Bytes are compressed. ``bytes_requested`` = sum over pods' image requests of the
    image's distinct layer bytes = ``bytes_cache_hit`` (on the node already) + ``bytes_joined``
    (fetched by a pull another request started) + the pods' share of ``bytes_pulled``.
    ``bytes_pulled`` counts every byte transferred, pre-pulls included (``bytes_prepulled``).
    ``image_bytes_pulled``: the pods' :attr:`PodPullRecord.image_bytes_pulled` summed (pre-pulls
    not included): the bytes a live cluster's ``Pulled`` Events report for the same pulls;
    ``image_bytes_prepulled`` the same for the pre-pulls (each one's whole image, as the pre-pull
    agent's ``kubesched_prepull_bytes_total`` counts them)."""

    bytes_requested: int = 0
    bytes_cache_hit: int = 0
    bytes_joined: int = 0
    bytes_pulled: int = 0
    bytes_prepulled: int = 0
    image_bytes_pulled: int = 0
    image_bytes_prepulled: int = 0
    pulls_started: int = 0
    pulls_completed: int = 0
    prepulls: int = 0
    #: pre-pulls whose image a pod used on that node (found present or joined) before GC removed it
    prepulls_used: int = 0
    pulls_joined: int = 0
    layers_joined: int = 0
    gc_runs: int = 0
    images_removed: int = 0
    bytes_freed: int = 0

    @property
    def prepull_precision(self) -> float | None:
        """``prepulls_used / prepulls`` (None before any pre-pull)."""
        return self.prepulls_used / self.prepulls if self.prepulls else None

    @property
    def cache_hit_ratio(self) -> float:
        """``bytes_cache_hit / bytes_requested`` (0.0 before any request)."""
        return self.bytes_cache_hit / self.bytes_requested if self.bytes_requested else 0.0
