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
full per-node record exists at any time.
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["CompactRecords", "compact_attempt"]


class _Record(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


_AS_IS = ("preFilter", "postFilter", "preScore", "reserve", "permit", "preBind", "bind")


def compact_attempt(full: dict[str, Any]) -> dict[str, Any]:
    """The compact form of one ``results[]`` entry of the full JSON contract."""
    rejections: dict[str, dict[str, int]] = {}
    feasible = 0
    for per_plugin in full["filter"].values():
        ok = True
        for plugin, st in per_plugin.items():
            if st["code"] in ("Success", "Skip"):
                continue
            ok = False
            counts = rejections.setdefault(plugin, {})
            for reason in st.get("reasons") or [st["code"]]:
                counts[reason] = counts.get(reason, 0) + 1
        feasible += ok
    selected = full["selectedNode"]
    out: dict[str, Any] = {k: full[k] for k in _AS_IS}
    out["nodesFiltered"] = len(full["filter"])
    out["nodesFeasible"] = feasible
    out["filterRejections"] = rejections
    out["selectedNode"] = selected
    scores = {}
    if selected is not None:
        for plugin, raw in full["score"].get(selected, {}).items():
            scores[plugin] = {"score": raw, "normalizedScore": full["normalizedScore"].get(selected, {}).get(plugin),
                              "finalScore": full["finalScore"].get(selected, {}).get(plugin)}
    out["selectedNodeScores"] = scores
    return out


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
    """``Scheduler.records`` for compact output (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._last: _Attempts | None = None

    def setdefault(self, key: str, default: list[Any] | None = None) -> list[Any]:
        got = self.get(key)
        if got is None:
            got = _Attempts(self)
            self[key] = got
        return got

    def _compact_previous(self) -> None:
        last = self._last
        if last and not isinstance(last[0], dict):
            last[0] = compact_attempt(last[0].to_dict())

    def finish(self) -> None:
        """Compact the attempt recorded last (call once the run is over)."""
        self._compact_previous()
        self._last = None

    def attempts(self, key: str) -> int:
        got = self.get(key)
        return got.total if isinstance(got, _Attempts) else len(got or [])
