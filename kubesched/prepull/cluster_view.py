"""The pre-pull planner's view of a real cluster's node images, and its pre-pull action.

:class:`ClusterImageView` implements :class:`~kubesched.prepull.hook.NodeImageView` from API
objects only, the way the kubelet image model does it in the replay:

* ``has_image``: the node's ``status.images`` lists the image (any spelling: tag or digest form,
  normalised);
* ``pulling`` / ``pending_pulls``: a pre-pull of the controller is pulling it (or anything) on
  the node, or a pod bound to the node with the image is still ``Pending`` (its kubelet is
  pulling, or about to);
* ``layer_bytes``: bytes of the image's catalogue layers listed on the node (through the layers of
  the catalogue images in its status), and of those coming with its puller pods;
* ``store``: image disk use = the sizes the node's status reports, capacity = the node's
  ``ephemeral-storage`` capacity (unbounded when it reports none); a node with ``DiskPressure``
  reports a full disk, so the planner's disk check passes it over for the next candidate;
* ``prepull``: queues the image for the node's puller pod of this tick, refusing a node that
  has ``DiskPressure``, already runs a pre-pull, or is past the per-tick cap of new pre-pulls.

:meth:`ClusterImageView.refresh` takes a consistent copy (the scheduler cache's NodeInfo clones,
the informers' pods) at the start of each tick.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.node import Node
from kubesched.api.resources import EPHEMERAL_STORAGE
from kubesched.framework.node_info import NodeInfo
from kubesched.images.catalogue import CatalogueImage, ImageCatalogue
from kubesched.images.layer_index import ImageLayerIndex
from kubesched.images.names import InvalidImageReference, parse_image_ref
from kubesched.prepull.image_facts import ImageFacts
from kubesched.prepull.puller_pod import is_puller

__all__ = ["ClusterImageView", "NodeDisk", "has_disk_pressure"]

_UNBOUNDED = 1 << 62


def has_disk_pressure(node: Node) -> bool:
    """True when the node's ``DiskPressure`` condition is ``True``."""
    return any(c.get("type") == "DiskPressure" and c.get("status") == "True" for c in node.conditions)


