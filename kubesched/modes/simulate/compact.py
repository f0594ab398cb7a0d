"""The compact record of ``kubesched simulate -o json`` (the default; ``--detail full`` keeps
every attempt with every node's verdicts).

Per pod it keeps the outcome, the number of attempts and the **last** attempt, summarised:
statuses of the single-shot points (PreFilter, PostFilter, PreScore, Reserve, Permit, PreBind,
Bind) as they are, Filter verdicts counted per plugin and reason (``{"NodeResourcesFit":
{"Insufficient cpu": 441}}``, the numbers behind the ``0/N nodes are available: ...`` message),
the number of nodes filtered and found feasible, and the selected node's scores per plugin
(raw / normalised / weighted). Nothing here grows with nodes times attempts, so a 3,000-pod,
1,523-node snapshot gives a document of a few MB.

:class:`CompactRecords` applies this while the simulation runs: it is the scheduler's
``records`` mapping (pod key -> attempts) and keeps, for each pod, only its newest attempt,
compacting it as soon as the scheduler starts recording the next attempt of any pod. At most one
record exists uncompacted at any time.

:class:`SummaryRecorder` is the recorder of such a run (``CompactRecords.new_recorder``): it keeps
what the compact form reads and no more - a visited node's first rejecting Filter plugin and status
(not a dict of verdicts per node), and each Score plugin's scores as lists beside the node names
(not a dict per node) - and :func:`compact_record` builds the compact entry from it directly. The
result is the same document as :func:`compact_attempt` of the full record, byte for byte
(``tests/modes/simulate/test_compact_summary.py``). Pods named by ``full`` (``--explain``) get
full :class:`~kubesched.framework.recorder.CycleRecorder` s.

A pod's entry is kept until the output is written as a :class:`CompactAttempt`: the parts the
attempts of a run repeat (a plugin phase's statuses, the Filter counts, the scored plugins'
names) are shared between pods, one object per distinct value, and the selected node's scores are
a tuple of ints; :meth:`CompactAttempt.to_dict` builds the entry back when it is written.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import orjson

from kubesched.api.pod import Pod
from kubesched.framework.recorder import CycleRecorder
from kubesched.framework.status import Code, Status

__all__ = ["CompactAttempt", "CompactRecords", "SummaryRecorder", "compact_attempt", "compact_record"]


class _Record(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


_AS_IS = ("preFilter", "postFilter", "preScore", "reserve", "permit", "preBind", "bind")


def _count_rejection(rejections: dict[str, dict[str, int]], plugin: str, st: dict[str, Any]) -> bool:
    """Count one verdict; False when it rejects."""
    if st["code"] in ("Success", "Skip"):
        return True
    counts = rejections.setdefault(plugin, {})
    for reason in st.get("reasons") or [st["code"]]:
        counts[reason] = counts.get(reason, 0) + 1
    return False


def _count_status(rejections: dict[str, dict[str, int]], plugin: str, s: Status | None) -> bool:
    """:func:`_count_rejection` of ``status_dict(s)``, without building the dict."""
    if s is None:
        return True
    code = s.code
    if code == Code.Success or code == Code.Skip:
        return True
    counts = rejections.setdefault(plugin, {})
    reasons = [str(s.err), *s.reasons] if s.err else s.reasons
    for reason in reasons or [str(code)]:
        counts[reason] = counts.get(reason, 0) + 1
    return False


def _filter_counts(verdicts: Iterable[Any], passed: int) -> tuple[dict[str, dict[str, int]], int]:
    """``(filterRejections, nodesFeasible)`` of ``verdicts`` in visiting order (per-node verdict
    dicts or :class:`_FirstReject`) and ``passed`` more nodes, not among them, that passed every
    plugin."""
    rejections: dict[str, dict[str, int]] = {}
    feasible = passed
    for per_plugin in verdicts:
        if isinstance(per_plugin, _FirstReject):
            feasible += per_plugin.plugin is None or _count_status(
                rejections, per_plugin.plugin, per_plugin.status
            )
            continue
        ok = True
        for plugin, st in per_plugin.items():
            ok &= _count_rejection(rejections, plugin, st)
        feasible += ok
    return rejections, feasible


class CompactAttempt:
    """One compact entry, kept until it is written (see the module docstring): ``head`` the
    single-shot points' maps in ``_AS_IS`` order, ``filtered`` / ``feasible`` node counts,
    ``rejections`` (plugin -> reason -> nodes), ``selected`` node, and ``names`` the scored plugins
    with ``values`` their (raw, normalized, weighted) scores on the selected node, three per name.
    The parts may be shared with other entries: treat them as read-only."""

    __slots__ = ("head", "filtered", "feasible", "rejections", "selected", "names", "values")

    def __init__(
        self,
        head: tuple[dict[str, Any], ...],
        filtered: int,
        feasible: int,
        rejections: dict[str, dict[str, int]],
        selected: str | None,
        names: tuple[str, ...],
        values: tuple[Any, ...],
    ) -> None:
        self.head = head
        self.filtered = filtered
        self.feasible = feasible
        self.rejections = rejections
        self.selected = selected
        self.names = names
        self.values = values

    def to_dict(self) -> dict[str, Any]:
        """The compact entry (the ``lastAttempt`` of the JSON contract)."""
        out: dict[str, Any] = dict(zip(_AS_IS, self.head, strict=True))
        out["nodesFiltered"] = self.filtered
        out["nodesFeasible"] = self.feasible
        out["filterRejections"] = self.rejections
        out["selectedNode"] = self.selected
        v = self.values
        out["selectedNodeScores"] = {
            name: {"score": v[3 * i], "normalizedScore": v[3 * i + 1], "finalScore": v[3 * i + 2]}
            for i, name in enumerate(self.names)
        }
        return out


def _flat_scores(scores: dict[str, tuple[Any, Any, Any]]) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    return tuple(scores), tuple([v for triple in scores.values() for v in triple])


def _attempt_of_dict(full: dict[str, Any]) -> CompactAttempt:
    """The compact entry of one ``results[]`` entry of the full JSON contract."""
    selected = full["selectedNode"]
    scores: dict[str, tuple[Any, Any, Any]] = {}
    if selected is not None:
        norm = full["normalizedScore"].get(selected, {})
        final = full["finalScore"].get(selected, {})
        for plugin, raw in full["score"].get(selected, {}).items():
            scores[plugin] = (raw, norm.get(plugin), final.get(plugin))
    rejections, feasible = _filter_counts(full["filter"].values(), 0)
    return CompactAttempt(
        tuple(full[k] for k in _AS_IS),
        len(full["filter"]),
        feasible,
        rejections,
        selected,
        *_flat_scores(scores),
    )


def compact_attempt(full: dict[str, Any]) -> dict[str, Any]:
    """The compact form of one ``results[]`` entry of the full JSON contract."""
    return _attempt_of_dict(full).to_dict()


class _FirstReject:
    """A batch-path node's Filter verdicts: every plugin before ``plugin`` passed, ``plugin``
    returned ``status`` (``plugin`` None: all passed)."""

    __slots__ = ("plugin", "status")

    def __init__(self, plugin: str | None, status: Status | None) -> None:
        self.plugin = plugin
        self.status = status


class SummaryRecorder(CycleRecorder):
    """A :class:`CycleRecorder` that keeps only what :func:`compact_record` reads (see the module
    docstring); its ``to_dict`` is not the full contract, use :func:`compact_record`."""

    def __init__(self) -> None:
        super().__init__()
        #: per Score plugin in the order scored: (plugin, nodes, raw, normalized, weight)
        self.score_lists: dict[str, list[Any]] = {}
        #: batch-path Filter verdicts of the rejected and the nominated-pod nodes, in visiting order
        self.filter_entries: list[Any] = []
        #: nodes visited on the batch path, and how many of them are not in ``filter_entries``
        self.filter_visited = 0
        self.filter_passed = 0

    def record_filter_chunk(
        self,
        infos: Sequence[Any],
        rows: Sequence[int],
        first: Sequence[int],
        rejected: Mapping[int, Status | None],
        known: Mapping[int, dict[str, Any]],
        plugins: Sequence[Any],
        skip: Collection[str],
    ) -> None:
        entries = self.filter_entries
        listed = sorted(rejected.keys() | known.keys())
        for i in listed:
            k = known.get(i)
            entries.append(k if k is not None else _FirstReject(plugins[first[i]].NAME, rejected[i]))
        self.filter_visited += len(rows)
        self.filter_passed += len(rows) - len(listed)

    def record_scores(self, plugin: str, nodes: Sequence[Any], raw: Sequence[int]) -> None:
        self.score_lists[plugin] = [nodes, raw.copy() if isinstance(raw, np.ndarray) else raw, None, 1]

    def record_normalized_scores(
        self, plugin: str, nodes: Sequence[Any], normalized: Sequence[int], weight: int
    ) -> None:
        entry = self.score_lists.get(plugin)
        if (
            entry is None or entry[0] is not nodes
        ):  # not scored through record_scores: keep it as the base does
            super().record_normalized_scores(plugin, nodes, normalized, weight)
            return
        entry[2] = normalized.copy() if isinstance(normalized, np.ndarray) else normalized
        entry[3] = weight

    def selected_score_triples(self) -> dict[str, tuple[Any, Any, Any]]:
        """The selected node's (raw, normalized, weighted) score per plugin, in scoring order."""
        selected = self.selected_node
        if selected is None:
            return {}
        out: dict[str, tuple[Any, Any, Any]] = {}
        raw_scores = self.score.get(selected)
        if raw_scores:  # scored node by node (the per-node path)
            norm = self.normalized_score.get(selected, {})
            final = self.final_score.get(selected, {})
            for plugin, raw in raw_scores.items():
                out[plugin] = (raw, norm.get(plugin), final.get(plugin))
        index: dict[int, int] = {}
        for plugin, (nodes, raw_list, norm_list, weight) in self.score_lists.items():
            i = index.get(id(nodes))
            if i is None:
                at = self.selected_index
                if at is None or at >= len(nodes) or nodes[at].name != selected:
                    names = self.node_names(nodes)
                    at = names.index(selected) if selected in names else -1
                i = index[id(nodes)] = at
            if i < 0:
                continue
            if norm_list is not None:
                n = int(norm_list[i])
                out[plugin] = (int(raw_list[i]), n, n * weight)
            else:
                out[plugin] = (
                    int(raw_list[i]),
                    self.normalized_score.get(selected, {}).get(plugin),
                    self.final_score.get(selected, {}).get(plugin),
                )
        return out

    def selected_scores(self) -> dict[str, Any]:
        """``selectedNodeScores``: the selected node's raw / normalized / weighted score per plugin."""
        return {
            plugin: {"score": raw, "normalizedScore": norm, "finalScore": final}
            for plugin, (raw, norm, final) in self.selected_score_triples().items()
        }


