"""A columnar (NumPy) mirror of a :class:`~kubesched.framework.snapshot.Snapshot`'s NodeInfos.

kubesched's own speed structure (no upstream counterpart): the vectorised ``filter_batch`` /
``score_batch`` forms of the in-tree plugins read whole columns instead of walking NodeInfo
objects one by one. The per-node plugin methods stay the definition; a batch form must give
exactly the same verdicts and scores (see ``tests/plugins/test_vectorised_equivalence.py``).

Layout: one **row** per node name (stable while the node exists; freed rows are reused), and
``order``: snapshot list position -> row, so the nodes visited from the rotating start index
are ``order[(start + i) % n]``. Columns (all ``int64`` unless noted):

* ``alloc_cpu`` (millicores), ``alloc_mem``, ``alloc_eph`` (bytes), ``alloc_pods`` (count);
* ``req_cpu``, ``req_mem``, ``req_eph``: requested by the node's pods (assumed included);
* ``nz_cpu``, ``nz_mem``: non-zero requested (``k8s.io/component-helpers/resource/helpers.go``
``PodRequests``);
* ``num_pods``; ``unschedulable`` (bool); ``has_ports`` (bool: some host port in use);
* ``taint_sig`` (``int32``): id of the node's taint tuple in ``taint_sets`` (0 = no taints);
* lazily created, then maintained: scalar resources (``scalar_alloc``/``scalar_req`` by name),
  label codes per key (``label_codes``: 0 = label absent, else 1 + index into the key's values),
  image presence per image name (``image_columns``: size bytes and the node's ``num_nodes``).

Maintenance is incremental: :meth:`refresh` re-reads one NodeInfo (called by
:meth:`kubesched.cache.Cache.update_snapshot` for every NodeInfo it re-clones, i.e. after
assume/forget/add/update/remove of a pod and node add/update), :meth:`remove` frees a deleted
node's row and :meth:`set_order` re-reads the list order when nodes were added or removed.
Nothing is rebuilt per pod. ``exact`` turns False if a value does not fit ``int64`` (the
framework then keeps to the per-node path).

**Derived per-row data** (used by PodTopologySpread and InterPodAffinity, whose PreFilter/PreScore
would otherwise walk every pod of every node each cycle): ``row_version[row]`` is the table
``version`` at the row's last refresh/removal, so :meth:`changed_rows` finds the rows whose
NodeInfo changed since a version. :meth:`pod_count_column` (a per-row count, e.g. of pods matching
a selector) and :meth:`aggregate` (a sum of per-row ``{key: value}`` contributions) are cached
under a caller-given key that must capture everything the per-row function reads besides the
NodeInfo; each use re-evaluates only the changed rows. At most :data:`DERIVED_CACHE_SIZE` keys
are kept (least recently used dropped).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from kubesched.api.taints import Taint
from kubesched.framework.pod_match_index import PodMatchIndex

if TYPE_CHECKING:
    from kubesched.api.labels import LabelSelector
    from kubesched.framework.node_info import NodeInfo

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: how many derived columns/aggregates (distinct keys) a table keeps
DERIVED_CACHE_SIZE = 32
#: how many per-row score columns (:meth:`NodeTable.row_scores`) a table keeps
ROW_SCORES_CACHE_SIZE = 64
#: more changed rows than this since a score column's last use: the column is rebuilt in bulk
ROW_SCORES_REBUILD = 64
#: the change log is halved when longer than max(this, 2 * capacity) entries
CHANGE_LOG_MIN = 4096

_INT_COLUMNS = (
    "alloc_cpu",
    "alloc_mem",
    "alloc_eph",
    "alloc_pods",
    "req_cpu",
    "req_mem",
    "req_eph",
    "nz_cpu",
    "nz_mem",
    "num_pods",
    "row_version",
)


class LabelColumn:
    """Codes of one label key: ``codes[row]`` is 0 when the node lacks the label, else
    ``1 + values.index(value)``; ``vocab`` maps value -> code."""

    __slots__ = ("codes", "vocab", "values", "_pairs")

    def __init__(self, capacity: int) -> None:
        self.codes: npt.NDArray[np.int32] = np.zeros(capacity, dtype=np.int32)
        self.vocab: dict[str, int] = {}
        self.values: list[str] = []
        self._pairs: list[tuple[str, str]] = []

    def pairs(self, key: str) -> list[tuple[str, str]]:
        """``(key, value)`` per value, at ``code - 1`` (``key``: this column's label key), built as
        the vocabulary grows: topology-pair dict keys without a tuple built per use."""
        p, vals = self._pairs, self.values
        if len(p) < len(vals):
            p.extend((key, v) for v in vals[len(p) :])
        return p

    def code(self, value: str | None) -> int:
        """The code of ``value`` (interned on first sight); 0 for ``None``."""
        if value is None:
            return 0
        c = self.vocab.get(value)
        if c is None:
            self.values.append(value)
            c = self.vocab[value] = len(self.values)
        return c


class ImageColumn:
    """Presence of one image name: ``present[row]``, ``size[row]`` (bytes) and ``num_nodes[row]``
    as summarised on that node's NodeInfo (``image_states``)."""

    __slots__ = ("present", "size", "num_nodes")

    def __init__(self, capacity: int) -> None:
        self.present: BoolArray = np.zeros(capacity, dtype=np.bool_)
        self.size: IntArray = np.zeros(capacity, dtype=np.int64)
        self.num_nodes: IntArray = np.zeros(capacity, dtype=np.int64)


class NodeTable:
    """Columnar node data kept in step with one snapshot (see the module docstring)."""

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self.rows: dict[str, int] = {}
        self.infos: list[NodeInfo | None] = [None] * capacity
        #: ``infos`` as an object array (same entries), so that the NodeInfos of many rows are
        #: gathered with one index operation: ``info_array[rows].tolist()``
        self.info_array: npt.NDArray[np.object_] = np.full(capacity, None, dtype=object)
        self._free: list[int] = []
        self._next_row = 0
        for name in _INT_COLUMNS:
            setattr(self, name, np.zeros(capacity, dtype=np.int64))
        self.alloc_cpu: IntArray
        self.alloc_mem: IntArray
        self.alloc_eph: IntArray
        self.alloc_pods: IntArray
        self.req_cpu: IntArray
        self.req_mem: IntArray
        self.req_eph: IntArray
        self.nz_cpu: IntArray
        self.nz_mem: IntArray
        self.num_pods: IntArray
        #: table ``version`` at the last refresh/removal of each row
        self.row_version: IntArray
        self.unschedulable: BoolArray = np.zeros(capacity, dtype=np.bool_)
        self.has_ports: BoolArray = np.zeros(capacity, dtype=np.bool_)
        self.taint_sig: npt.NDArray[np.int32] = np.zeros(capacity, dtype=np.int32)
        self.taint_sets: list[tuple[Taint, ...]] = [()]
        self._taint_ids: dict[tuple[Taint, ...], int] = {(): 0}
        self.scalar_alloc: dict[str, IntArray] = {}
        self.scalar_req: dict[str, IntArray] = {}
        self.labels: dict[str, LabelColumn] = {}
        self.images: dict[str, ImageColumn] = {}
        #: per row, the names of the image columns whose entries at the row are set (the others
        #: hold False / 0 there), so a refresh touches those and the node's own images only
        self._row_images: dict[int, list[str]] = {}
        self.order: IntArray = np.zeros(0, dtype=np.int64)
        self.exact = True
        #: bumped on every change; lets callers cache derived data
        self.version = 0
        self._derived: OrderedDict[Hashable, Any] = OrderedDict()
        # change log for changed_rows(): (version, row) of refreshes/removals since version _log_floor
        self._log_versions: list[int] = []
        self._log_rows: list[int] = []
        self._log_floor = 0
        self._match_index: PodMatchIndex | None = None
        self._noted: tuple[Sequence[NodeInfo], int, IntArray] | None = None
        #: row_scores(): key -> [version, column]; keys asked for once but not built yet
        self._row_scores: OrderedDict[Hashable, list[Any]] = OrderedDict()
        self._row_scores_asked: set[Hashable] = set()

    # ---- capacity ---------------------------------------------------------------------------

    def _grow(self) -> None:
        cap = self.capacity * 2

        def grown(a: np.ndarray) -> np.ndarray:
            b = np.zeros(cap, dtype=a.dtype)
            b[: self.capacity] = a
            return b

        for name in _INT_COLUMNS:
            setattr(self, name, grown(getattr(self, name)))
        self.unschedulable = grown(self.unschedulable)
        self.has_ports = grown(self.has_ports)
        self.taint_sig = grown(self.taint_sig)
        for d in (self.scalar_alloc, self.scalar_req):
            for k in d:
                d[k] = grown(d[k])
        for lc in self.labels.values():
            lc.codes = grown(lc.codes)
        for ic in self.images.values():
            ic.present = grown(ic.present)
            ic.size = grown(ic.size)
            ic.num_nodes = grown(ic.num_nodes)
        self.infos.extend([None] * (cap - self.capacity))
        info_array = np.full(cap, None, dtype=object)
        info_array[: self.capacity] = self.info_array
        self.info_array = info_array
        self.capacity = cap

    def _row_for(self, name: str) -> int:
        row = self.rows.get(name)
        if row is not None:
            return row
        if self._free:
            row = self._free.pop()
        else:
            if self._next_row >= self.capacity:
                self._grow()
            row = self._next_row
            self._next_row += 1
        self.rows[name] = row
        return row

    # ---- maintenance ------------------------------------------------------------------------

    def refresh(self, ni: NodeInfo) -> None:
        """(Re)read ``ni`` (a snapshot NodeInfo with a node) into its row. O(columns)."""
        node = ni.node
        if node is None:
            return
        row = self._row_for(node.name)
        self.infos[row] = ni
        self.info_array[row] = ni
        self._changed(row)
        a, r, nz = ni.allocatable, ni.requested, ni.non_zero_requested
        try:
            self.alloc_cpu[row] = a.milli_cpu
            self.alloc_mem[row] = a.memory
            self.alloc_eph[row] = a.ephemeral_storage
            self.alloc_pods[row] = a.allowed_pod_number
            self.req_cpu[row] = r.milli_cpu
            self.req_mem[row] = r.memory
            self.req_eph[row] = r.ephemeral_storage
            self.nz_cpu[row] = nz.milli_cpu
            self.nz_mem[row] = nz.memory
            self.num_pods[row] = len(ni.pods)
            for name in a.scalar.keys() | r.scalar.keys():
                if name not in self.scalar_alloc:
                    self._add_scalar(name)
            for name, col in self.scalar_alloc.items():
                col[row] = a.scalar.get(name, 0)
                self.scalar_req[name][row] = r.scalar.get(name, 0)
            images = self.images
            states = ni.image_states
            # only the image columns set at this row before (by any node that held it) or now
            for name in self._row_images.pop(row, ()):
                if name not in states:
                    ic = images[name]
                    ic.present[row] = False
                    ic.size[row] = 0
                    ic.num_nodes[row] = 0
            present: list[str] = []
            self._row_images[row] = present
            for name, st in states.items():
                image_col = images.get(name)
                if image_col is not None:
                    present.append(name)
                    image_col.present[row] = True
                    image_col.size[row] = st.size
                    image_col.num_nodes[row] = st.num_nodes
        except OverflowError:
            self.exact = False
        self.unschedulable[row] = node.unschedulable
        self.has_ports[row] = bool(ni.used_ports.ports)
        taints = tuple(node.taints)
        tid = self._taint_ids.get(taints)
        if tid is None:
            tid = self._taint_ids[taints] = len(self.taint_sets)
            self.taint_sets.append(taints)
        self.taint_sig[row] = tid
        labels = node.labels
        for key, lc in self.labels.items():
            lc.codes[row] = lc.code(labels.get(key))

    def remove(self, name: str) -> None:
        """Free the row of a node that left the snapshot."""
        row = self.rows.pop(name, None)
        if row is None:
            return
        self.infos[row] = None
        self.info_array[row] = None
        self._free.append(row)
        self._changed(row)

    def set_order(self, ordered: Sequence[NodeInfo]) -> None:
        """Re-read the snapshot list order (after nodes were added or removed)."""
        rows = self.rows
        self.order = np.fromiter((rows[ni.name] for ni in ordered), dtype=np.int64, count=len(ordered))
        self.version += 1

    def _live_rows(self) -> list[tuple[int, NodeInfo]]:
        return [(row, ni) for row, ni in enumerate(self.infos[: self._next_row]) if ni is not None]

    def _add_scalar(self, name: str) -> None:
        self.scalar_alloc[name] = np.zeros(self.capacity, dtype=np.int64)
        self.scalar_req[name] = np.zeros(self.capacity, dtype=np.int64)
        for row, ni in self._live_rows():
            self.scalar_alloc[name][row] = ni.allocatable.scalar.get(name, 0)
            self.scalar_req[name][row] = ni.requested.scalar.get(name, 0)

    # ---- lazily created columns ---------------------------------------------------------------

    def scalar(self, name: str) -> tuple[IntArray, IntArray]:
        """``(allocatable, requested)`` columns of scalar resource ``name`` (zeros if no node has it)."""
        if name not in self.scalar_alloc:
            try:
                self._add_scalar(name)
            except OverflowError:
                self.exact = False
        return self.scalar_alloc[name], self.scalar_req[name]

    def label(self, key: str) -> LabelColumn:
        """The label column of ``key`` (built from every row on first use, O(nodes) once)."""
        lc = self.labels.get(key)
        if lc is None:
            lc = LabelColumn(self.capacity)
            for row, ni in self._live_rows():
                node = ni.node
                if node is not None:
                    lc.codes[row] = lc.code(node.labels.get(key))
            self.labels[key] = lc
        return lc

    def image(self, name: str) -> ImageColumn:
        """The presence column of image ``name`` (built from every row on first use)."""
        ic = self.images.get(name)
        if ic is None:
            ic = ImageColumn(self.capacity)
            try:
                for row, ni in self._live_rows():
                    st = ni.image_states.get(name)
                    if st is not None:
                        self._row_images.setdefault(row, []).append(name)
                        ic.present[row] = True
                        ic.size[row] = st.size
                        ic.num_nodes[row] = st.num_nodes
            except OverflowError:
                self.exact = False
            self.images[name] = ic
        return ic

    # ---- queries ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.order)

    def note_rows(self, nodes: Sequence[NodeInfo], rows: IntArray) -> None:
        """Remember that the list ``nodes`` holds the NodeInfos of ``rows`` (same order) at the
        current version, for :meth:`rows_of` (the scheduling cycle notes its feasible nodes)."""
        self._noted = (nodes, self.version, rows)

    def rows_of(self, nodes: Sequence[NodeInfo]) -> IntArray | None:
        """The rows of ``nodes`` (NodeInfos of this table) in their order, or ``None`` when one is
        not in the table. O(1) for the list last given to :meth:`note_rows` if the table has not
        changed since, else a name look-up per node."""
        noted = self._noted
        if (
            noted is not None
            and noted[0] is nodes
            and noted[1] == self.version
            and len(noted[2]) == len(nodes)
        ):
            return noted[2]
        rows = self.rows
        try:
            return np.fromiter((rows[ni.name] for ni in nodes), dtype=np.int64, count=len(nodes))
        except KeyError:
            return None

    def visit_rows(self, start: int, count: int) -> IntArray:
        """Rows of list positions ``start, start+1, ...`` (``count`` of them, wrapping)."""
        n = len(self.order)
        end = start + count
        if end <= n:
            return self.order[start:end]
        return np.concatenate((self.order[start:], self.order[: end - n]))

    # ---- derived per-row data (cached by key, refreshed for changed rows only) ---------------

    def _changed(self, row: int) -> None:
        self.version += 1
        self.row_version[row] = self.version
        self._log_versions.append(self.version)
        self._log_rows.append(row)
        if len(self._log_rows) > max(CHANGE_LOG_MIN, 2 * self.capacity):
            half = len(self._log_rows) // 2
            self._log_floor = self._log_versions[half - 1]
            del self._log_versions[:half]
            del self._log_rows[:half]

    def changed_rows(self, since: int) -> Iterable[int]:
        """Rows refreshed or removed after table version ``since`` (each once). O(changes) while
        the change log reaches back to ``since``, else every row."""
        if since >= self.version:
            return ()
        if since < self._log_floor:
            return range(self._next_row)
        i = bisect_right(self._log_versions, since)
        return dict.fromkeys(self._log_rows[i:])

    def _derived_get(self, key: Hashable) -> Any:
        d = self._derived.get(key)
        if d is not None:
            self._derived.move_to_end(key)
        return d

    def _derived_put(self, key: Hashable, value: Any) -> None:
        self._derived[key] = value
        if len(self._derived) > DERIVED_CACHE_SIZE:
            self._derived.popitem(last=False)

    def pod_count_column(self, key: Hashable, count: Callable[[NodeInfo], int]) -> IntArray:
        """A per-row ``int64`` column of ``count(NodeInfo)`` (0 for free rows), cached under ``key``
        and recomputed only for rows changed since its last use. ``key`` must determine ``count``
        given the NodeInfo. The returned array is valid until the table next changes; callers
        must not write to it."""
        entry = self._derived_get(key)
        infos = self.infos
        if entry is None or len(entry[1]) < self.capacity:
            col = np.zeros(self.capacity, dtype=np.int64)
            if entry is None:
                todo: Iterable[int] = range(self._next_row)
            else:
                col[: len(entry[1])] = entry[1]
                todo = self.changed_rows(entry[0])
        else:
            col = entry[1]
            todo = self.changed_rows(entry[0])
        for row in todo:
            ni = infos[row]
            col[row] = count(ni) if ni is not None else 0
        self._derived_put(key, (self.version, col))
        return col

    def row_scores(
        self,
        key: Hashable,
        score_rows: Callable[[IntArray], IntArray | None],
        score_node: Callable[[NodeInfo], int],
    ) -> IntArray | None:
        """A per-row ``int64`` column of a Score plugin's score (0 for free rows), or ``None``
        when there is none to give yet. ``key`` must determine the score given the NodeInfo (the
        plugin's scoring arguments and the pod's requests). ``score_rows(rows)`` scores an array
        of rows at once (``None``: it declines), ``score_node(NodeInfo)`` one node; both must
        give the plugin's per-node score.

        The first time ``key`` is asked for, nothing is built (``None``: the caller scores its own
        rows, as pods of a shape seen once cost no more than before); the second time the column
        is built with ``score_rows`` over every live row, and from then on only the rows changed
        since its last use are scored again (one by one, or all in bulk when more than
        :data:`ROW_SCORES_REBUILD` changed). At most :data:`ROW_SCORES_CACHE_SIZE` columns are
        kept (least recently used dropped). The returned array is valid until the table next
        changes; callers must not write to it."""
        entry = self._row_scores.get(key)
        if entry is not None:
            self._row_scores.move_to_end(key)
            if entry[0] == self.version and len(entry[1]) >= self.capacity:
                col: IntArray = entry[1]
                return col
            todo = self.changed_rows(entry[0])
            if len(todo) <= ROW_SCORES_REBUILD:  # type: ignore[arg-type]
                col = entry[1]
                if len(col) < self.capacity:
                    grown = np.zeros(self.capacity, dtype=np.int64)
                    grown[: len(col)] = col
                    col = grown
                infos = self.infos
                for row in todo:
                    ni = infos[row]
                    col[row] = score_node(ni) if ni is not None else 0
                entry[0] = self.version
                entry[1] = col
                return col
            del self._row_scores[key]
        elif key not in self._row_scores_asked:
            if len(self._row_scores_asked) >= 4 * ROW_SCORES_CACHE_SIZE:
                self._row_scores_asked.clear()
            self._row_scores_asked.add(key)
            return None
        live = np.fromiter(
            (row for row, ni in enumerate(self.infos[: self._next_row]) if ni is not None), dtype=np.int64
        )
        vals = score_rows(live)
        if vals is None:  # asked for once more before the next try
            self._row_scores_asked.discard(key)
            return None
        col = np.zeros(self.capacity, dtype=np.int64)
        col[live] = vals
        self._row_scores[key] = [self.version, col]
        if len(self._row_scores) > ROW_SCORES_CACHE_SIZE:
            self._row_scores.popitem(last=False)
        return col

    def match_counts(
        self, namespace: str | None, selector: LabelSelector, terminating: bool = False
    ) -> IntArray:
        """Per row, the pods of its NodeInfo in ``namespace`` (``None``: any namespace) whose labels
        match ``selector`` and, unless ``terminating``, that are not terminating:
        ``podtopologyspread/common.go: countPodsMatchSelector`` for every node (and
        InterPodAffinity's term counts with ``terminating=True``), kept by pod deltas
        (:class:`~kubesched.framework.pod_match_index.PodMatchIndex`). The array is valid until
        the table next changes; callers must not write to it."""
        if self._match_index is None:
            self._match_index = PodMatchIndex(self)
        return self._match_index.counts(namespace, selector, terminating)

    def domain_sums(self, key: Hashable, counts: IntArray, label_key: str) -> dict[tuple[str, str], int]:
        """``{(label_key, value): Σ counts[row]}`` over the rows whose node has label ``label_key``
        = ``value``, for the values with a positive sum; ``counts`` is a per-row column valid at the
        current version (e.g. :meth:`match_counts`) that only changes on rows the table refreshes,
        and ``key`` identifies it. Cached under ``(key, label_key)`` and updated for the changed
        rows only. The returned dict is the cache's own: callers must copy it before changing it."""
        ck = ("domain_sums", key, label_key)
        entry: _DomainSums | None = self._derived_get(ck)
        lc = self.label(label_key)
        if entry is None or len(entry.codes) < self.capacity or len(counts) < self.capacity:
            codes = lc.codes.copy()
            cur = np.where(codes > 0, counts[: self.capacity], 0)
            hit = np.flatnonzero(cur > 0)
            sums = np.bincount(codes[hit], weights=cur[hit].astype(np.float64)).astype(np.int64)
            present = np.flatnonzero(sums)
            pairs = lc.pairs(label_key)
            totals = dict(zip([pairs[c - 1] for c in present.tolist()], sums[present].tolist(), strict=True))
            entry = _DomainSums(self.version, codes, cur, totals)
        elif entry.version != self.version:
            totals, old_codes, old_counts, new_codes = entry.totals, entry.codes, entry.counts, lc.codes
            pairs = lc.pairs(label_key)
            for row in self.changed_rows(entry.version):
                nc = int(new_codes[row])
                nn = int(counts[row]) if nc else 0
                oc, on = int(old_codes[row]), int(old_counts[row])
                if oc == nc and on == nn:
                    continue
                if on:
                    pair = pairs[oc - 1]
                    left = totals[pair] - on
                    if left:
                        totals[pair] = left
                    else:
                        del totals[pair]
                if nn:
                    pair = pairs[nc - 1]
                    totals[pair] = totals.get(pair, 0) + nn
                old_codes[row], old_counts[row] = nc, nn
            entry.version = self.version
        self._derived_put(ck, entry)
        return entry.totals

    def aggregate(
        self,
        key: Hashable,
        contrib: Callable[[NodeInfo], dict[Any, int]],
        initial_rows: Callable[[], Iterable[int]] | None = None,
    ) -> dict[Any, int]:
        """``Σ_rows contrib(NodeInfo)`` as a dict, where a key is present iff some row's
        contribution has it (even with value 0), cached under ``key`` and updated only for rows
        changed since its last use. ``initial_rows`` (default: all rows) are the only rows whose
        contribution can be non-empty when the entry is first built (called only then). The returned dict is the
        cache's own: callers must copy it before changing it."""
        entry: _Aggregate | None = self._derived_get(key)
        infos = self.infos
        if entry is None:
            entry = _Aggregate()
            todo: Iterable[int] = range(self._next_row) if initial_rows is None else initial_rows()
        else:
            todo = self.changed_rows(entry.version)
        contribs, total, refs = entry.contribs, entry.total, entry.refs
        for row in todo:
            old = contribs.pop(row, None)
            if old:
                for k, v in old.items():
                    n = refs[k] - 1
                    if n:
                        refs[k] = n
                        total[k] -= v
                    else:
                        del refs[k]
                        del total[k]
            ni = infos[row]
            if ni is None:
                continue
            new = contrib(ni)
            if new:
                contribs[row] = new
                for k, v in new.items():
                    if k in refs:
                        refs[k] += 1
                        total[k] += v
                    else:
                        refs[k] = 1
                        total[k] = v
        entry.version = self.version
        self._derived_put(key, entry)
        return total


class _DomainSums:
    """State of one :meth:`NodeTable.domain_sums` entry: per row the label code and count last
    summed, and the per-value totals."""

    __slots__ = ("version", "codes", "counts", "totals")

    def __init__(
        self, version: int, codes: npt.NDArray[np.int32], counts: IntArray, totals: dict[tuple[str, str], int]
    ) -> None:
        self.version = version
        self.codes = codes
        self.counts = counts
        self.totals = totals


class _Aggregate:
    """State of one :meth:`NodeTable.aggregate` entry: per-row contributions, their sum and, per
    key, the number of rows contributing it."""

    __slots__ = ("version", "contribs", "total", "refs")

    def __init__(self) -> None:
        self.version = 0
        self.contribs: dict[int, dict[Any, int]] = {}
        self.total: dict[Any, int] = {}
        self.refs: dict[Any, int] = {}