def _names(refs: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for ref in refs:
        out.add(ref)
        try:
            r = parse_image_ref(ref)
        except InvalidImageReference:
            continue
        out.add(r.canonical)
        for form in (r.tagged, r.digested):
            if form is not None:
                out.add(form)
    return out


@dataclass(slots=True)
class NodeDisk:
    """A node's image disk from its status (bytes; see the module docstring)."""

    usage_bytes: int
    capacity_bytes: int
    images: set[str] = field(default_factory=set)

    def disk_bytes(self, compressed_bytes: int) -> int:
        return compressed_bytes

    def has_image(self, name: str) -> bool:
        return name in self.images


class ClusterImageView:
    """Node images of a real cluster for the planner (see the module docstring). ``catalogue``:
    the image facts (:class:`~kubesched.prepull.image_facts.ImageFacts`: the catalogue, then
    registry lookups) or a bare catalogue; ``max_new_per_tick``: most puller pods started per tick."""

    def __init__(self, catalogue: ImageFacts | ImageCatalogue, max_new_per_tick: int = 8) -> None:
        facts = catalogue if isinstance(catalogue, ImageFacts) else ImageFacts(catalogue)
        self.catalogue = facts
        self.max_new_per_tick = max_new_per_tick
        self.index = ImageLayerIndex(catalogue=facts.catalogue, source=facts.source)
        self.nodes: dict[str, NodeInfo] = {}
        self._status: dict[str, set[str]] = {}
        self._busy: dict[str, set[str]] = {}  # node -> images its pullers / pending pods pull
        self._pullers: dict[str, int] = {}  # node -> puller pods there
        self._pending: dict[str, int] = {}  # node -> bound pods still Pending there
        #: this tick's requests: node -> images for its puller pod
        self.requests: dict[str, list[str]] = {}
        self.refused_disk_pressure = 0

    def refresh(
        self,
        nodes: Iterable[NodeInfo],
        pods: Iterable[Mapping[str, Any]],
        active: Iterable[tuple[str, Iterable[str]]] = (),
    ) -> None:
        """Take this tick's copy: NodeInfos (clones), every pod object (puller pods among them are
        skipped) and the active pre-pulls ``(node, images)``; clears the requests."""
        self.index.sync()  # registry lookups done since the last tick: their images stop being opaque
        self.nodes = {ni.name: ni for ni in nodes if ni.node is not None}
        self._status = {
            name: _names(n for entry in ni.node.images for n in entry.names)  # type: ignore[union-attr]
            for name, ni in self.nodes.items()
        }
        self._busy, self._pullers, self._pending = {}, {}, {}
        for node, images in active:
            self._pullers[node] = self._pullers.get(node, 0) + 1
            self._busy.setdefault(node, set()).update(_names(images))
        for obj in pods:
            status = obj.get("status") or {}
            if is_puller(obj) or status.get("phase") not in (None, "", "Pending"):
                continue
            spec = obj.get("spec") or {}
            node = spec.get("nodeName") or ""
            if not node:
                continue
            images = [
                c.get("image", "")
                for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])
            ]
            self._pending[node] = self._pending.get(node, 0) + 1
            self._busy.setdefault(node, set()).update(_names(images))
        self.requests = {}
        self.refused_disk_pressure = 0

    def _image(self, image: str | CatalogueImage) -> tuple[str, str | None]:
        if isinstance(image, CatalogueImage):
            return image.name, image.digest_name
        found = self.catalogue.get(image)
        if found is not None:
            return found.name, found.digest_name
        return image, None

    def has_image(self, node: str, image: str | CatalogueImage) -> bool:
        name, digested = self._image(image)
        listed = self._status.get(node, set())
        return name in listed or (digested is not None and digested in listed)

    def pulling(self, node: str, image: str | CatalogueImage) -> bool:
        name, _ = self._image(image)
        return name in self._busy.get(node, set()) or name in self.requests.get(node, ())

    def pending_pulls(self, node: str) -> int:
        return self._pullers.get(node, 0) + self._pending.get(node, 0) + (1 if node in self.requests else 0)

    def layer_bytes(self, node: str, image: str | CatalogueImage) -> tuple[int, int]:
        img = image if isinstance(image, CatalogueImage) else self.catalogue.get(image)
        ni = self.nodes.get(node)
        if img is None or ni is None:
            return 0, 0
        present = self.index.present_layers(ni)
        coming: set[str] = set()
        for ref in self._busy.get(node, set()) | set(self.requests.get(node, ())):
            other = self.catalogue.get(ref)
            if other is not None:
                coming.update(layer.id for layer in other.unique_layers)
        have = flight = 0
        for layer in img.unique_layers:
            if layer.id in present:
                have += layer.size_bytes
            elif layer.id in coming:
                flight += layer.size_bytes
        return have, flight

    def store(self, node: str) -> NodeDisk:
        ni = self.nodes.get(node)
        if ni is None or ni.node is None:
            return NodeDisk(0, _UNBOUNDED)
        usage = sum(entry.size_bytes for entry in ni.node.images)
        capacity = ni.node.capacity.get(EPHEMERAL_STORAGE, 0) or _UNBOUNDED
        if has_disk_pressure(ni.node):
            usage = capacity
        images: set[str] = set()
        for name in self._status.get(node, set()):
            found = self.catalogue.get(name)
            images.add(found.name if found is not None else name)
        return NodeDisk(usage, capacity, images)

    def prepull(self, node: str, image: str | CatalogueImage, now: float | None = None) -> bool:
        """Queue ``image`` for ``node``'s puller pod of this tick; False (nothing queued) when the
        image is there or coming, the node is unknown, has DiskPressure or runs a puller pod, or
        the per-tick cap of new puller pods is reached."""
        name, _ = self._image(image)
        ni = self.nodes.get(node)
        if ni is None or ni.node is None or self.has_image(node, name) or self.pulling(node, name):
            return False
        if has_disk_pressure(ni.node):
            self.refused_disk_pressure += 1
            return False
        if self._pullers.get(node, 0):
            return False
        if node not in self.requests and len(self.requests) >= self.max_new_per_tick:
            return False
        self.requests.setdefault(node, []).append(name)
        return True
