"""Per-attempt record of every plugin's verdicts and scores (the data behind ``simulate -o json``
and ``--explain``). Key names follow kube-scheduler-simulator's result annotations.

Recording is off unless a :class:`CycleRecorder` is attached to the ``CycleState``
(``state.recorder``), so the hot path of ``kubesched run`` pays nothing for it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from kubesched.framework.results import PostFilterResult
from kubesched.framework.status import Code, Status

#: shared (never mutated) entry for the most common verdict, so that recording thousands of nodes
#: per attempt costs a pointer per Success rather than a dict
_SUCCESS: dict[str, Any] = {"code": str(Code.Success), "reasons": []}
#: shared entry for a Skip without reasons (what most PreFilter and PreScore plugins return)
_SKIP: dict[str, Any] = {"code": str(Code.Skip), "reasons": []}


def status_dict(s: Status | None) -> dict[str, Any]:
    """``{"code": ..., "reasons": [...]}`` for a possibly-``None`` status (treat as read-only:
    Success entries and Skip entries without reasons are shared)."""
    if s is None:
        return _SUCCESS
    if not s.reasons and s.err is None:
        code = s.code
        if code == Code.Success:
            return _SUCCESS
        if code == Code.Skip:
            return _SKIP
    return s.to_dict()


def _as_list(values: Sequence[int]) -> Sequence[int]:
    """``values`` as Python ints: a numpy array (the batch Score path passes its arrays) becomes a
    list, anything else is returned as it is."""
    tolist = getattr(values, "tolist", None)
    out: Sequence[int] = tolist() if tolist is not None else values
    return out


class CycleRecorder:
    """Collects one scheduling attempt; :meth:`to_dict` gives the JSON ``results[]`` entry."""

    def __init__(self) -> None:
        self.pre_filter: dict[str, dict[str, Any]] = {}
        self.filter: dict[str, dict[str, dict[str, Any]]] = {}
        self.post_filter: dict[str, dict[str, Any]] = {}
        self.pre_score: dict[str, dict[str, Any]] = {}
        self.score: dict[str, dict[str, int]] = {}
        self.normalized_score: dict[str, dict[str, int]] = {}
        self.final_score: dict[str, dict[str, int]] = {}
        self.reserve: dict[str, dict[str, Any]] = {}
        self.permit: dict[str, dict[str, Any]] = {}
        self.pre_bind: dict[str, dict[str, Any]] = {}
        self.bind: dict[str, dict[str, Any]] = {}
        self.selected_node: str | None = None
        #: ``batch`` or ``per-node``: how Filter / Score ran in this attempt (None: not reached)
        self.filter_path: str | None = None
        self.score_path: str | None = None
        #: why this attempt fell back to the per-node path (None: it did not)
        self.fallback_reason: str | None = None
        #: position of ``selected_node`` in the nodes given to :meth:`record_scores` (batch path)
        self.selected_index: int | None = None
        self._names: tuple[Sequence[Any], list[str]] | None = None

    def record_filter(self, node: str, plugin: str, s: Status | None) -> None:
        """A Filter plugin's verdict on ``node``."""
        self.filter.setdefault(node, {})[plugin] = status_dict(s)

    def record_filter_first(
        self, node: str, plugins: Sequence[Any], skip: Collection[str], first: int, s: Status | None
    ) -> None:
        """What the per-node Filter chain records for ``node`` when plugin ``first`` of ``plugins``
        (Filter plugins, each with a ``NAME``) rejects it with ``s`` and the earlier ones pass
        (``first`` -1: every plugin passes); plugins named in ``skip`` are left out."""
        d = self.filter.setdefault(node, {})
        for idx, pl in enumerate(plugins):
            if skip and pl.NAME in skip:
                continue
            if idx == first:
                d[pl.NAME] = status_dict(s)
                return
            d[pl.NAME] = _SUCCESS

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
        """The Filter verdicts of visited nodes ``infos[rows[i]]`` in visiting order, as the batch
        path knows them: ``first[i]`` the first rejecting plugin (-1: all pass) with status
        ``rejected[i]``, or ``known[i]`` the verdicts recorded by a per-node run (nodes with
        nominated pods)."""
        for i, row in enumerate(rows):
            name = infos[row].name
            k = known.get(i)
            if k is not None:
                self.filter[name] = k
            else:
                self.record_filter_first(name, plugins, skip, first[i], rejected.get(i))

    def record_post_filter(
        self, plugin: str, s: Status | None, result: PostFilterResult | None, victims: list[str] | None = None
    ) -> None:
        """A PostFilter plugin's status plus its nomination and victims (``namespace/name``)."""
        d = dict(status_dict(s))
        ni = result.nominating_info if result is not None else None
        d["nominatedNode"] = ni.nominated_node_name if ni is not None and ni.nominated_node_name else None
        d["victims"] = list(victims or [])
        self.post_filter[plugin] = d

    def record_score(self, plugin: str, node: str, raw: int) -> None:
        """Raw Score output."""
        self.score.setdefault(node, {})[plugin] = raw

    def node_names(self, nodes: Sequence[Any]) -> list[str]:
        """The names of ``nodes`` (NodeInfos), computed once per list object."""
        cached = self._names
        if cached is not None and cached[0] is nodes:
            return cached[1]
        names = [ni.name for ni in nodes]
        self._names = (nodes, names)
        return names

    def record_scores(self, plugin: str, nodes: Sequence[Any], raw: Sequence[int]) -> None:
        """Raw Score outputs of ``plugin`` for ``nodes`` (NodeInfos; same order). ``raw`` is a
        sequence of ints or an int64 numpy array (read at once, never kept)."""
        score = self.score
        for node, v in zip(self.node_names(nodes), _as_list(raw), strict=True):
            score.setdefault(node, {})[plugin] = v

    def record_normalized_scores(
        self, plugin: str, nodes: Sequence[Any], normalized: Sequence[int], weight: int
    ) -> None:
        """Normalized scores of ``plugin`` for ``nodes`` (NodeInfos) and their weighted values (x
        ``weight``); ``normalized`` as ``raw`` of :meth:`record_scores`."""
        ns, fs = self.normalized_score, self.final_score
        for node, v in zip(self.node_names(nodes), _as_list(normalized), strict=True):
            ns.setdefault(node, {})[plugin] = v
            fs.setdefault(node, {})[plugin] = v * weight

    def to_dict(self) -> dict[str, Any]:
        """The ``results[]`` entry of the JSON contract."""
        return {
            "preFilter": self.pre_filter,
            "filter": self.filter,
            "postFilter": self.post_filter,
            "preScore": self.pre_score,
            "score": self.score,
            "normalizedScore": self.normalized_score,
            "finalScore": self.final_score,
            "reserve": self.reserve,
            "permit": self.permit,
            "preBind": self.pre_bind,
            "bind": self.bind,
            "selectedNode": self.selected_node,
            "filterPath": self.filter_path,
            "scorePath": self.score_path,
            "fallbackReason": self.fallback_reason,
        }
