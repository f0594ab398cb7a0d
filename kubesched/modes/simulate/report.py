"""Render a :class:`~kubesched.modes.simulate.run.SimulationResult`: the JSON/YAML contract
(``kubesched/schemas/simulation-result.schema.json``), the pod table and ``--explain``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TextIO

import orjson
from rich.console import Console
from rich.table import Table
from rich.text import Text

from kubesched.errors import NotFoundError
from kubesched.modes.simulate.compact import CompactAttempt, compact_attempt
from kubesched.modes.simulate.run import PodOutcome, SimulationResult

API_VERSION = "kubesched.io/v1alpha1"
KIND = "SimulationResult"


def _pod_dicts(res: SimulationResult) -> Iterator[dict[str, Any]]:
    if res.detail == "compact":
        for p in res.pods:
            yield {
                "namespace": p.namespace,
                "name": p.name,
                "profile": p.profile,
                "status": p.status,
                "node": p.node,
                "message": p.message,
                "attempts": p.attempts or 0,
                "lastAttempt": _compact(p.results[-1]) if p.results else None,
            }
    else:
        for p in res.pods:
            yield {
                "namespace": p.namespace,
                "name": p.name,
                "profile": p.profile,
                "status": p.status,
                "node": p.node,
                "message": p.message,
                "results": [r.to_dict() for r in p.results],
            }


def _head(res: SimulationResult) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "profile": res.profile,
        "seed": res.seed,
        "detail": res.detail,
    }


def result_dict(res: SimulationResult) -> dict[str, Any]:
    """The stable JSON document (see the schema and README "JSON contract"), in the detail the run
    recorded (``res.detail``: ``full`` or ``compact``)."""
    return {**_head(res), "pods": list(_pod_dicts(res))}


def _indented(obj: Any, prefix: bytes) -> bytes:
    """``json.dumps(obj, indent=2)`` as bytes with ``prefix`` before every line but the first.
    orjson writes the same text for what the document holds (str, int, bool, None, lists, dicts)
    when it is printable ASCII; anything else (non-ASCII text or DEL, which json escapes, or an
    integer beyond 64 bits) goes through :mod:`json`."""
    try:
        data = orjson.dumps(obj, option=orjson.OPT_INDENT_2)
    except TypeError:
        data = b""
    if not data or not data.isascii() or b"\x7f" in data:
        data = json.dumps(obj, indent=2).encode("ascii")
    return data.replace(b"\n", b"\n" + prefix) if prefix else data


def iter_result_json(res: SimulationResult) -> Iterator[bytes]:
    """:func:`result_dict` encoded exactly as ``json.dump(result_dict(res), f, indent=2)`` writes it
    (no trailing newline), one pod at a time: the document is never built whole, and each pod is
    encoded by orjson (:func:`_indented`)."""
    head = _indented(_head(res), b"")
    yield head[:-2]  # without the closing "\n}"
    first = True
    for pod in _pod_dicts(res):
        yield (b',\n  "pods": [\n    ' if first else b",\n    ") + _indented(pod, b"    ")
        first = False
    yield b',\n  "pods": []\n}' if first else b"\n  ]\n}"


def _compact(rec: Any) -> dict[str, Any]:
    if isinstance(rec, dict):
        return rec
    if isinstance(rec, CompactAttempt):
        return rec.to_dict()
    return compact_attempt(rec.to_dict())


@dataclass(frozen=True)
class Grid:
    """A titled table of text cells, rendered as plain kubectl-style columns or as a rich table."""

    title: str
    headers: list[str]
    rows: list[list[str]]


def pods_grid(res: SimulationResult, *, wide: bool = False) -> Grid:
    """One row per pod: pod, node (or ``<pending>``), status and the upstream message; ``wide``
    adds the profile, ``spec.priority`` (0 when unset, as ``corev1helpers.PodPriority``) and ``status.nominatedNodeName`` of the pod at the end of
    the run (as ``kubectl -o wide`` adds columns); the message stays the last column."""
    headers = (
        ["POD", "NODE", "STATUS"] + (["PROFILE", "PRIORITY", "NOMINATED NODE"] if wide else []) + ["MESSAGE"]
    )
    rows = []
    for p in res.pods:
        row = [f"{p.namespace}/{p.name}", p.node or "<pending>", p.status]
        if wide:
            obj = _final_object(res, p)
            priority = (obj.get("spec") or {}).get("priority")
            nominated = (obj.get("status") or {}).get("nominatedNodeName")
            row += [p.profile or "<none>", str(priority or 0), nominated or "<none>"]
        rows.append([*row, p.message])
    return Grid(f"kubesched simulate — profile {res.profile}", headers, rows)


def _final_object(res: SimulationResult, p: PodOutcome) -> dict[str, Any]:
    """The pod as the embedded cluster holds it after the run (``{}`` once deleted, e.g. preempted)."""
    try:
        return res.cluster.get("Pod", p.namespace, p.name)
    except NotFoundError:
        return {}


def pod_names(res: SimulationResult) -> list[str]:
    """``-o name``: ``pod/<name>`` per pod, as ``kubectl get -o name`` prints (no namespace)."""
    return [f"pod/{p.name}" for p in res.pods]


def render_plain(grid: Grid, *, headers: bool = True) -> str:
    """kubectl's column layout (``text/tabwriter`` with minwidth 10, padding 3, as
    ``k8s.io/cli-runtime/pkg/printers/tabwriter.go: GetNewTabWriter``): no box drawing, no
    truncation, the last column unpadded. Returns the text with a trailing newline (empty for no rows
    and no headers)."""
    rows = ([grid.headers] if headers else []) + grid.rows
    if not rows:
        return ""
    widths = [max(10, max(len(r[i]) for r in rows) + 3) for i in range(len(grid.headers))]
    lines = ["".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=False)) + r[-1] for r in rows]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def render_rich(grid: Grid) -> Table:
    """The same grid as a rich table (for terminals); cells fold, never truncate."""
    t = Table(title=grid.title, show_lines=False)
    for h in grid.headers:
        t.add_column(h, overflow="fold")
    for r in grid.rows:
        t.add_row(*(Text(c) for c in r))
    return t


def summary_line(res: SimulationResult) -> str:
    """``N pods: A scheduled, B unschedulable, ...`` in a fixed order (``1 pod: 1 scheduled``)."""
    counts: dict[str, int] = {}
    for p in res.pods:
        counts[p.status] = counts.get(p.status, 0) + 1
    order = ["Scheduled", "Unschedulable", "Preempted", "Gated", "Error", "Ignored"]
    parts = [f"{counts[s]} {s.lower()}" for s in order if counts.get(s)]
    noun = "pod" if len(res.pods) == 1 else "pods"
    return f"{len(res.pods)} {noun}: " + (", ".join(parts) if parts else "none")


def find_pod(res: SimulationResult, ref: str) -> PodOutcome:
    """Find ``ns/name`` or a unique ``name``; raises ``KeyError`` with a clear message."""
    matches = [p for p in res.pods if f"{p.namespace}/{p.name}" == ref or ("/" not in ref and p.name == ref)]
    if len(matches) != 1:
        raise KeyError(
            f"pod {ref!r} not found among the simulated pods"
            if not matches
            else f"pod name {ref!r} is ambiguous; use namespace/name"
        )
    return matches[0]


def explain_grids(p: PodOutcome) -> list[Grid | str]:
    """Per attempt: PreFilter results, a node-by-plugin table of Filter verdicts, raw / normalized /
    weighted scores and PostFilter results; a line of text for a pod that had no attempt."""
    out: list[Grid | str] = []
    if not p.results:
        why = f"{p.status}: {p.message}" if p.message else p.status
        out.append(f"{p.namespace}/{p.name}: no scheduling attempt ({why})")
    for i, rec in enumerate(p.results, 1):
        d = rec.to_dict()
        title = f"{p.namespace}/{p.name} — attempt {i}: selected {d['selectedNode'] or '<none>'}"
        if d["preFilter"]:
            out.append(
                Grid(
                    f"{title} — PreFilter",
                    ["PLUGIN", "RESULT"],
                    [[plugin, _status_text(st)] for plugin, st in d["preFilter"].items()],
                )
            )
        filt: dict[str, dict[str, Any]] = d["filter"]
        if filt:
            plugins = _plugins(filt)
            out.append(
                Grid(
                    f"{title} — Filter",
                    ["NODE", *plugins],
                    [
                        [node, *[_status_text(per_node[pl]) if pl in per_node else "" for pl in plugins]]
                        for node, per_node in filt.items()
                    ],
                )
            )
        if d["score"]:
            plugins = _plugins(d["score"])
            rows = []
            for node, per_node in d["score"].items():
                cells = []
                total = 0
                for pl in plugins:
                    if pl not in per_node:
                        cells.append("")
                        continue
                    norm = d["normalizedScore"].get(node, {}).get(pl, "")
                    fin = d["finalScore"].get(node, {}).get(pl, 0)
                    total += fin
                    cells.append(f"{per_node[pl]} / {norm} / {fin}")
                rows.append([node, *cells, str(total)])
            out.append(
                Grid(f"{title} — Score (raw / normalized / weighted)", ["NODE", *plugins, "TOTAL"], rows)
            )
        if d["postFilter"]:
            out.append(
                Grid(
                    f"{title} — PostFilter",
                    ["PLUGIN", "RESULT", "NOMINATED", "VICTIMS"],
                    [
                        [
                            plugin,
                            _status_text(st),
                            st.get("nominatedNode") or "",
                            ", ".join(st.get("victims") or []),
                        ]
                        for plugin, st in d["postFilter"].items()
                    ],
                )
            )
    return out


def _plugins(per_node: dict[str, dict[str, Any]]) -> list[str]:
    """Plugin names in first-seen order across the nodes of a per-node map."""
    seen: dict[str, None] = {}
    for entries in per_node.values():
        for pl in entries:
            seen.setdefault(pl)
    return list(seen)


def _status_text(st: dict[str, Any]) -> str:
    code = st["code"]
    if code == "Success":
        return "✓"
    reasons = ", ".join(st.get("reasons") or [])
    return f"{code}: {reasons}" if reasons else code


def print_grids(
    items: list[Grid | str], console: Console | None, out: TextIO, *, headers: bool = True
) -> None:
    """Print grids: as rich tables on ``console`` (a terminal), else as plain columns on ``out``
    with each grid's title on its own line before it (the summary and free text as they are)."""
    for item in items:
        if console is not None:
            console.print(item if isinstance(item, str) else render_rich(item))
        elif isinstance(item, str):
            out.write(item + "\n")
        else:
            if headers and item.title:
                out.write(item.title + "\n")
            out.write(render_plain(item, headers=headers))
