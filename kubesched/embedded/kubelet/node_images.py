"""One node's image store: images present, layer reference counts, image disk usage, image GC and
the ``node.status.images`` list. No clock: callers pass times (seconds).

Layers are content-addressed and shared: a layer's bytes are on disk while at least one present
image contains it (reference count), so removing an image frees only the layers no kept image
uses. Disk bytes of a layer = ``round(compressed size x uncompressed_ratio)``.

Image GC follows ``pkg/kubelet/images/image_gc_manager.go`` (``GarbageCollect`` / ``freeSpace``):

* ``usagePercent = 100 - int(available * 100 / capacity)``; when ``usagePercent >= high``, free
  ``amountToFree = capacity * (100 - low) / 100 - available`` bytes (integer arithmetic);
* candidates: images not in use, ordered by last use then first detection (``byLastUsedAndDetected``;
  never-used images have no last use and go first; remaining ties by name, where Go's sort is
  unspecified);
* skip an image whose last use is at or after the GC time, or younger than ``imageMinimumGCAge``
  (``freeTime - firstDetected < MinAge``);
* remove images in order until the bytes freed reach ``amountToFree``.

Deviation from upstream, on purpose: upstream adds each removed image's full size to the bytes
freed even when layers stay (shared with kept images); here the bytes freed are the layer bytes
actually released, so shared layers never count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubesched.images.catalogue import CatalogueImage

__all__ = ["ImageRecord", "NodeImageStore", "GCResult", "MAX_NAMES_PER_IMAGE_IN_NODE_STATUS", "status_names"]

#: ``MaxNamesPerImageInNodeStatus`` in ``pkg/kubelet/nodestatus/setters.go``
MAX_NAMES_PER_IMAGE_IN_NODE_STATUS = 5


@dataclass(slots=True)
class ImageRecord:
    """An image present on a node: ``first_detected`` (s, when its pull completed), ``last_used``
    (s; None = never used by a pod, sorted first by GC), as ``imageRecord`` in image_gc_manager.go."""

    image: CatalogueImage
    first_detected: float
    last_used: float | None


@dataclass(frozen=True, slots=True)
class GCResult:
    """Outcome of one GC pass: ``removed`` image names (in removal order), ``freed_bytes`` (disk bytes
    released), ``amount_to_free`` (0 when usage was below the high threshold)."""

    removed: tuple[str, ...]
    freed_bytes: int
    amount_to_free: int

    @property
    def triggered(self) -> bool:
        return self.amount_to_free > 0


def status_names(image: CatalogueImage) -> list[str]:
    """``names`` of an image in ``node.status.images``: RepoDigests then RepoTags (setters.go
    ``Images``), at most :data:`MAX_NAMES_PER_IMAGE_IN_NODE_STATUS`."""
    names: list[str] = []
    digest_name = image.digest_name
    if digest_name is not None:
        names.append(digest_name)
    tagged = image.ref.tagged
    if tagged is not None:
        names.append(tagged)
    return names[:MAX_NAMES_PER_IMAGE_IN_NODE_STATUS]


class NodeImageStore:
    """Images and layers on one node with their disk usage (bytes).

    ``capacity_bytes`` is the image filesystem size; ``uncompressed_ratio`` turns compressed layer
    sizes into disk bytes. ``in_use`` counts, per image name, the pods on the node that use the
    image (bound and not finished), whether or not the image is present yet.
    """

    __slots__ = ("capacity_bytes", "ratio", "images", "layer_refs", "usage_bytes", "in_use", "_status_cache")

    def __init__(self, capacity_bytes: int, uncompressed_ratio: float) -> None:
        self.capacity_bytes = capacity_bytes
        self.ratio = uncompressed_ratio
        self.images: dict[str, ImageRecord] = {}
        self.layer_refs: dict[str, int] = {}
        self.usage_bytes = 0
        self.in_use: dict[str, int] = {}
        self._status_cache: dict[int, list[dict[str, Any]]] = {}

    def disk_bytes(self, size_bytes: int) -> int:
        """Disk bytes of a layer of ``size_bytes`` compressed bytes."""
        return round(size_bytes * self.ratio)

    def has_image(self, name: str) -> bool:
        return name in self.images

    def has_layer(self, layer_id: str) -> bool:
        return layer_id in self.layer_refs

    def present_bytes(self, image: CatalogueImage) -> int:
        """Compressed bytes of ``image``'s (distinct) layers already on this node."""
        refs = self.layer_refs
        return sum(layer.size_bytes for layer in image.unique_layers if layer.id in refs)

    def add_image(self, image: CatalogueImage, now: float) -> bool:
        """Record ``image`` as present (pull completed at ``now``); adds its layers' references.
        Returns False (no change) when it already is. A pod using it makes ``last_used = now``."""
        if image.name in self.images:
            return False
        self.images[image.name] = ImageRecord(image, now, now if self.in_use.get(image.name) else None)
        refs = self.layer_refs
        for layer in image.unique_layers:
            count = refs.get(layer.id, 0)
            if count == 0:
                self.usage_bytes += self.disk_bytes(layer.size_bytes)
            refs[layer.id] = count + 1
        self._status_cache.clear()
        return True

    def remove_image(self, name: str) -> int:
        """Remove image ``name``; returns the disk bytes freed (layers no other image holds)."""
        record = self.images.pop(name)
        freed = 0
        refs = self.layer_refs
        for layer in record.image.unique_layers:
            count = refs[layer.id] - 1
            if count == 0:
                del refs[layer.id]
                freed += self.disk_bytes(layer.size_bytes)
            else:
                refs[layer.id] = count
        self.usage_bytes -= freed
        self._status_cache.clear()
        return freed

    def use(self, name: str, now: float) -> None:
        """A pod on the node starts using image ``name`` (present or not yet)."""
        self.in_use[name] = self.in_use.get(name, 0) + 1
        record = self.images.get(name)
        if record is not None:
            record.last_used = now

    def release(self, name: str, now: float) -> None:
        """A pod using image ``name`` finished at ``now``: one use fewer; ``last_used = now``."""
        count = self.in_use.get(name, 0) - 1
        if count > 0:
            self.in_use[name] = count
        else:
            self.in_use.pop(name, None)
        record = self.images.get(name)
        if record is not None:
            record.last_used = now

    def usage_percent(self) -> int:
        """``100 - int(available * 100 / capacity)`` with ``available = max(0, capacity - usage)``."""
        available = max(0, self.capacity_bytes - self.usage_bytes)
        return 100 - available * 100 // self.capacity_bytes

    def over_high_threshold(self, high_percent: int) -> bool:
        return self.usage_percent() >= high_percent

    def gc(self, now: float, high_percent: int, low_percent: int, min_age_seconds: float) -> GCResult:
        """One ``GarbageCollect`` pass at time ``now`` (see the module docstring)."""
        capacity = self.capacity_bytes
        available = max(0, capacity - self.usage_bytes)
        if 100 - available * 100 // capacity < high_percent:
            return GCResult((), 0, 0)
        amount = capacity * (100 - low_percent) // 100 - available
        in_use = self.in_use
        candidates = [r for n, r in self.images.items() if not in_use.get(n)]
        candidates.sort(
            key=lambda r: (r.last_used is not None, r.last_used or 0.0, r.first_detected, r.image.name)
        )
        removed: list[str] = []
        freed = 0
        for record in candidates:
            if record.last_used is not None and record.last_used >= now:
                continue
            if now - record.first_detected < min_age_seconds:
                continue
            freed += self.remove_image(record.image.name)
            removed.append(record.image.name)
            if freed >= amount:
                break
        return GCResult(tuple(removed), freed, amount)

    def status_images(self, max_images: int = 50) -> list[dict[str, Any]]:
        """``node.status.images`` as the kubelet reports it (``nodestatus.Images`` in
        ``pkg/kubelet/nodestatus/setters.go``): images sorted by size, largest first (ties by
        name), cut to ``max_images`` (-1 = all); each ``{"names": [...], "sizeBytes": n}`` with
        the compressed size (what containerd's CRI reports as the image size). The list is
        cached until the node's images change; callers must not mutate it."""
        cached = self._status_cache.get(max_images)
        if cached is not None:
            return cached
        records = sorted(self.images.values(), key=lambda r: (-r.image.size_bytes, r.image.name))
        if max_images > -1:
            records = records[:max_images]
        result = [{"names": status_names(r.image), "sizeBytes": r.image.size_bytes} for r in records]
        self._status_cache[max_images] = result
        return result
