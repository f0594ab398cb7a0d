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
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Protocol

import orjson

from kubesched.api.pod import Pod
from kubesched.framework.recorder import CycleRecorder, status_dict
from kubesched.framework.status import Status

__all__ = ["CompactRecords", "PackedAttempt", "SummaryRecorder", "compact_attempt", "compact_record"]


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


def _compact(
    full: dict[str, Any], verdicts: Iterable[Any], filtered: int, passed: int, selected_scores: dict[str, Any]
) -> dict[str, Any]:
    """The compact entry: ``verdicts`` in visiting order (per-node verdict dicts or
    :class:`_FirstReject`), ``filtered`` nodes in all, of which ``passed`` are not in ``verdicts``
    and passed every plugin."""
    rejections: dict[str, dict[str, int]] = {}
    feasible = passed
    for per_plugin in verdicts:
        if isinstance(per_plugin, _FirstReject):
            feasible += per_plugin.plugin is None or _count_rejection(
                rejections, per_plugin.plugin, status_dict(per_plugin.status)
            )
            continue
        ok = True
        for plugin, st in per_plugin.items():
            ok &= _count_rejection(rejections, plugin, st)
        feasible += ok
    out: dict[str, Any] = {k: full[k] for k in _AS_IS}
    out["nodesFiltered"] = filtered
    out["nodesFeasible"] = feasible
    out["filterRejections"] = rejections
    out["selectedNode"] = full["selectedNode"]
    out["selectedNodeScores"] = selected_scores
    return out


def compact_attempt(full: dict[str, Any]) -> dict[str, Any]:
    """The compact form of one ``results[]`` entry of the full JSON contract."""
    selected = full["selectedNode"]
    scores = {}
    if selected is not None:
        for plugin, raw in full["score"].get(selected, {}).items():
            scores[plugin] = {
                "score": raw,
                "normalizedScore": full["normalizedScore"].get(selected, {}).get(plugin),
                "finalScore": full["finalScore"].get(selected, {}).get(plugin),
            }
    return _compact(full, full["filter"].values(), len(full["filter"]), 0, scores)


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
        self.score_lists[plugin] = [nodes, raw, None, 1]

    def record_normalized_scores(
        self, plugin: str, nodes: Sequence[Any], normalized: Sequence[int], weight: int
    ) -> None:
        entry = self.score_lists.get(plugin)
        if (
            entry is None or entry[0] is not nodes
        ):  # not scored through record_scores: keep it as the base does
            super().record_normalized_scores(plugin, nodes, normalized, weight)
            return
        entry[2] = normalized
        entry[3] = weight

    def selected_scores(self) -> dict[str, Any]:
        """``selectedNodeScores``: the selected node's raw / normalized / weighted score per plugin."""
        selected = self.selected_node
        if selected is None:
            return {}
        full = {"score": self.score, "normalizedScore": self.normalized_score, "finalScore": self.final_score}
        out = {}
        for plugin, raw in full["score"].get(selected, {}).items():
            out[plugin] = {
                "score": raw,
                "normalizedScore": full["normalizedScore"].get(selected, {}).get(plugin),
                "finalScore": full["finalScore"].get(selected, {}).get(plugin),
            }
        index: dict[int, int] = {}
        for plugin, (nodes, raw, norm, weight) in self.score_lists.items():
            i = index.get(id(nodes))
            if i is None:
                at = self.selected_index
                if at is None or at >= len(nodes) or nodes[at].name != selected:
                    names = self.node_names(nodes)
                    at = names.index(selected) if selected in names else -1
                i = index[id(nodes)] = at
            if i < 0:
                continue
            n = norm[i] if norm is not None else self.normalized_score.get(selected, {}).get(plugin)
            out[plugin] = {
                "score": raw[i],
                "normalizedScore": n,
                "finalScore": n * weight
                if norm is not None
                else self.final_score.get(selected, {}).get(plugin),
            }
        return out


def compact_record(rec: Any) -> dict[str, Any]:
    """The compact entry of one recorded attempt (a :class:`SummaryRecorder` or a full recorder)."""
    if isinstance(rec, SummaryRecorder):
        if rec.filter_visited:  # the batch path (a cycle takes one path)
            return _compact(
                rec.to_dict(),
                rec.filter_entries,
                rec.filter_visited,
                rec.filter_passed,
                rec.selected_scores(),
            )
        return _compact(rec.to_dict(), rec.filter.values(), len(rec.filter), 0, rec.selected_scores())
    return compact_attempt(rec.to_dict())


class PackedAttempt:
    """A compact entry kept as its JSON bytes (orjson), zlib-compressed: a pod's last attempt
    costs about 400 bytes until the output is written instead of some KiB of dicts (the entries
    of a run repeat the same plugin names and statuses). :meth:`to_dict` gives the entry back
    (same keys, order and values)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = orjson.loads(zlib.decompress(self.data))
        return out


def _pack(entry: dict[str, Any]) -> PackedAttempt | dict[str, Any]:
    try:
        return PackedAttempt(zlib.compress(orjson.dumps(entry), 1))
    except TypeError:  # an integer beyond 64 bits: kept as it is
        return entry


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

    def _compact_previous(self) -> None:
        last = self._last
        if last and not isinstance(last[0], dict | PackedAttempt):
            last[0] = _pack(compact_record(last[0]))

    def finish(self) -> None:
        """Compact the attempt recorded last (call once the run is over)."""
        self._compact_previous()
        self._last = None

    def attempts(self, key: str) -> int:
        got = self.get(key)
        return got.total if isinstance(got, _Attempts) else len(got or [])
