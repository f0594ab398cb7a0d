"""What a scheduler plugin can know about image layers on a node, from the API alone.

Shared by :mod:`kubesched.plugins.imagepulltimesaved.image_pull_time_saved` (Score) and
:mod:`kubesched.plugins.imagecachewait.image_cache_wait` (Permit). A plugin never sees the simulator: the inputs
are the node's ``status.images`` (names + compressed sizes, as the kubelet reports them, at most
``nodeStatusMaxImages``), the pods in the node's ``NodeInfo`` (pods bound or assumed to the node:
their images are present or being pulled there) and an image catalogue that gives images as
content-addressed layer lists (:mod:`kubesched.images.catalogue`: only its file format is used).

Model:

* Every image name is normalised as container runtimes do (``nginx`` ->
  ``docker.io/library/nginx:latest``; :mod:`kubesched.images.names`), so ``nginx:1.25`` in a
  pod matches ``docker.io/library/nginx:1.25`` in node status (upstream ImageLocality does not).
* A node's *layer map* is ``layer id -> compressed bytes`` of every layer on the node or in flight
  to it: the layers of each catalogue image listed in status, plus the layers of the images of
  the node's pods and of the pre-pulls in flight its :data:`PREPULLS_IN_FLIGHT_ANNOTATION` lists
  (unless the index is built with ``prepulls=False``). An image missing from the catalogue is one opaque layer, identified by its
  normalised name(s) (``image:<canonical>``), of the size in node status.
* A pod's *layer groups* are its distinct layers (all containers and init containers); an
  unknown image is one group of its aliases (tag form, digest form), counted at most once.
* Node pull bandwidth (bytes/s): the node annotation or label ``bandwidth_key`` when it parses as
  a positive number, else the plugin's default.

* A node's *present map* (:meth:`ImageLayerIndex.present_layers`) is what is on the node for
  certain: the layers of the images its status lists, plus those of the images of its *started*
  pods, pods whose ``status.phase`` is ``Running``. The kubelet reports a pod ``Running`` only once
  every container has been created (a container not started yet keeps the pod ``Pending``;
  ``pkg/kubelet/kubelet_pods.go: getPhase``), so every image of such a pod is on the node, and
  the kubelet's image GC never removes an image a container uses. The scheduler's pod informer
  sees that phase as soon as the kubelet writes it, while ``status.images`` follows only at the
  kubelet's next node status update (``nodeStatusUpdateFrequency``, 10 s): without the started
  pods, an image pulled 1-10 s ago would still count as a pull in flight, and whether a pod
  arriving then finds it present would depend on where the pull ended on the kubelet's 10 s
  grid. A pod that ended leaves the scheduler's cache (terminal pods are not cached), so its
  images count again only once the node's status lists them.
* A node's *in-flight map* (:meth:`ImageLayerIndex.in_flight_layers`) is the part of the layer map
  not present: the images of its pods not started yet and its pre-pulls in flight, less the layers
  the node already has.
* Counts for the per-pull and per-layer terms of the pull model (:mod:`kubesched.images.pull_model`):
  an image is *listed* on a node when one of its names (normalised) is in the node's status or is
  an image of one of its started pods; the kubelet pulls an image that is not listed (one per-pull
  cost) and fetches each of its layers the node lacks (one per-layer cost each). An unknown image
  counts as one layer.

The maps of a node are cached per (Node object, ``NodeInfo.generation``: a pod's phase changing
takes a generation, as any pod update does), so a scheduling cycle costs one dict lookup per node
once the cluster is warm.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.framework.node_info import NodeInfo
from kubesched.images.catalogue import CatalogueImage, ImageCatalogue, load_catalogue
from kubesched.images.names import InvalidImageReference, parse_image_ref
from kubesched.images.pull_model import DEFAULT_PULL_BYTES_PER_SECOND

__all__ = [
    "BANDWIDTH_KEY",
    "PREPULLS_IN_FLIGHT_ANNOTATION",
    "prepulls_in_flight",
    "pod_started",
    "LayerGroup",
    "LayerSource",
    "ImageLayerIndex",
    "image_aliases",
]

#: Node annotation (or label) giving the node's image pull throughput in bytes per second.
BANDWIDTH_KEY = "kubesched.io/image-pull-bytes-per-second"

#: Node annotation a pre-pull agent keeps while it pulls images onto the node for no pod yet: the
#: image references, comma-separated (``"pytorch/pytorch:2.7.1-cuda11.8-cudnn9-devel,nginx:1.25"``).
#: The agent sets it when a pull starts and drops an image once the node's ``status.images`` lists
#: it (or the pull failed), so a scheduler sees the pull in flight in between, as it sees the pulls
#: of the node's bound pods.
PREPULLS_IN_FLIGHT_ANNOTATION = "kubesched.io/prepulls-in-flight"


def pod_started(pod: Pod) -> bool:
    """True when ``pod``'s ``status.phase`` is ``Running``: the kubelet has created every container
    of it (``pkg/kubelet/kubelet_pods.go: getPhase`` keeps a pod ``Pending`` while a container has
    not started), so every image of the pod is on its node."""
    return pod.phase == "Running"


def prepulls_in_flight(node: Node | None) -> tuple[str, ...]:
    """The image references of ``node``'s :data:`PREPULLS_IN_FLIGHT_ANNOTATION` (empty strings
    and surrounding blanks dropped; ``()`` without the annotation or without a Node)."""
    if node is None:
        return ()
    value = node.annotations.get(PREPULLS_IN_FLIGHT_ANNOTATION)
    if not value:
        return ()
    return tuple(ref for ref in (part.strip() for part in value.split(",")) if ref)


_OPAQUE = "image:"


class LayerSource(Protocol):
    """Where layers of images missing from the catalogue come from (a registry, in the
    background): ``lookup`` must never block; ``generation`` grows whenever an answer changes."""

    generation: int

    def lookup(self, ref: str) -> CatalogueImage | None: ...


def image_aliases(ref: str) -> tuple[str, ...]:
    """Opaque-layer ids of an image reference: ``image:<canonical>`` plus ``image:<name:tag>`` and
    ``image:<name@digest>`` when the reference has both forms. An invalid reference is used
    verbatim (``image:<ref>``), as the runtime would fail on it anyway."""
    try:
        r = parse_image_ref(ref)
    except InvalidImageReference:
        return (_OPAQUE + ref,)
    out = [_OPAQUE + r.canonical]
    for form in (r.tagged, r.digested):
        if form is not None and _OPAQUE + form not in out:
            out.append(_OPAQUE + form)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class LayerGroup:
    """One distinct layer of a pod's images: ``ids`` (one layer id, or the aliases of an unknown
    image) and ``size`` (bytes; 0 when the image is unknown to the catalogue, the node's map then
    gives the size)."""

    ids: tuple[str, ...]
    size: int

    def bytes_on(self, layers: dict[str, int]) -> int:
        """Bytes of this group present or in flight according to a node layer map."""
        if len(self.ids) == 1:
            return layers.get(self.ids[0], 0)
        return max((layers.get(i, 0) for i in self.ids), default=0)


class ImageLayerIndex:
    """Layer maps of nodes and layer groups of pods (see the module docstring).

    Args: ``catalogue_path`` (YAML file in the catalogue format; None = the shipped default),
    ``bandwidth_key`` (node annotation/label with the pull throughput, bytes/s) and
    ``default_bandwidth`` (bytes/s, > 0). Raises ConfigError for an unreadable/invalid catalogue.
    """

    def __init__(
        self,
        catalogue_path: str | None = None,
        bandwidth_key: str = BANDWIDTH_KEY,
        default_bandwidth: float = DEFAULT_PULL_BYTES_PER_SECOND,
        catalogue: ImageCatalogue | None = None,
        source: LayerSource | None = None,
        prepulls: bool = True,
    ) -> None:
        self.prepulls = prepulls
        self.catalogue = catalogue if catalogue is not None else load_catalogue(catalogue_path)
        self.source = source
        self._source_generation = source.generation if source is not None else 0
        self.bandwidth_key = bandwidth_key
        self.default_bandwidth = float(default_bandwidth)
        self._status_cache: dict[str, tuple[Node, dict[str, int]]] = {}
        #: node -> identities (:meth:`image_ids`) of the images its status lists
        self._listed_cache: dict[str, tuple[Node, frozenset[str]]] = {}
        self._pod_images_cache: dict[tuple[str, ...], tuple[tuple[str, ...], ...]] = {}
        self._flight_counts: dict[str, tuple[Node | None, int, int, int]] = {}
        self._node_cache: dict[str, tuple[Node | None, int, dict[str, int]]] = {}
        self._flight_cache: dict[str, tuple[Node | None, int, dict[str, int], int]] = {}
        #: node -> (Node, generation, present map, listed identities) with its started pods' images
        self._present_cache: dict[str, tuple[Node | None, int, dict[str, int], frozenset[str]]] = {}
        self._pod_cache: dict[tuple[str, ...], tuple[LayerGroup, ...]] = {}
        self._image_cache: dict[str, CatalogueImage | None] = {}
        #: canonical-alias id -> size (bytes) of unknown images seen in any node's status
        self._opaque_sizes: dict[str, int] = {}

    # ------------------------------------------------------------------ images

    def lookup(self, ref: str) -> CatalogueImage | None:
        """The catalogue image of ``ref`` (any spelling), else the layer source's answer (never
        blocking: None until a background lookup completes), else None."""
        try:
            return self._image_cache[ref]
        except KeyError:
            image = self.catalogue.get(ref)
            if image is None and self.source is not None:
                image = self.source.lookup(ref)
            self._image_cache[ref] = image
            return image

    def sync(self) -> bool:
        """Drop every cached map when the layer source learned something since the last call (so the
        images it looked up stop being opaque). Returns True when the caches were dropped. Cheap:
        one integer comparison when nothing changed."""
        source = self.source
        if source is None or source.generation == self._source_generation:
            return False
        self._source_generation = source.generation
        for cache in (
            self._status_cache,
            self._node_cache,
            self._flight_cache,
            self._pod_cache,
            self._image_cache,
            self._opaque_sizes,
            self._listed_cache,
            self._pod_images_cache,
            self._flight_counts,
            self._present_cache,
        ):
            cache.clear()
        return True

    def pod_groups(self, pod: Pod) -> tuple[LayerGroup, ...]:
        """Distinct layer groups of all the pod's images (init containers and containers)."""
        key = pod.images
        groups = self._pod_cache.get(key)
        if groups is None:
            groups = self._pod_cache[key] = self._groups(key)
        return groups

    def _groups(self, refs: Sequence[str]) -> tuple[LayerGroup, ...]:
        seen: set[tuple[str, ...]] = set()
        out: list[LayerGroup] = []
        for ref in refs:
            image = self.lookup(ref)
            if image is None:
                ids = image_aliases(ref)
                if ids not in seen:
                    seen.add(ids)
                    out.append(LayerGroup(ids, 0))
                continue
            for layer in image.unique_layers:
                ids = (layer.id,)
                if ids not in seen:
                    seen.add(ids)
                    out.append(LayerGroup(ids, layer.size_bytes))
        return tuple(out)

    def pod_bytes(self, pod: Pod) -> int:
        """Total compressed bytes of the pod's distinct layers known to the catalogue, plus the
        largest status-reported size of each unknown image (0 if no node reported it)."""
        total = 0
        for g in self.pod_groups(pod):
            total += g.size if g.size else max((self._opaque_sizes.get(i, 0) for i in g.ids), default=0)
        return total

    def image_ids(self, ref: str) -> tuple[str, ...]:
        """Identities of the image ``ref`` names: its catalogue (or looked-up) name, else its opaque
        aliases (:func:`image_aliases`). Two references name the same image when they share one."""
        image = self.lookup(ref)
        return (image.name,) if image is not None else image_aliases(ref)

    def pod_images(self, pod: Pod) -> tuple[tuple[str, ...], ...]:
        """The pod's distinct images (init containers and containers), each as :meth:`image_ids`."""
        key = pod.images
        out = self._pod_images_cache.get(key)
        if out is None:
            seen: list[tuple[str, ...]] = []
            for ref in key:
                ids = self.image_ids(ref)
                if not any(set(ids).intersection(other) for other in seen):
                    seen.append(ids)
            out = self._pod_images_cache[key] = tuple(seen)
        return out

    # ------------------------------------------------------------------ nodes

    def bandwidth(self, node: Node | None) -> float:
        """Pull throughput of ``node`` in bytes/s (annotation, then label, then the default)."""
        if node is not None:
            for source in (node.annotations, node.labels):
                raw = source.get(self.bandwidth_key)
                if raw is None:
                    continue
                try:
                    value = float(raw)
                except (TypeError, ValueError):
                    continue
                if value > 0 and value != float("inf"):
                    return value
        return self.default_bandwidth

    def _status_layers(self, node: Node) -> dict[str, int]:
        cached = self._status_cache.get(node.name)
        if cached is not None and cached[0] is node:
            return cached[1]
        layers: dict[str, int] = {}
        for entry in node.images:
            image = None
            for name in entry.names:
                image = self.lookup(name)
                if image is not None:
                    break
            if image is not None:
                for layer in image.unique_layers:
                    layers[layer.id] = layer.size_bytes
                continue
            for name in entry.names:
                for alias in image_aliases(name):
                    layers[alias] = max(layers.get(alias, 0), entry.size_bytes)
                    if entry.size_bytes > self._opaque_sizes.get(alias, 0):
                        self._opaque_sizes[alias] = entry.size_bytes
        self._status_cache[node.name] = (node, layers)
        return layers

    def listed_images(self, node: Node) -> frozenset[str]:
        """Identities (:meth:`image_ids`) of every image the node's status lists (cached per Node
        object)."""
        cached = self._listed_cache.get(node.name)
        if cached is not None and cached[0] is node:
            return cached[1]
        ids: set[str] = set()
        for entry in node.images:
            for name in entry.names:
                ids.update(self.image_ids(name))
                ids.update(image_aliases(name))
        listed = frozenset(ids)
        self._listed_cache[node.name] = (node, listed)
        return listed

    def _add_pod_images(self, layers: dict[str, int], refs: Iterable[str]) -> None:
        for ref in refs:
            image = self.lookup(ref)
            if image is not None:
                for layer in image.unique_layers:
                    layers.setdefault(layer.id, layer.size_bytes)
                continue
            aliases = image_aliases(ref)
            size = max((self._opaque_sizes.get(a, 0) for a in aliases), default=0)
            for alias in aliases:
                if layers.get(alias, 0) < size:
                    layers[alias] = size

    def node_layers(self, ni: NodeInfo) -> dict[str, int]:
        """``layer id -> bytes`` present on or in flight to the node (status images + the images of
        the node's bound/assumed pods and of its pre-pulls in flight). The dict is shared: do not
        mutate it."""
        node = ni.node
        cached = self._node_cache.get(ni.name)
        if cached is not None and cached[0] is node and cached[1] == ni.generation:
            return cached[2]
        base = self.present_layers(ni)
        refs = self.flight_refs(ni)
        if refs:
            layers = dict(base)
            self._add_pod_images(layers, refs)
        else:
            layers = base
        self._node_cache[ni.name] = (node, ni.generation, layers)
        return layers

    def flight_refs(self, ni: NodeInfo) -> list[str]:
        """Image references the node may still be getting for its work: the images of its
        bound/assumed pods not started yet (:func:`pod_started`: a started pod's images are
        present), then (``prepulls``) those of its :data:`PREPULLS_IN_FLIGHT_ANNOTATION` (a
        pre-pull in flight counts as a pull of a bound pod would)."""
        refs = [ref for pi in ni.pods if not pod_started(pi.pod) for ref in pi.pod.images]
        if self.prepulls:
            refs.extend(prepulls_in_flight(ni.node))
        return refs

    def in_flight_layers(self, ni: NodeInfo) -> tuple[dict[str, int], int]:
        """``(layer id -> bytes, total bytes)`` of the layers of the images in :meth:`flight_refs`
        that are not present (:meth:`present_layers`): the pulls the node still has to finish (or
        has just finished for a pod not started yet). Cached per (Node object, generation); do
        not mutate the dict."""
        node = ni.node
        cached = self._flight_cache.get(ni.name)
        if cached is not None and cached[0] is node and cached[1] == ni.generation:
            return cached[2], cached[3]
        present = self.present_layers(ni)
        coming: dict[str, int] = {}
        refs = self.flight_refs(ni)
        if refs:
            self._add_pod_images(coming, refs)
        flight = {lid: size for lid, size in coming.items() if not present.get(lid)}
        total = sum(flight.values())
        self._flight_cache[ni.name] = (node, ni.generation, flight, total)
        return flight, total

    def _pending_pulls(self, ni: NodeInfo, refs: Iterable[str]) -> tuple[int, int, int]:
        """``(bytes, layers, images)`` the node still has to pull for images ``refs``: the distinct
        images among them it does not list (:meth:`listed`), and their distinct layers it lacks (an
        unknown image: one layer of its largest reported size)."""
        listed = self.listed(ni)
        present = self.present_layers(ni)
        images: list[tuple[str, ...]] = []
        layers: dict[str, int] = {}
        for ref in refs:
            ids = self.image_ids(ref)
            if listed.intersection(ids) or any(set(ids).intersection(other) for other in images):
                continue
            images.append(ids)
            image = self.lookup(ref)
            if image is None:
                if not any(present.get(a) for a in ids):
                    layers[ids[0]] = max((self._opaque_sizes.get(a, 0) for a in ids), default=0)
                continue
            for layer in image.unique_layers:
                if not present.get(layer.id):
                    layers.setdefault(layer.id, layer.size_bytes)
        return sum(layers.values()), len(layers), len(images)

    def in_flight_counts(self, ni: NodeInfo) -> tuple[int, int]:
        """``(layers, images)`` of the pulls the node still has to make for its bound/assumed pods
        (the per-layer and per-pull terms of the bytes of :meth:`in_flight_layers`): their distinct
        images it does not list (:meth:`listed`), and those images' layers it lacks. Cached per (Node
        object, generation)."""
        node = ni.node
        cached = self._flight_counts.get(ni.name)
        if cached is not None and cached[0] is node and cached[1] == ni.generation:
            return cached[2], cached[3]
        _, layers, images = self._pending_pulls(ni, self.flight_refs(ni))
        self._flight_counts[ni.name] = (node, ni.generation, layers, images)
        return layers, images

    def pull_counts(self, pod: Pod, ni: NodeInfo) -> tuple[int, int, int]:
        """``(listed, present, in_flight)``: how many of the pod's distinct images the node lists
        (:meth:`listed`: pulls the pod does not make there), how many of its distinct layers are
        present (:meth:`present_layers`), and how many of its other layers are in flight to the
        node (the counts beside the bytes of :meth:`saved_parts`)."""
        node = ni.node
        if node is None:
            return 0, 0, 0
        present_map = self.present_layers(ni)
        flight, total = self.in_flight_layers(ni)
        if not present_map and not total:
            return 0, 0, 0
        listed_ids = self.listed(ni)
        listed = sum(1 for ids in self.pod_images(pod) if listed_ids.intersection(ids))
        present = ours = 0
        for g in self.pod_groups(pod):
            if present_map and g.bytes_on(present_map):
                present += 1
            elif total and g.bytes_on(flight):
                ours += 1
        return listed, present, ours

    def missing_pulls(self, pod: Pod, ni: NodeInfo) -> tuple[int, int, int]:
        """``(bytes, layers, images)`` the pod would pull itself on the node: its images the node does
        not list (:meth:`listed`), and their layers neither present on nor in flight to the node
        (bytes as :meth:`missing_bytes`)."""
        listed = self.listed(ni)
        images = sum(1 for ids in self.pod_images(pod) if not listed.intersection(ids))
        layers = self.node_layers(ni)
        count = 0
        for g in self.pod_groups(pod):
            if not g.bytes_on(layers):
                count += 1
        return self.missing_bytes(pod, ni), count, images

    def in_flight_pulls(self, ni: NodeInfo, exclude: Pod | None = None) -> tuple[int, int, int]:
        """``(bytes, layers, images)`` the node is still pulling for its pods not started yet
        (``exclude`` left out) and its pre-pulls in flight: bytes as :meth:`in_flight_bytes`, the
        distinct layers behind them and the images it does not list (:meth:`listed`). With
        serialized pulls a new pull queues behind these."""
        refs = [
            ref
            for pi in ni.pods
            if (exclude is None or pi.pod.uid != exclude.uid) and not pod_started(pi.pod)
            for ref in pi.pod.images
        ]
        if self.prepulls:
            refs.extend(prepulls_in_flight(ni.node))
        _, layers, images = self._pending_pulls(ni, refs)
        return self.in_flight_bytes(ni, exclude), layers, images

    def saved_parts(self, pod: Pod, ni: NodeInfo) -> tuple[int, int, int]:
        """``(present, in_flight, node_in_flight)`` bytes: the pod's distinct layers present on the
        node (:meth:`present_layers`), the pod's other layers in flight to it, and every byte in
        flight to it (:meth:`in_flight_layers`)."""
        present_map = self.present_layers(ni)
        flight, total = self.in_flight_layers(ni)
        if not present_map and not total:
            return 0, 0, 0
        present = ours = 0
        for g in self.pod_groups(pod):
            have = g.bytes_on(present_map) if present_map else 0
            if have:
                present += have
            elif total:
                ours += g.bytes_on(flight)
        return present, ours, total

    def present_layers(self, ni: NodeInfo) -> dict[str, int]:
        """``layer id -> bytes`` on the node for certain: the layers of the images its status lists
        and of the images of its started pods (:func:`pod_started`); no pulls in flight. Cached
        per (Node object, generation); do not mutate the dict."""
        return self._present(ni)[0]

    def listed(self, ni: NodeInfo) -> frozenset[str]:
        """Identities (:meth:`image_ids` and :func:`image_aliases`) of the images on the node for
        certain: those its status lists (:meth:`listed_images`) and those of its started pods.
        A pod does not pull these there."""
        return self._present(ni)[1]

    def _present(self, ni: NodeInfo) -> tuple[dict[str, int], frozenset[str]]:
        node = ni.node
        cached = self._present_cache.get(ni.name)
        if cached is not None and cached[0] is node and cached[1] == ni.generation:
            return cached[2], cached[3]
        layers = self._status_layers(node) if node is not None else {}
        listed = self.listed_images(node) if node is not None else frozenset()
        refs = [ref for pi in ni.pods if pod_started(pi.pod) for ref in pi.pod.images]
        if refs:
            layers = dict(layers)
            self._add_pod_images(layers, refs)
            ids = set(listed)
            for ref in refs:
                ids.update(self.image_ids(ref))
                ids.update(image_aliases(ref))
            listed = frozenset(ids)
        self._present_cache[ni.name] = (node, ni.generation, layers, listed)
        return layers, listed

    def saved_bytes(self, pod: Pod, ni: NodeInfo) -> int:
        """Bytes of the pod's distinct layers present on or in flight to the node."""
        layers = self.node_layers(ni)
        if not layers:
            return 0
        return sum(g.bytes_on(layers) for g in self.pod_groups(pod))

    def missing_bytes(self, pod: Pod, ni: NodeInfo) -> int:
        """Bytes of the pod's distinct layers neither present on nor in flight to the node (an
        unknown image counts with its largest reported size)."""
        layers = self.node_layers(ni)
        missing = 0
        for g in self.pod_groups(pod):
            if g.bytes_on(layers):
                continue
            missing += g.size if g.size else max((self._opaque_sizes.get(i, 0) for i in g.ids), default=0)
        return missing

    def absent_from_status(self, pod: Pod, ni: NodeInfo) -> bool:
        """True when some of the pod's layers are not present on the node (:meth:`present_layers`:
        listed in its status or an image of its started pods), so the pod would wait for a pull,
        its own or one in flight."""
        present = self.present_layers(ni)
        return any(not g.bytes_on(present) for g in self.pod_groups(pod))

    def in_flight_bytes(self, ni: NodeInfo, exclude: Pod | None = None) -> int:
        """Bytes the node is still pulling for its pods not started yet (``exclude`` left out) and its
        pre-pulls in flight (:meth:`flight_refs`): layers of their images not present
        (:meth:`present_layers`). With serialized pulls a new pull queues behind these."""
        present = self.present_layers(ni)
        coming: dict[str, int] = {}
        for pi in ni.pods:
            if (exclude is not None and pi.pod.uid == exclude.uid) or pod_started(pi.pod):
                continue
            self._add_pod_images(coming, pi.pod.images)
        if self.prepulls:
            self._add_pod_images(coming, prepulls_in_flight(ni.node))
        return sum(size for lid, size in coming.items() if lid not in present)
