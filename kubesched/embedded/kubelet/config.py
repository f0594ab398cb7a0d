"""Settings of the kubelet image model (pulls, image disk, image GC, status images).

Field names mirror ``KubeletConfiguration`` (``k8s.io/kubelet/config/v1beta1``) where one exists;
:meth:`KubeletImageConfig.from_mapping` reads them in that camelCase spelling. Defaults and their
sources ("facts" = the image facts cited in ``docs/image-acceleration.md``; the pull-time defaults
are shared with the scheduler plugins through :mod:`kubesched.images.pull_model`):

=================================  ==============  ==========================================================
field                              default         source / reasoning
=================================  ==============  ==========================================================
serialize_image_pulls              True            kubelet default (facts 3c)
max_parallel_image_pulls           None            kubelet default (nil = unlimited when not serialized)
node_bandwidth_bps                 3.0e9 B/s       24 Gbit/s, the smallest GPU-VM NIC figure (facts 3e)
decompress_bps                     45e6 B/s        end-to-end throughput of one pull (fetch + gzip inflate + unpack):
                                                   median of public kubelet ``Pulled`` events for multi-GB images
                                                   (:mod:`kubesched.images.pull_model`)
pull_fixed_seconds                 1.0 s           cost of every pull besides its bytes (same events; 0.9-1.15 s)
layer_latency_seconds              0.037 s         cost per layer fetched (same events)
registry_max_concurrent_pulls      None            unlimited (set it to model a registry that queues pulls)
registry_bandwidth_bps             None            unlimited (set it to model a shared registry uplink)
container_start_seconds            1.0 s           start with the image present: ~1-2 s typical, SLO p99 5 s (facts 4)
uncompressed_ratio                 2.0             unpacked = compressed x 2.0: ML images transfer at 0.4-0.55x
                                                   their unpacked size (facts 1e), i.e. unpacked 1.8-2.5x
image_disk_bytes                   200e9 B         assumption (the traces carry no disk sizes)
image_gc_high_threshold_percent    85              kubelet default ``imageGCHighThresholdPercent``
image_gc_low_threshold_percent     80              kubelet default ``imageGCLowThresholdPercent``
image_minimum_gc_age_seconds       120 s           kubelet default ``imageMinimumGCAge`` (2m)
image_gc_period_seconds            300 s           kubelet ``ImageGCPeriod`` (5m, pkg/kubelet/kubelet.go); 0 = after every pull
node_status_max_images             50              kubelet default ``nodeStatusMaxImages``; -1 = no cap
prepull_kubelet_slot               False           pre-pulls through the CRI (OpenKruise ImagePullJob): no kubelet
                                                   pull slot; True: puller pods, pulled in the kubelet's slot
=================================  ==============  ==========================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from kubesched.errors import ConfigError
from kubesched.images.pull_model import (
    DEFAULT_LAYER_SECONDS,
    DEFAULT_PULL_BYTES_PER_SECOND,
    DEFAULT_PULL_FIXED_SECONDS,
    PullModel,
)
from kubesched.units import parse_bytes

__all__ = ["KubeletImageConfig"]

_CAMEL = {
    "serializeImagePulls": "serialize_image_pulls",
    "maxParallelImagePulls": "max_parallel_image_pulls",
    "nodeBandwidthBytesPerSecond": "node_bandwidth_bps",
    "decompressBytesPerSecond": "decompress_bps",
    "layerLatencySeconds": "layer_latency_seconds",
    "pullFixedSeconds": "pull_fixed_seconds",
    "registryMaxConcurrentPulls": "registry_max_concurrent_pulls",
    "registryBandwidthBytesPerSecond": "registry_bandwidth_bps",
    "containerStartSeconds": "container_start_seconds",
    "uncompressedRatio": "uncompressed_ratio",
    "imageDiskBytes": "image_disk_bytes",
    "imageGCHighThresholdPercent": "image_gc_high_threshold_percent",
    "imageGCLowThresholdPercent": "image_gc_low_threshold_percent",
    "imageMinimumGCAgeSeconds": "image_minimum_gc_age_seconds",
    "imageGCPeriodSeconds": "image_gc_period_seconds",
    "nodeStatusMaxImages": "node_status_max_images",
    "prePullKubeletSlot": "prepull_kubelet_slot",
}
_SNAKE_TO_CAMEL = {v: k for k, v in _CAMEL.items()}
#: Fields in bytes or bytes per second: a string there is a quantity (``100MB/s``, ``200Gi``).
_BYTE_FIELDS = frozenset(
    {"node_bandwidth_bps", "decompress_bps", "registry_bandwidth_bps", "image_disk_bytes"}
)


@dataclass(frozen=True, slots=True)
class KubeletImageConfig:
    """Kubelet image-model settings (units: bytes, bytes/s, seconds, percent); see the module table."""

    serialize_image_pulls: bool = True
    max_parallel_image_pulls: int | None = None
    node_bandwidth_bps: float = 3.0e9
    decompress_bps: float = DEFAULT_PULL_BYTES_PER_SECOND
    layer_latency_seconds: float = DEFAULT_LAYER_SECONDS
    pull_fixed_seconds: float = DEFAULT_PULL_FIXED_SECONDS
    registry_max_concurrent_pulls: int | None = None
    registry_bandwidth_bps: float | None = None
    container_start_seconds: float = 1.0
    uncompressed_ratio: float = 2.0
    image_disk_bytes: int = 200_000_000_000
    image_gc_high_threshold_percent: int = 85
    image_gc_low_threshold_percent: int = 80
    image_minimum_gc_age_seconds: float = 120.0
    image_gc_period_seconds: float = 300.0
    node_status_max_images: int = 50
    prepull_kubelet_slot: bool = False

    def __post_init__(self) -> None:
        self.validate()

    @property
    def node_pull_slots(self) -> int | None:
        """Image pulls one node runs at once: 1 when serialized, else ``max_parallel_image_pulls``
        (None = unlimited), as ``pkg/kubelet/images/puller.go`` (serial / parallel puller)."""
        if self.serialize_image_pulls:
            return 1
        return self.max_parallel_image_pulls

    def pull_model(self) -> PullModel:
        """The idle-node pull time of this configuration: fixed and per-layer cost, and a throughput
        of ``min(decompress_bps, node_bandwidth_bps, registry_bandwidth_bps)``."""
        rate = min(
            self.decompress_bps,
            self.node_bandwidth_bps,
            self.registry_bandwidth_bps if self.registry_bandwidth_bps is not None else float("inf"),
        )
        return PullModel(self.pull_fixed_seconds, self.layer_latency_seconds, rate)

    def validate(self) -> None:
        """Raise ConfigError (path ``kubelet.<camelCaseField>``) for an invalid value; the GC and
        parallel-pull rules follow ``pkg/kubelet/apis/config/validation/validation.go``."""

        def err(name: str, message: str) -> ConfigError:
            return ConfigError(f"kubelet.{_SNAKE_TO_CAMEL[name]}", message)

        def positive(name: str, allow_none: bool = False) -> None:
            value = getattr(self, name)
            if value is None and allow_none:
                return
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise err(name, f"must be > 0, got {value!r}")

        if not isinstance(self.serialize_image_pulls, bool):
            raise err("serialize_image_pulls", f"must be true or false, got {self.serialize_image_pulls!r}")
        if not isinstance(self.prepull_kubelet_slot, bool):
            raise err("prepull_kubelet_slot", f"must be true or false, got {self.prepull_kubelet_slot!r}")
        for name in ("node_bandwidth_bps", "decompress_bps", "uncompressed_ratio", "image_disk_bytes"):
            positive(name)
        positive("registry_bandwidth_bps", allow_none=True)
        for name in (
            "layer_latency_seconds",
            "pull_fixed_seconds",
            "container_start_seconds",
            "image_minimum_gc_age_seconds",
            "image_gc_period_seconds",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise err(name, f"must be >= 0, got {value!r}")
        for name in ("max_parallel_image_pulls", "registry_max_concurrent_pulls"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise err(name, f"must be an integer >= 1 or null, got {value!r}")
        if self.serialize_image_pulls and self.max_parallel_image_pulls not in (None, 1):
            raise err(
                "max_parallel_image_pulls",
                f"maxParallelImagePulls ({self.max_parallel_image_pulls}) must be 1 or nil "
                "when serializeImagePulls is true",
            )
        for name in ("image_gc_high_threshold_percent", "image_gc_low_threshold_percent"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
                raise err(name, f"must be an integer between 0 and 100, got {value!r}")
        if self.image_gc_low_threshold_percent >= self.image_gc_high_threshold_percent:
            raise err(
                "image_gc_low_threshold_percent",
                f"imageGCLowThresholdPercent ({self.image_gc_low_threshold_percent}) must be less than "
                f"imageGCHighThresholdPercent ({self.image_gc_high_threshold_percent})",
            )
        value = self.node_status_max_images
        if isinstance(value, bool) or not isinstance(value, int) or value < -1:
            raise err("node_status_max_images", f"must be an integer >= -1, got {value!r}")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], where: str = "") -> KubeletImageConfig:
        """Build from camelCase keys (``serializeImagePulls``, ``imageGCHighThresholdPercent``, ...;
        the names in ``_CAMEL``); missing keys keep their defaults. Sizes and bandwidths may be
        quantities (``nodeBandwidthBytesPerSecond: 100MB/s``, ``imageDiskBytes: 200Gi``). Raises ConfigError for an
        unknown key or invalid value (prefixed with ``where``)."""
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            name = _CAMEL.get(key)
            if name is None:
                raise ConfigError(
                    f"kubelet.{key}", f"unknown field (allowed: {', '.join(sorted(_CAMEL))})", where
                )
            if isinstance(value, str) and name in _BYTE_FIELDS:
                try:
                    value = parse_bytes(value)  # "100MB/s", "200Gi": quantities, as people write them
                except ValueError as e:
                    raise ConfigError(f"kubelet.{key}", str(e), where) from None
            kwargs[name] = value
        try:
            return cls(**kwargs)
        except ConfigError as e:
            raise e.located(where) if where else e from None

    def with_(self, **changes: Any) -> KubeletImageConfig:
        """A copy with ``changes`` applied (validated)."""
        return replace(self, **changes)

    def to_mapping(self) -> dict[str, Any]:
        """camelCase dict of every field (the inverse of :meth:`from_mapping`)."""
        return {_SNAKE_TO_CAMEL[f.name]: getattr(self, f.name) for f in fields(self)}
