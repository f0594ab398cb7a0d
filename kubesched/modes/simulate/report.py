"""Render a :class:`~kubesched.modes.simulate.run.SimulationResult`: the JSON/YAML contract
(``kubesched/schemas/simulation-result.schema.json``), the pod table and ``--explain``."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kubesched.modes.simulate.run import PodOutcome, SimulationResult

API_VERSION = "kubesched.io/v1alpha1"
KIND = "SimulationResult"


def result_dict(res: SimulationResult) -> dict[str, Any]:
    """The stable JSON document (see the schema and README "JSON contract")."""
    return {
        "apiVersion": API_VERSION, "kind": KIND, "profile": res.profile, "seed": res.seed,
        "pods": [{"namespace": p.namespace, "name": p.name, "profile": p.profile, "status": p.status,
                  "node": p.node, "message": p.message, "results": [r.to_dict() for r in p.results]}
                 for p in res.pods],
    }


def pods_table(res: SimulationResult) -> Table:
    """One row per pod: pod, node (or ``<pending>``), status and the upstream message."""
    t = Table(title=f"kubesched simulate — profile {res.profile}", show_lines=False)
    t.add_column("POD", overflow="fold")
    t.add_column("NODE")
    t.add_column("STATUS")
    t.add_column("MESSAGE", overflow="fold")
    for p in res.pods:
        t.add_row(Text(f"{p.namespace}/{p.name}"), Text(p.node or "<pending>"), p.status, Text(p.message))
    return t


def summary_line(res: SimulationResult) -> str:
    """``N pods: A scheduled, B unschedulable, ...`` in a fixed order."""
    counts: dict[str, int] = {}
    for p in res.pods:
        counts[p.status] = counts.get(p.status, 0) + 1
    order = ["Scheduled", "Unschedulable", "Preempted", "Gated", "Error", "Ignored"]
    parts = [f"{counts[s]} {s.lower()}" for s in order if counts.get(s)]
    return f"{len(res.pods)} pods: " + (", ".join(parts) if parts else "none")


def find_pod(res: SimulationResult, ref: str) -> PodOutcome:
    """Find ``ns/name`` or a unique ``name``; raises ``KeyError`` with a clear message."""
    matches = [p for p in res.pods if f"{p.namespace}/{p.name}" == ref or ("/" not in ref and p.name == ref)]
    if len(matches) != 1:
        raise KeyError(f"pod {ref!r} not found among the simulated pods" if not matches
                       else f"pod name {ref!r} is ambiguous; use namespace/name")
    return matches[0]


def explain_tables(p: PodOutcome) -> list[Table | Text]:
    """Per attempt: a node-by-plugin table of filter verdicts and of raw/normalized/weighted scores."""
    tables: list[Table | Text] = []
    if not p.results:
        why = f"{p.status}: {p.message}" if p.message else p.status
        tables.append(Text(f"{p.namespace}/{p.name}: no scheduling attempt ({why})"))
    for i, rec in enumerate(p.results, 1):
        d = rec.to_dict()
        title = f"{p.namespace}/{p.name} — attempt {i}: selected {d['selectedNode'] or '<none>'}"
        if d["preFilter"]:
            t = Table(title=f"{title} — PreFilter")
            t.add_column("PLUGIN")
            t.add_column("RESULT")
            for plugin, st in d["preFilter"].items():
                t.add_row(plugin, Text(_status_text(st)))
            tables.append(t)
        filt: dict[str, dict[str, Any]] = d["filter"]
        if filt:
            plugins: list[str] = []
            for per_node in filt.values():
                for pl in per_node:
                    if pl not in plugins:
                        plugins.append(pl)
            t = Table(title=f"{title} — Filter")
            t.add_column("NODE")
            for pl in plugins:
                t.add_column(pl, overflow="fold")
            for node, per_node in filt.items():
                t.add_row(Text(node), *[Text(_status_text(per_node[pl])) if pl in per_node else "" for pl in plugins])
            tables.append(t)
        if d["score"]:
            plugins = []
            for per_node in d["score"].values():
                for pl in per_node:
                    if pl not in plugins:
                        plugins.append(pl)
            t = Table(title=f"{title} — Score (raw / normalized / weighted)")
            t.add_column("NODE")
            for pl in plugins:
                t.add_column(pl)
            t.add_column("TOTAL")
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
                t.add_row(Text(node), *cells, str(total))
            tables.append(t)
        if d["postFilter"]:
            t = Table(title=f"{title} — PostFilter")
            t.add_column("PLUGIN")
            t.add_column("RESULT", overflow="fold")
            t.add_column("NOMINATED")
            t.add_column("VICTIMS", overflow="fold")
            for plugin, st in d["postFilter"].items():
                t.add_row(plugin, Text(_status_text(st)), Text(st.get("nominatedNode") or ""),
                          Text(", ".join(st.get("victims") or [])))
            tables.append(t)
    return tables


def _status_text(st: dict[str, Any]) -> str:
    code = st["code"]
    if code == "Success":
        return "✓"
    reasons = ", ".join(st.get("reasons") or [])
    return f"{code}: {reasons}" if reasons else code


def print_table(res: SimulationResult, console: Console) -> None:
    """Print the pod table and the summary."""
    console.print(pods_table(res))
    console.print(summary_line(res))
