"""``Snapshot``: the immutable per-cycle view of the cluster's NodeInfos
(``pkg/scheduler/backend/cache/snapshot.go``). Plugins read it through ``handle.snapshot()``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubesched.framework.node_info import NodeInfo

if TYPE_CHECKING:
    from kubesched.framework.node_table import NodeTable


class Snapshot:
    """NodeInfos in node-tree order (``node_info_list``) and by name (``node_info_map``), the
    sublists of nodes having pods with (anti-)affinity, the PVCs in use and the generation.

    ``node_index`` (name -> position in ``node_info_list``) and ``pvc_node_counts``
    (``"ns/claim"`` -> number of nodes referencing it) are bookkeeping that lets
    :meth:`kubesched.cache.Cache.update_snapshot` keep the sublists and ``used_pvc_set`` up to
    date in O(changed nodes); they are recomputed by :meth:`rebuild_lists`."""

    __slots__ = (
        "node_info_map",
        "node_info_list",
        "have_pods_with_affinity_list",
        "have_pods_with_required_anti_affinity_list",
        "used_pvc_set",
        "generation",
        "node_index",
        "pvc_node_counts",
        "node_table",
    )

    def __init__(self, node_infos: list[NodeInfo] | None = None) -> None:
        self.node_info_map: dict[str, NodeInfo] = {}
        self.node_info_list: list[NodeInfo] = []
        self.have_pods_with_affinity_list: list[NodeInfo] = []
        self.have_pods_with_required_anti_affinity_list: list[NodeInfo] = []
        self.used_pvc_set: set[str] = set()
        self.generation = 0
        self.node_index: dict[str, int] = {}
        self.pvc_node_counts: dict[str, int] = {}
        #: columnar mirror (``kubesched.framework.node_table.NodeTable``) kept by the cache, or None
        self.node_table: NodeTable | None = None
        if node_infos is not None:
            for ni in node_infos:
                self.node_info_map[ni.name] = ni
            self.rebuild_lists(node_infos)

    def rebuild_lists(self, ordered: list[NodeInfo]) -> None:
        """Reset the ordered lists from ``ordered`` (node-tree order)."""
        self.node_info_list = ordered
        self.have_pods_with_affinity_list = [n for n in ordered if n.pods_with_affinity]
        self.have_pods_with_required_anti_affinity_list = [
            n for n in ordered if n.pods_with_required_anti_affinity
        ]
        self.node_index = {n.name: i for i, n in enumerate(ordered)}
        counts: dict[str, int] = {}
        for n in ordered:
            for k in n.pvc_ref_counts:
                counts[k] = counts.get(k, 0) + 1
        self.pvc_node_counts = counts
        self.used_pvc_set = set(counts)

    def list(self) -> list[NodeInfo]:
        """All NodeInfos in node-tree order."""
        return self.node_info_list

    def get(self, node_name: str) -> NodeInfo | None:
        """The NodeInfo of ``node_name`` or ``None``."""
        return self.node_info_map.get(node_name)

    def num_nodes(self) -> int:
        """Number of nodes."""
        return len(self.node_info_list)

    def is_pvc_used_by_pods(self, key: str) -> bool:
        """True if any pod uses the PVC ``namespace/name``."""
        return key in self.used_pvc_set

    def __len__(self) -> int:
        return len(self.node_info_list)
