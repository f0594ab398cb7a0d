"""The scheduler cache (``pkg/scheduler/backend/cache/cache.go``).

It aggregates pods (bound and *assumed*) per node into :class:`NodeInfo` objects, keeps the
node tree (zone round-robin order, :mod:`kubesched.cache.node_tree`) and the cluster-wide
image states (:mod:`kubesched.cache.image_states`), and copies what changed into a
:class:`Snapshot` once per scheduling cycle.

Pod state machine (``pkg/scheduler/backend/cache/cache.go``), keyed by pod **UID**::

    assume_pod ──> assumed ──add_pod (informer)──> added ──update_pod──> added
        │             │                              └──remove_pod──> gone
        │             └──forget_pod──> gone
        └ finish_binding only sets a flag (assumed pods never expire: upstream's TTL is 0)

Node bookkeeping (``pkg/scheduler/backend/cache/cache.go`` ``AddNode``/``UpdateNode``): every mutation of a
NodeInfo bumps its ``generation`` (a global
counter) and moves it to the most-recent end of a recency list (an ``OrderedDict``;
upstream uses a doubly linked list with the head as most recent). ``remove_node`` keeps a
*ghost* NodeInfo (``node is None``) while pods remain on it; ghosts, and NodeInfos created
because pods arrived before their node, never appear in snapshots.

Snapshot update (``pkg/scheduler/backend/cache/cache.go`` ``UpdateSnapshot``) walks the recency list from
the most recent item while
``generation > snapshot.generation`` — O(changed nodes) — cloning each changed NodeInfo into
the snapshot **in place** (the snapshot's NodeInfo object keeps its identity, as upstream's
``*existing = *clone``; only its fields are replaced). Upstream quirks kept on purpose
because they influence scheduling order:

* ``node_info_list`` is re-read from the node tree only when nodes were added to or removed
  from the snapshot. A node deleted and re-added (or moved to another zone) between two
  updates keeps its old position until the next add/remove.
* Image ``num_nodes`` of a node is computed when that node is cloned; unchanged nodes keep
  older counts (see :mod:`kubesched.cache.image_states`). :meth:`Cache.refresh_image_counts`
  gives the snapshot an update of every Node would give (kubelets' periodic status reports)
  by re-cloning only the nodes whose counts that changes.
* ``node_count()`` counts ghosts too (upstream ``NodeCount`` is ``len(cache.nodes)``).

The affinity sublists and ``used_pvc_set`` are kept equal to what upstream's O(nodes)
rebuild produces, but are updated incrementally (bisect by ``Snapshot.node_index``, PVC
node-count deltas) so a cycle costs O(changed nodes) unless nodes were added/removed.

Thread safety: every public method takes the single cache lock.
"""

from __future__ import annotations

import logging
import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.cache.errors import CacheCorruptedError, CacheError, SnapshotInconsistentError
from kubesched.cache.image_states import ImageState, ImageStateTable, summarize
from kubesched.cache.node_tree import NodeTree
from kubesched.framework.node_info import NodeInfo, next_generation
from kubesched.framework.node_table import NodeTable
from kubesched.framework.snapshot import Snapshot

log = logging.getLogger(__name__)

_NODE_INFO_SLOTS: tuple[str, ...] = tuple(NodeInfo.__slots__)


@dataclass(slots=True)
class _PodState:
    pod: Pod
    binding_finished: bool = False


class _NodeItem:
    """A cached NodeInfo plus the image-state references its ``image_states`` summarises."""

    __slots__ = ("info", "image_refs", "image_version")

    def __init__(self, info: NodeInfo) -> None:
        self.info = info
        self.image_refs: dict[str, ImageState] = {}
        self.image_version = -1  # forces a summary rebuild


@dataclass(slots=True)
class SnapshotUpdate:
    """What :meth:`Cache.update_snapshot` changed: ``changed`` node names whose NodeInfo was
    (re)cloned (most recent first, including newly added nodes), ``removed`` node names dropped
    from the snapshot, and ``lists_rebuilt`` if ``node_info_list`` was rebuilt from the node
    tree (positions may have changed)."""

    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    lists_rebuilt: bool = False


@dataclass(slots=True)
class CacheDump:
    """``cache.Dump``: a clone of every cached NodeInfo (ghosts included, keyed by node name)
    and the UIDs of assumed pods."""

    nodes: dict[str, NodeInfo]
    assumed_pods: set[str]


