"""Cluster-wide image states (``pkg/scheduler/backend/cache/cache.go`` ``AddNode``/``UpdateNode``;
``addNodeImageStates`` / ``removeNodeImageStates``
in ``pkg/scheduler/backend/cache/cache.go`` and ``ImageStateSummary`` in
``pkg/scheduler/framework/types.go``).

The table maps **every** name in ``node.status.images[*].names`` (tag and digest forms alike)
to an :class:`ImageState`: the size in bytes taken from the *first* node that reported the
name (upstream never updates it) and the set of node names reporting it. A name is dropped
when its last node loses it.

How ``num_nodes`` reaches a NodeInfo, as upstream does it: a node's cached NodeInfo points at
the shared global states of its own images, and ``NodeInfo.Snapshot()`` computes
``ImageStateSummary(size, num_nodes=len(nodes))`` at the moment it clones the node. So a
node's counts are (re)computed when the node is added/updated and whenever the node itself
changed since the last snapshot (its clone is refreshed); a node that did *not* change keeps
the counts of its previous clone even if other nodes gained or lost the image meanwhile.
ImageLocality therefore sees slightly stale ``num_nodes`` on unchanged nodes, exactly as
upstream.

kubesched's NodeInfo keeps plain :class:`~kubesched.framework.node_info.ImageStateSummary`
dicts, so the cache holds the references (:meth:`ImageStateTable.add_node` returns them) and
builds the summary dict with :func:`summarize` right before cloning. ``version`` changes
whenever any state changes, so a summary dict is rebuilt only when something could differ.
Summary dicts and ``ImageStateSummary`` objects are never mutated after being built: snapshots
share them, and one summary object per (image, node count) is shared by all nodes.

``recounted`` names the images whose node count changed since :meth:`ImageStateTable.take_recounted`
last emptied it (a node update that removes and re-adds an image leaves its count, and the set,
as they were): the nodes holding them are the only ones whose clone a recount could change (the
cache's :meth:`~kubesched.cache.cache.Cache.refresh_image_counts`).
"""

from __future__ import annotations

from kubesched.api.node import Node
from kubesched.framework.node_info import ImageStateSummary


class ImageState:
    """One image name cluster-wide: ``size`` (bytes) and the ``nodes`` (names) that report it.

    ``summary`` caches the :class:`ImageStateSummary` for the current node count (``None`` after
    any change of ``nodes``). Summaries are never mutated, so every NodeInfo (and snapshot)
    holding the image with the same count shares one object instead of allocating its own."""

    __slots__ = ("size", "nodes", "summary")

    def __init__(self, size: int, nodes: set[str]) -> None:
        self.size = size
        self.nodes = nodes
        self.summary: ImageStateSummary | None = None

    def __repr__(self) -> str:
        return f"ImageState(size={self.size}, nodes={sorted(self.nodes)})"


class ImageStateTable:
    """``cacheImpl.imageStates``: image name -> :class:`ImageState`. Not thread-safe on its own
    (the cache's lock guards it)."""

    __slots__ = ("_states", "version", "recounted")

    def __init__(self) -> None:
        self._states: dict[str, ImageState] = {}
        #: Bumped on every change of any state (add/remove of a node name, creation, deletion).
        self.version = 0
        #: Image names whose node count changed since the last :meth:`take_recounted`.
        self.recounted: set[str] = set()

    def add_node(self, node: Node) -> dict[str, ImageState]:
        """``addNodeImageStates``: register ``node``'s images; returns ``name -> ImageState`` for every
        image name of the node (the references its NodeInfo summarises)."""
        refs, gained = self._add(node)
        self.recounted |= gained
        return refs

    def replace_node(self, old: Node | None, new: Node) -> dict[str, ImageState]:
        """``removeNodeImageStates(old)`` then ``addNodeImageStates(new)`` (a node update); returns
        what :meth:`add_node` returns. Only the names ``new`` gained or lost against ``old`` count
        as recounted."""
        lost = self._remove(old)
        refs, gained = self._add(new)
        self.recounted |= lost ^ gained
        return refs

    def _add(self, node: Node) -> tuple[dict[str, ImageState], set[str]]:
        """Register ``node``'s images: (its refs, the names whose node set gained it)."""
        refs: dict[str, ImageState] = {}
        gained: set[str] = set()
        states = self._states
        for image in node.images:
            for name in image.names:
                st = states.get(name)
                if st is None:
                    st = ImageState(image.size_bytes, {node.name})
                    states[name] = st
                    gained.add(name)
                elif node.name not in st.nodes:
                    st.nodes.add(node.name)
                    st.summary = None
                    gained.add(name)
                refs.setdefault(name, st)
        if refs:
            self.version += 1
        return refs, gained

    def remove_node(self, node: Node | None) -> None:
        """``removeNodeImageStates``: drop ``node`` from the states of its images, deleting names no
        node reports any more. ``None`` (a NodeInfo without a node) is a no-op."""
        self.recounted |= self._remove(node)

    def _remove(self, node: Node | None) -> set[str]:
        """Drop ``node`` from its images' states: the names whose node set lost it."""
        lost: set[str] = set()
        if node is None:
            return lost
        states = self._states
        for image in node.images:
            for name in image.names:
                st = states.get(name)
                if st is not None and node.name in st.nodes:
                    lost.add(name)
                    st.nodes.discard(node.name)
                    st.summary = None
                    if not st.nodes:
                        del states[name]
        if lost:
            self.version += 1
        return lost

    def take_recounted(self) -> set[str]:
        """The image names whose node count changed since the previous call (then none)."""
        out, self.recounted = self.recounted, set()
        return out

    def get(self, name: str) -> ImageState | None:
        """The state of image ``name`` (live object; do not mutate) or ``None``."""
        return self._states.get(name)

    def num_nodes(self, name: str) -> int:
        """Number of nodes currently reporting image ``name`` (0 if none)."""
        st = self._states.get(name)
        return len(st.nodes) if st is not None else 0

    def names(self) -> list[str]:
        """All image names known cluster-wide (insertion order)."""
        return list(self._states)

    def __len__(self) -> int:
        return len(self._states)


def summarize(refs: dict[str, ImageState]) -> dict[str, ImageStateSummary]:
    """``ImageStateSummary.Snapshot()`` for each ref: ``ImageStateSummary(size, len(nodes))`` (shared,
    read-only objects)."""
    out: dict[str, ImageStateSummary] = {}
    for name, st in refs.items():
        summ = st.summary
        if summ is None:
            summ = st.summary = ImageStateSummary(st.size, len(st.nodes))
        out[name] = summ
    return out