def _summary_attempt(rec: SummaryRecorder) -> CompactAttempt:
    if rec.filter_visited:  # the batch path (a cycle takes one path)
        verdicts: Iterable[Any] = rec.filter_entries
        filtered, passed = rec.filter_visited, rec.filter_passed
    else:
        verdicts, filtered, passed = rec.filter.values(), len(rec.filter), 0
    rejections, feasible = _filter_counts(verdicts, passed)
    head = (rec.pre_filter, rec.post_filter, rec.pre_score, rec.reserve, rec.permit, rec.pre_bind, rec.bind)
    return CompactAttempt(
        head, filtered, feasible, rejections, rec.selected_node, *_flat_scores(rec.selected_score_triples())
    )


def _attempt(rec: Any) -> CompactAttempt:
    """The compact entry of one recorded attempt (a :class:`SummaryRecorder` or a full recorder)."""
    if isinstance(rec, SummaryRecorder):
        return _summary_attempt(rec)
    return _attempt_of_dict(rec.to_dict())


def compact_record(rec: Any) -> dict[str, Any]:
    """The compact entry of one recorded attempt (a :class:`SummaryRecorder` or a full recorder)."""
    return _attempt(rec).to_dict()


#: most distinct parts :class:`CompactRecords` shares; parts first seen after that are kept as they are
MAX_SHARED_PARTS = 4096


