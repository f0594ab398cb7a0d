"""The pull-time model: how long a node takes to pull an image, and its calibrated defaults.

One pull of an image whose layers are all missing on an idle node takes::

    seconds = fixed_seconds + layers * layer_seconds + bytes / bytes_per_second

``bytes`` are compressed (registry transfer) bytes, ``layers`` the layers fetched. The kubelet image
model (:class:`~kubesched.embedded.kubelet.config.KubeletImageConfig`: ``pullFixedSeconds``,
``layerLatencySeconds``, ``decompressBytesPerSecond``) and the image plugins
(``ImagePullTimeSaved`` / ``ImageCacheWait`` ``defaultBandwidthBytesPerSecond``,
``pullFixedSeconds``, ``layerLatencySeconds``) take their
defaults from the constants below, so the scheduler's estimate and the simulated kubelet agree.

The defaults come from public kubelet ``Pulled`` events of containerd nodes in public clouds
(the sources are listed in ``docs/image-acceleration.md``, section "The pull model"):

* ``DEFAULT_PULL_FIXED_SECONDS`` = 1.0 s per pull (fits of duration against bytes give
  0.9-1.15 s in three independent series): manifest and config round trips, snapshot setup;
* ``DEFAULT_LAYER_SECONDS`` = 0.037 s per layer fetched (the same fits: about 37 ms per layer);
* ``DEFAULT_PULL_BYTES_PER_SECOND`` = 45e6 B/s: median end-to-end throughput of multi-GB images
  from public or same-cloud registries (middle half 31-53 MB/s). Pulls are bound by single-core
  gzip inflate and unpacking, not by the NIC. Images of 50-500 MB from public registries reach
  only 10-25 MB/s (the ``slow-registry`` preset in ``examples/kubelet/``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DEFAULT_LAYER_SECONDS",
    "DEFAULT_PULL_BYTES_PER_SECOND",
    "DEFAULT_PULL_FIXED_SECONDS",
    "PullModel",
]

#: seconds every pull costs besides its bytes (manifest/config requests, snapshot preparation)
DEFAULT_PULL_FIXED_SECONDS = 1.0
#: seconds per layer fetched (one blob request and unpack set-up each)
DEFAULT_LAYER_SECONDS = 0.037
#: end-to-end throughput of one pull in compressed bytes per second (fetch + inflate + unpack)
DEFAULT_PULL_BYTES_PER_SECOND = 45e6


@dataclass(frozen=True, slots=True)
class PullModel:
    """Idle-node pull time of one image: ``fixed_seconds`` (s), ``layer_seconds`` (s per layer)
    and ``bytes_per_second`` (compressed B/s, > 0)."""

    fixed_seconds: float = DEFAULT_PULL_FIXED_SECONDS
    layer_seconds: float = DEFAULT_LAYER_SECONDS
    bytes_per_second: float = DEFAULT_PULL_BYTES_PER_SECOND

    def __post_init__(self) -> None:
        if not self.bytes_per_second > 0:
            raise ValueError(f"bytes_per_second must be > 0, got {self.bytes_per_second!r}")
        if self.fixed_seconds < 0 or self.layer_seconds < 0:
            raise ValueError("fixed_seconds and layer_seconds must be >= 0")

    def seconds(self, size_bytes: int, layers: int = 1) -> float:
        """Seconds to pull ``size_bytes`` compressed bytes in ``layers`` layers (>= 1) on an idle
        node. Raises ValueError for a negative size or fewer than one layer."""
        if size_bytes < 0:
            raise ValueError(f"size must be >= 0 bytes, got {size_bytes}")
        if layers < 1:
            raise ValueError(f"an image has at least one layer, got {layers}")
        return self.fixed_seconds + layers * self.layer_seconds + size_bytes / self.bytes_per_second