def _pod_ref(pod: Pod) -> str:
    """``<uid>(<ns>/<name>)`` as in upstream's ``pod %v(%v)`` messages (key = UID, ``klog.KObj``)."""
    return f"{pod.uid}({pod.key})"


class Cache:
    """The scheduler cache. See the module docstring for semantics; all methods are thread-safe.

    Errors are :class:`~kubesched.cache.errors.CacheError` (upstream's returned errors) or
    :class:`~kubesched.cache.errors.CacheCorruptedError` (upstream exits the process).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # node name -> item; iteration order = recency (last = most recently mutated)
        self._nodes: OrderedDict[str, _NodeItem] = OrderedDict()
        self._pod_states: dict[str, _PodState] = {}
        self._assumed: set[str] = set()
        self._tree = NodeTree()
        self._images = ImageStateTable()
        self._recount_due = False

    # ------------------------------------------------------------------ pods

    def assume_pod(self, pod: Pod) -> None:
        """``AssumePod``: add ``pod`` (already bound in memory: ``pod.node_name`` set) to its node
        and mark it assumed. Raises :class:`CacheError`
        ``pod <uid>(<ns/name>) is in the cache, so can't be assumed`` if the UID is known."""
        with self._lock:
            if pod.uid in self._pod_states:
                raise CacheError(f"pod {_pod_ref(pod)} is in the cache, so can't be assumed")
            self._add_pod(pod, assumed=True)

    def finish_binding(self, pod: Pod) -> None:
        """``FinishBinding``: mark an assumed pod's binding as finished (no expiry: TTL is 0)."""
        with self._lock:
            st = self._pod_states.get(pod.uid)
            if st is not None and pod.uid in self._assumed:
                st.binding_finished = True

    def forget_pod(self, pod: Pod) -> None:
        """``ForgetPod``: remove an assumed pod (binding failed). Raises :class:`CacheError`
        ``pod <uid>(<ns/name>) was assumed on <pod node> but assigned to <cached node>`` if the
        node differs, or ``pod <uid>(<ns/name>) wasn't assumed so cannot be forgotten``."""
        with self._lock:
            st = self._pod_states.get(pod.uid)
            if st is not None and st.pod.node_name != pod.node_name:
                raise CacheError(
                    f"pod {_pod_ref(pod)} was assumed on {pod.node_name} but assigned to {st.pod.node_name}"
                )
            if st is not None and pod.uid in self._assumed:
                self._remove_pod(pod)
                return
            raise CacheError(f"pod {_pod_ref(pod)} wasn't assumed so cannot be forgotten")

    def add_pod(self, pod: Pod) -> None:
        """``AddPod`` (informer add of a bound pod). An assumed pod is confirmed: the assumed copy is
        replaced by ``pod`` (moving it if it landed on another node) and the assumed flag cleared.
        An unknown pod is added. Raises :class:`CacheError`
        ``pod <uid>(<ns/name>) was already in added state`` for an already-added pod."""
        with self._lock:
            st = self._pod_states.get(pod.uid)
            if st is not None and pod.uid in self._assumed:
                try:
                    self._update_pod(st.pod, pod)
                except CacheError as e:
                    log.error("Error occurred while updating pod %s: %s", pod.key, e)
                if st.pod.node_name != pod.node_name:
                    log.info(
                        "Pod was added to a different node than it was assumed: pod=%s assumedNode=%s "
                        "currentNode=%s",
                        pod.key,
                        pod.node_name,
                        st.pod.node_name,
                    )
            elif st is None:
                self._add_pod(pod, assumed=False)
            else:
                raise CacheError(f"pod {_pod_ref(pod)} was already in added state")

    def update_pod(self, old: Pod, new: Pod) -> None:
        """``UpdatePod`` (informer update of an added pod). Raises :class:`CacheError`
        ``pod <uid>(<ns/name>) is not added to scheduler cache, so cannot be updated`` or
        ``assumed pod <uid>(<ns/name>) should not be updated``; :class:`CacheCorruptedError` if
        ``new`` is on another node than the cached pod (upstream exits)."""
        with self._lock:
            st = self._pod_states.get(old.uid)
            if st is None:
                raise CacheError(f"pod {_pod_ref(old)} is not added to scheduler cache, so cannot be updated")
            if old.uid in self._assumed:
                raise CacheError(f"assumed pod {_pod_ref(old)} should not be updated")
            if st.pod.node_name != new.node_name:
                raise CacheCorruptedError(
                    f"pod {_pod_ref(old)} updated on a different node than previously added to: "
                    "scheduler cache is corrupted and can badly affect scheduling decisions"
                )
            self._update_pod(old, new)

    def remove_pod(self, pod: Pod) -> None:
        """``RemovePod`` (informer delete): remove the cached copy of ``pod`` (by UID). Raises
        :class:`CacheError` ``pod <uid>(<ns/name>) is not found in scheduler cache, so cannot be
        removed from it``; :class:`CacheCorruptedError` if ``pod.node_name`` is set and differs
        from the cached pod's node (an empty one is tolerated, as upstream)."""
        with self._lock:
            st = self._pod_states.get(pod.uid)
            if st is None:
                raise CacheError(
                    f"pod {_pod_ref(pod)} is not found in scheduler cache, so cannot be removed from it"
                )
            if st.pod.node_name != pod.node_name:
                log.error(
                    "Pod was added to a different node than it was assumed: pod=%s assumedNode=%s "
                    "currentNode=%s",
                    pod.key,
                    pod.node_name,
                    st.pod.node_name,
                )
                if pod.node_name:
                    raise CacheCorruptedError(
                        f"pod {_pod_ref(pod)} removed from node {pod.node_name} but cached on "
                        f"{st.pod.node_name}: scheduler cache is corrupted and can badly affect "
                        "scheduling decisions"
                    )
            self._remove_pod(st.pod)

    def is_assumed_pod(self, pod: Pod) -> bool:
        """``IsAssumedPod``: True if ``pod``'s UID is assumed (not yet confirmed by an informer add)."""
        with self._lock:
            return pod.uid in self._assumed

    def get_pod(self, pod: Pod) -> Pod:
        """``GetPod``: the cached copy of ``pod`` (by UID), possibly on a deleted node. Raises
        :class:`CacheError` ``pod <uid>(<ns/name>) does not exist in scheduler cache``."""
        with self._lock:
            st = self._pod_states.get(pod.uid)
            if st is None:
                raise CacheError(f"pod {_pod_ref(pod)} does not exist in scheduler cache")
            return st.pod

    def is_binding_finished(self, pod: Pod) -> bool:
        """True if ``finish_binding`` was called for this (still assumed) pod."""
        with self._lock:
            st = self._pod_states.get(pod.uid)
            return st is not None and st.binding_finished

    # lock held -----------------------------------------------------------

    def _add_pod(self, pod: Pod, assumed: bool) -> None:
        name = pod.node_name
        item = self._nodes.get(name)
        if item is None:
            item = _NodeItem(NodeInfo())
            self._nodes[name] = item
        else:
            self._nodes.move_to_end(name)
        item.info.add_pod(pod)
        self._pod_states[pod.uid] = _PodState(pod)
        if assumed:
            self._assumed.add(pod.uid)

    def _update_pod(self, old: Pod, new: Pod) -> None:
        name = old.node_name
        if name == new.node_name:
            item = self._nodes.get(name)
            if item is not None and item.info.replace_pod(old, new):
                self._nodes.move_to_end(name)
                self._pod_states.pop(old.uid, None)
                self._assumed.discard(old.uid)
                self._pod_states[new.uid] = _PodState(new)
                return
        self._remove_pod(old)
        self._add_pod(new, assumed=False)

    def _remove_pod(self, pod: Pod) -> None:
        name = pod.node_name
        item = self._nodes.get(name)
        if item is None:
            log.error("Node not found when trying to remove pod: node=%s pod=%s", name, pod.key)
        else:
            try:
                item.info.remove_pod(pod)
            except KeyError as e:
                raise CacheError(str(e.args[0])) from None
            if not item.info.pods and item.info.node is None:
                del self._nodes[name]
            else:
                self._nodes.move_to_end(name)
        self._pod_states.pop(pod.uid, None)
        self._assumed.discard(pod.uid)

    # ----------------------------------------------------------------- nodes

    def add_node(self, node: Node) -> NodeInfo:
        """``AddNode``: set ``node`` on its NodeInfo (creating it, or reviving a ghost / a NodeInfo
        whose pods arrived first), add it to the node tree and the image states. Returns a clone
        (``NodeInfo.snapshot()``) of the resulting NodeInfo."""
        with self._lock:
            item = self._nodes.get(node.name)
            if item is None:
                item = _NodeItem(NodeInfo())
                self._nodes[node.name] = item
            else:
                self._nodes.move_to_end(node.name)
            self._tree.add_node(node)
            self._set_node(item, node)
            return item.info.snapshot()

    def update_node(self, old: Node, new: Node) -> NodeInfo:
        """``UpdateNode``: like :meth:`add_node` for an existing node; the node tree moves the node
        only if its zone key changed (to the end of the new zone). Returns a clone of the NodeInfo."""
        with self._lock:
            item = self._nodes.get(new.name)
            if item is None:
                item = _NodeItem(NodeInfo())
                self._nodes[new.name] = item
                self._tree.add_node(new)
            else:
                self._nodes.move_to_end(new.name)
            self._tree.update_node(old, new)
            self._set_node(item, new)
            return item.info.snapshot()

    def remove_node(self, node: Node) -> None:
        """``RemoveNode``: clear the node from its NodeInfo; the NodeInfo is dropped if it has no
        pods, else kept as a ghost (never in snapshots) until its last pod is removed. Raises
        :class:`CacheError` ``node <name> is not found`` or (from the tree)
        ``node "<name>" in group "<zone>" was not found``."""
        with self._lock:
            item = self._nodes.get(node.name)
            if item is None:
                raise CacheError(f"node {node.name} is not found")
            item.info.remove_node()
            if not item.info.pods:
                del self._nodes[node.name]
            else:
                self._nodes.move_to_end(node.name)
            self._tree.remove_node(node)
            self._images.remove_node(node)

    def _set_node(self, item: _NodeItem, node: Node) -> None:
        """Set ``node`` on ``item``, its images replacing those of the node it had (if any)."""
        item.image_refs = self._images.replace_node(item.info.node, node)
        item.image_version = -1
        self._refresh_images(item)
        item.info.set_node(node)

    def _refresh_images(self, item: _NodeItem) -> None:
        """Recompute ``item.info.image_states`` (a new dict) if any image state changed since."""
        version = self._images.version
        if item.image_version != version:
            item.info.image_states = summarize(item.image_refs)
            item.image_version = version

    def refresh_image_counts(self) -> None:
        """Have the next :meth:`update_snapshot` re-clone every node
        whose snapshot clone counts the nodes of one of its images (``ImageStateSummary.NumNodes``)
        otherwise than the cache then does. That is the snapshot an update of every Node changing
        nothing else would give (a kubelet's status report that only renews
        ``lastHeartbeatTime``: upstream ``UpdateNode`` re-clones each updated node in
        ``UpdateSnapshot``, and ``NodeInfo.Snapshot`` recounts its images), for the cost of the
        nodes holding an image whose count changed since the previous recount. Every other clone
        is equal either way but for its Node object (the heartbeat not posted) and
        ``generation``."""
        with self._lock:
            self._recount_due = True

    def _mark_recounted(self, nmap: dict[str, NodeInfo]) -> None:
        """Mark changed (new generation, most recent) the nodes whose clone in ``nmap`` counts an
        image recounted since the previous call otherwise than now. Every clone counted right
        after the previous call, so only the holders of those images can differ."""
        images, nodes = self._images, self._nodes
        stale: set[str] = set()
        for image in images.take_recounted():
            st = images.get(image)
            if st is None:
                continue  # no node holds it: those that did lost it in an update of their own
            count = len(st.nodes)
            for name in st.nodes:
                clone = nmap.get(name)
                if clone is None or name in stale:
                    continue  # not in the snapshot yet: cloned anyway
                summary = clone.image_states.get(image)
                if summary is None or summary.num_nodes != count:
                    stale.add(name)
        for name in sorted(stale):
            item = nodes.get(name)
            if item is not None and item.info.node is not None:
                item.info.generation = next_generation()
                nodes.move_to_end(name)

    # -------------------------------------------------------------- snapshot

    def update_snapshot(self, snapshot: Snapshot) -> SnapshotUpdate:
        """``UpdateSnapshot``: bring ``snapshot`` up to date with the cache in O(changed nodes)
        (O(nodes) once when nodes were added or removed). Sets ``snapshot.generation`` to the
        highest NodeInfo generation. Returns a :class:`SnapshotUpdate`.

        Raises :class:`SnapshotInconsistentError` (after rebuilding the lists) if
        ``len(node_info_list)`` differs from the number of nodes in the tree; the message is
        upstream's ``snapshot state is not consistent, ...``."""
        with self._lock:
            return self._update_snapshot(snapshot)

    def _update_snapshot(self, snapshot: Snapshot) -> SnapshotUpdate:
        gen = snapshot.generation
        table = snapshot.node_table
        if table is None and gen == 0 and not snapshot.node_info_map:
            table = snapshot.node_table = NodeTable(max(256, len(self._nodes)))
        nmap = snapshot.node_info_map
        if self._recount_due:
            self._recount_due = False
            self._mark_recounted(nmap)
        nodes = self._nodes
        result = SnapshotUpdate()
        update_all = False
        # (snapshot NodeInfo, should be in the sublist) per flipped node, applied when not rebuilding
        aff_flips: list[tuple[NodeInfo, bool]] = []
        anti_flips: list[tuple[NodeInfo, bool]] = []
        pvc_deltas: list[tuple[dict[str, int], dict[str, int]]] = []

        for name in reversed(nodes):
            item = nodes[name]
            info = item.info
            if info.generation <= gen:
                break
            if info.node is None:
                continue
            self._refresh_images(item)
            clone = info.snapshot()
            result.changed.append(name)
            existing = nmap.get(name)
            if existing is None:
                update_all = True
                nmap[name] = clone
                if table is not None:
                    table.refresh(clone)
                continue
            has = bool(clone.pods_with_affinity)
            if bool(existing.pods_with_affinity) != has:
                aff_flips.append((existing, has))
            has = bool(clone.pods_with_required_anti_affinity)
            if bool(existing.pods_with_required_anti_affinity) != has:
                anti_flips.append((existing, has))
            old_pvc, new_pvc = existing.pvc_ref_counts, clone.pvc_ref_counts
            if (old_pvc or new_pvc) and old_pvc.keys() != new_pvc.keys():
                pvc_deltas.append((old_pvc, new_pvc))
            for s in _NODE_INFO_SLOTS:
                setattr(existing, s, getattr(clone, s))
            if table is not None:
                table.refresh(existing)

        if nodes:
            snapshot.generation = next(reversed(nodes.values())).info.generation

        if len(nmap) > self._tree.num_nodes:
            result.removed = self._remove_deleted_nodes(snapshot)
            update_all = True
            if table is not None:
                for name in result.removed:
                    table.remove(name)

        if update_all:
            self._rebuild_lists(snapshot)
            result.lists_rebuilt = True
        else:
            index = snapshot.node_index
            for ni, add in aff_flips:
                _flip(snapshot.have_pods_with_affinity_list, ni, add, index)
            for ni, add in anti_flips:
                _flip(snapshot.have_pods_with_required_anti_affinity_list, ni, add, index)
            if pvc_deltas:
                counts, used = snapshot.pvc_node_counts, snapshot.used_pvc_set
                for old_pvc, new_pvc in pvc_deltas:
                    for k in old_pvc.keys() - new_pvc.keys():
                        c = counts[k] - 1
                        if c:
                            counts[k] = c
                        else:
                            del counts[k]
                            used.discard(k)
                    for k in new_pvc.keys() - old_pvc.keys():
                        counts[k] = counts.get(k, 0) + 1
                        used.add(k)

        if len(snapshot.node_info_list) != self._tree.num_nodes:
            msg = (
                "snapshot state is not consistent, length of NodeInfoList="
                f"{len(snapshot.node_info_list)} not equal to length of nodes in tree={self._tree.num_nodes} "
                f", length of NodeInfoMap={len(nmap)}, length of nodes in cache={len(nodes)}"
                ", trying to recover"
            )
            log.error(msg)
            self._rebuild_lists(snapshot)
            raise SnapshotInconsistentError(msg)
        return result

    def _remove_deleted_nodes(self, snapshot: Snapshot) -> list[str]:
        """``removeDeletedNodesFromSnapshot``: drop map entries whose node is gone or a ghost."""
        nmap = snapshot.node_info_map
        to_delete = len(nmap) - self._tree.num_nodes
        removed: list[str] = []
        for name in list(nmap):
            if to_delete <= 0:
                break
            item = self._nodes.get(name)
            if item is None or item.info.node is None:
                del nmap[name]
                removed.append(name)
                to_delete -= 1
        return removed

    def _rebuild_lists(self, snapshot: Snapshot) -> None:
        """``updateNodeInfoSnapshotList(updateAll=true)``: node list in tree order, sublists, PVCs."""
        nmap = snapshot.node_info_map
        ordered: list[NodeInfo] = []
        for name in self._tree.list():
            ni = nmap.get(name)
            if ni is not None:
                ordered.append(ni)
            else:
                log.error(
                    "Node exists in nodeTree but not in NodeInfoMap, this should not happen: node=%s", name
                )
        snapshot.rebuild_lists(ordered)
        if snapshot.node_table is not None:
            snapshot.node_table.set_order(ordered)

    # ---------------------------------------------------------- inspection

    def node_count(self) -> int:
        """``NodeCount``: number of cached NodeInfos, **ghosts included** (as upstream)."""
        with self._lock:
            return len(self._nodes)

    def pod_count(self) -> int:
        """``PodCount``: number of pods in the cache (assumed included)."""
        with self._lock:
            return len(self._pod_states)

    def assumed_pod_count(self) -> int:
        """Number of assumed (unconfirmed) pods."""
        with self._lock:
            return len(self._assumed)

    def cache_size(self) -> dict[str, int]:
        """Values of ``scheduler_scheduler_cache_size{type}``: ``assumed_pods``, ``pods``, ``nodes``."""
        with self._lock:
            return {
                "assumed_pods": len(self._assumed),
                "pods": len(self._pod_states),
                "nodes": len(self._nodes),
            }

    def dump(self) -> CacheDump:
        """``Dump``: clones of all cached NodeInfos (ghosts included) and the assumed pod UIDs."""
        with self._lock:
            out: dict[str, NodeInfo] = {}
            for name, item in self._nodes.items():
                self._refresh_images(item)
                out[name] = item.info.snapshot()
            return CacheDump(out, set(self._assumed))

    def node_infos(self) -> Iterator[NodeInfo]:
        """The live NodeInfos of all (non-ghost) nodes in node-tree order. Read-only: these are the
        cache's own objects (image ``num_nodes`` refreshed to current values); the list of them is
        taken under the lock, reading them later races with cache writers."""
        with self._lock:
            out = []
            for name in self._tree.list():
                item = self._nodes.get(name)
                if item is not None and item.info.node is not None:
                    self._refresh_images(item)
                    out.append(item.info)
        return iter(out)

    def node_info(self, name: str) -> NodeInfo | None:
        """The live NodeInfo of node ``name`` (None for an unknown node or a ghost: pods cached on a
        node that is gone). Read-only: the cache's own object, as in :meth:`node_infos`."""
        with self._lock:
            item = self._nodes.get(name)
            if item is None or item.info.node is None:
                return None
            return item.info

    def node_names(self) -> list[str]:
        """Node names in node-tree (zone round-robin) order."""
        with self._lock:
            return self._tree.list()

    def image_num_nodes(self, image_name: str) -> int:
        """Current number of nodes reporting ``image_name`` in ``status.images`` (0 if none)."""
        with self._lock:
            return self._images.num_nodes(image_name)

    def new_snapshot(self) -> Snapshot:
        """A fresh :class:`Snapshot` filled from the cache (O(nodes))."""
        snap = Snapshot()
        self.update_snapshot(snap)
        return snap


def _flip(sub: list[NodeInfo], ni: NodeInfo, add: bool, index: dict[str, int]) -> None:
    """Insert/remove ``ni`` in a sublist kept in ``node_info_list`` order (``index``: name -> position)."""
    i = index.get(ni.name)
    if i is None:  # not in node_info_list (inconsistent state): upstream's list walk skips it too
        return
    pos = bisect_left(sub, i, key=lambda x: index[x.name])
    if add:
        sub.insert(pos, ni)
    elif pos < len(sub) and sub[pos] is ni:
        del sub[pos]