class _Attempts(list[Any]):
    """One pod's records: only the newest attempt is kept; ``total`` counts them all."""

    def __init__(self, owner: CompactRecords) -> None:
        super().__init__()
        self.total = 0
        self._owner = owner

    def append(self, rec: Any) -> None:
        self._owner._compact_previous()
        self.clear()
        super().append(rec)
        self.total += 1
        self._owner._last = self


class CompactRecords(dict[str, list[Any]]):
    """``Scheduler.records`` for compact output (see the module docstring); ``full(pod)``: pods
    whose attempts also keep every node's verdicts (in :attr:`full_records`)."""

    def __init__(self, full: Callable[[Pod], bool] | None = None) -> None:
        super().__init__()
        self._last: _Attempts | None = None
        self._full = full
        #: pod key -> full recorders of the pods named by ``full``
        self.full_records: dict[str, list[CycleRecorder]] = {}
        #: shared parts of the entries: JSON text -> the first object seen with it
        self._shared: dict[bytes, Any] = {}
        #: shared ``head`` tuples (of shared parts): JSON text -> the tuple
        self._heads: dict[bytes, tuple[dict[str, Any], ...]] = {}

    def new_recorder(self, pod: Pod) -> CycleRecorder:
        """``Scheduler.new_recorder``: a :class:`SummaryRecorder`, or a full recorder (also kept in
        :attr:`full_records`) for a pod named by ``full``."""
        if self._full is not None and self._full(pod):
            rec = CycleRecorder()
            self.full_records.setdefault(pod.key, []).append(rec)
            return rec
        return SummaryRecorder()

    def setdefault(self, key: str, default: list[Any] | None = None) -> list[Any]:
        got = self.get(key)
        if got is None:
            got = _Attempts(self)
            self[key] = got
        return got

    def _share(self, part: Any) -> tuple[Any, bool]:
        """``(the shared object equal to part, True)``, or ``(part, False)`` when it is not shared
        (no room left, or not encodable by orjson: an integer beyond 64 bits, a non-string key).
        Equal means the same JSON text, keys in the same order."""
        try:
            key = orjson.dumps(part)
        except TypeError:
            return part, False
        shared = self._shared
        got = shared.get(key)
        if got is not None:
            return got, True
        if len(shared) >= MAX_SHARED_PARTS:
            return part, False
        shared[key] = part
        return part, True

    def _freeze(self, rec: Any) -> CompactAttempt:
        entry = _attempt(rec)
        share = self._share
        try:
            text: bytes | None = orjson.dumps(entry.head)
        except TypeError:
            text = None
        head = self._heads.get(text) if text is not None else None
        if head is None:
            head = tuple([share(part)[0] for part in entry.head])
            if text is not None and len(self._heads) < MAX_SHARED_PARTS:
                self._heads[text] = head
        entry.head = head
        entry.rejections = share(entry.rejections)[0]
        entry.names = share(entry.names)[0]
        return entry

    def _compact_previous(self) -> None:
        last = self._last
        if last and not isinstance(last[0], dict | CompactAttempt):
            last[0] = self._freeze(last[0])

    def finish(self) -> None:
        """Compact the attempt recorded last (call once the run is over)."""
        self._compact_previous()
        self._last = None

    def attempts(self, key: str) -> int:
        got = self.get(key)
        return got.total if isinstance(got, _Attempts) else len(got or [])
