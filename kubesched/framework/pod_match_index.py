"""Per-node counts of pods matching a label selector in a namespace, kept by pod deltas
(kubesched's speed structure beside :class:`~kubesched.framework.node_table.NodeTable`; no upstream
counterpart).

Upstream's PodTopologySpread (``podtopologyspread/common.go: countPodsMatchSelector``) walks every
pod of every node per scheduling cycle; InterPodAffinity walks the pods of nodes with affinity.
Here a :class:`PodMatchIndex` keeps, for each registered ``(namespace, selector, terminating)``,
an ``int64`` column over the node table's rows: ``counts[row]`` = pods on that row's NodeInfo that
are in ``namespace`` (``None``: in any namespace), whose labels match ``selector`` and, unless
``terminating``, that are not terminating (no ``deletionTimestamp``). With ``terminating=False``
that is exactly ``count_pods_match_selector(ni.pods, selector, namespace)`` (PodTopologySpread);
InterPodAffinity counts terminating pods too (``interpodaffinity/filtering.go:
getIncomingAffinityAntiAffinityCounts`` walks ``nodeInfo.Pods``), as the property tests check.

Maintenance: the index remembers, per row, the pod objects it last counted. On each query it
diffs the rows the table refreshed since (:meth:`NodeTable.changed_rows`: pods added, removed,
assumed, forgotten, bound, updated - an update is a new ``Pod`` object - and node removals) and
applies each added or removed pod to the columns of its namespace whose selector it matches.
A selector with an ``In`` requirement is only tried for pods whose label value is in that
requirement's set (``matchLabels`` compile to such requirements), so a pod costs a dict look-up
per gated key instead of a match per selector. Cost: O(pods on changed nodes) per cycle plus
O(all pods) once per newly registered selector; at most :data:`MAX_SELECTORS` selectors are kept
(least recently used dropped; a dropped one is rebuilt when asked for again).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from kubesched.api.labels import LabelSelector

if TYPE_CHECKING:
    from kubesched.api.pod import Pod
    from kubesched.framework.node_info import NodeInfo

IntArray = npt.NDArray[np.int64]


class RowSource(Protocol):
    """What the index reads of a :class:`~kubesched.framework.node_table.NodeTable`."""

    @property
    def version(self) -> int: ...

    @property
    def capacity(self) -> int: ...

    @property
    def infos(self) -> Sequence[NodeInfo | None]: ...

    def changed_rows(self, since: int) -> Iterable[int]: ...


#: most (namespace, selector) columns kept at once
MAX_SELECTORS = 256


class _Column:
    """One registered selector: its counts and the ``In`` requirement that gates it (or None)."""

    __slots__ = ("namespace", "selector", "terminating", "counts", "gate_key", "gate_values")

    def __init__(
        self, namespace: str | None, selector: LabelSelector, terminating: bool, capacity: int
    ) -> None:
        self.namespace = namespace
        self.selector = selector
        #: terminating pods are counted too
        self.terminating = terminating
        self.counts: IntArray = np.zeros(capacity, dtype=np.int64)
        gate = next((r for r in selector.requirements if r.operator == "In"), None)
        self.gate_key = gate.key if gate is not None else None
        self.gate_values = gate.values if gate is not None else frozenset()


class _Namespace:
    """The columns of one namespace: gated ones by ``key -> value -> columns``, the rest in a list."""

    __slots__ = ("gated", "ungated")

    def __init__(self) -> None:
        self.gated: dict[str, dict[str, list[_Column]]] = {}
        self.ungated: list[_Column] = []

    def add(self, col: _Column) -> None:
        if col.gate_key is None:
            self.ungated.append(col)
            return
        by_value = self.gated.setdefault(col.gate_key, {})
        for v in col.gate_values:
            by_value.setdefault(v, []).append(col)

    def discard(self, col: _Column) -> None:
        if col.gate_key is None:
            self.ungated.remove(col)
            return
        by_value = self.gated[col.gate_key]
        for v in col.gate_values:
            cols = by_value[v]
            cols.remove(col)
            if not cols:
                del by_value[v]
        if not by_value:
            del self.gated[col.gate_key]

    def empty(self) -> bool:
        return not self.gated and not self.ungated

    def apply(self, pod: Pod, row: int, delta: int) -> None:
        """Add ``delta`` on ``row`` to every column whose selector matches ``pod``'s labels (a
        terminating pod: only the columns that count terminating pods)."""
        labels = pod.labels
        live = pod.deletion_timestamp is None
        for key, by_value in self.gated.items():
            v = labels.get(key)
            if v is None:
                continue
            cols = by_value.get(v)
            if cols:
                for col in cols:
                    if (live or col.terminating) and col.selector.matches(labels):
                        col.counts[row] += delta
        for col in self.ungated:
            if (live or col.terminating) and col.selector.matches(labels):
                col.counts[row] += delta


class PodMatchIndex:
    """Matching-pod counts per (namespace, selector) over the rows of one :class:`NodeTable`
    (see the module docstring); :meth:`NodeTable.match_counts` holds one."""

    def __init__(self, table: RowSource) -> None:
        self.table = table
        #: table version the columns reflect
        self.version = table.version
        #: per row: the pods counted last (``id(pod) -> pod``)
        self.row_pods: list[dict[int, Pod]] = []
        self.columns: OrderedDict[tuple[str | None, LabelSelector, bool], _Column] = OrderedDict()
        #: columns by namespace (``None``: the columns of every namespace)
        self.namespaces: dict[str | None, _Namespace] = {}
        self._read_all()

    def _read_all(self) -> None:
        infos = self.table.infos
        self.row_pods = [{} for _ in range(self.table.capacity)]
        for row, ni in enumerate(infos):
            if ni is not None:
                self.row_pods[row] = {id(pi.pod): pi.pod for pi in ni.pods}
        self.version = self.table.version

    def counts(self, namespace: str | None, selector: LabelSelector, terminating: bool = False) -> IntArray:
        """The per-row column of ``(namespace, selector, terminating)`` (see the module docstring;
        ``namespace=None``: every namespace), registered on first use. Valid until the table next
        changes; callers must not write to it."""
        self.sync()
        key = (namespace, selector, terminating)
        col = self.columns.get(key)
        if col is not None:
            self.columns.move_to_end(key)
            return col.counts
        col = _Column(namespace, selector, terminating, self.table.capacity)
        counts, matches = col.counts, selector.matches
        gk, gv = col.gate_key, col.gate_values
        for row, pods in enumerate(self.row_pods):
            n = 0
            for p in pods.values():
                if namespace is not None and p.namespace != namespace:
                    continue
                if not terminating and p.deletion_timestamp is not None:
                    continue
                labels = p.labels
                if gk is not None and labels.get(gk) not in gv:
                    continue
                if matches(labels):
                    n += 1
            if n:
                counts[row] = n
        self.columns[key] = col
        self.namespaces.setdefault(namespace, _Namespace()).add(col)
        if len(self.columns) > MAX_SELECTORS:
            _, old = self.columns.popitem(last=False)
            ns = self.namespaces[old.namespace]
            ns.discard(old)
            if ns.empty():
                del self.namespaces[old.namespace]
        return counts

    def sync(self) -> None:
        """Apply the pod changes of the rows refreshed since the last sync."""
        table = self.table
        if self.version == table.version:
            return
        cap = table.capacity
        if len(self.row_pods) < cap:
            self.row_pods.extend({} for _ in range(cap - len(self.row_pods)))
            for col in self.columns.values():
                grown = np.zeros(cap, dtype=np.int64)
                grown[: len(col.counts)] = col.counts
                col.counts = grown
        infos, row_pods, namespaces = table.infos, self.row_pods, self.namespaces
        for row in table.changed_rows(self.version):
            ni = infos[row]
            old = row_pods[row]
            new = {id(pi.pod): pi.pod for pi in ni.pods} if ni is not None else {}
            if namespaces:
                every = namespaces.get(None)
                for k, p in old.items():
                    if k not in new:
                        ns = namespaces.get(p.namespace)
                        if ns is not None:
                            ns.apply(p, row, -1)
                        if every is not None:
                            every.apply(p, row, -1)
                for k, p in new.items():
                    if k not in old:
                        ns = namespaces.get(p.namespace)
                        if ns is not None:
                            ns.apply(p, row, 1)
                        if every is not None:
                            every.apply(p, row, 1)
            row_pods[row] = new
        self.version = table.version
