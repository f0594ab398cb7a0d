"""Re-run the scheduling decisions of a recording on the cluster state each one was made in.

Usage::

    python scripts/recorded_decisions.py REC --config YAML [--image REF] [--from S] [--to S]
        [--csv OUT.csv]

Reads a recording (``kubesched record``) and follows its Nodes and Pods change by change. At each
binding it recorded (a Pod update that sets ``spec.nodeName`` on a pod it saw pending), it runs
one scheduling cycle of that pod, with the profile of ``--config``, on the Nodes and Pods as they
were just before the binding, on the cluster's clock at that moment
(:func:`kubesched.ui.explain.explain_objects`, the cycle ``kubesched serve``'s explanations
re-run; the recording's clock map is :func:`kubesched.modes.record.recording.read_recording`'s).
Each decision is then one of:

* ``same``: the re-run selects the recorded node;
* ``tie``: it selects another node with the same total score as the recorded node (the scheduler
  picks at random among the nodes with the top score: ``pkg/scheduler/schedule_one.go:
  selectHost``);
* ``lower``: the recorded node passes every Filter but scores below the selected one;
* ``filtered``: the profile's Filter plugins reject the recorded node (the first plugin and reason
  are kept);
* ``unschedulable``: the re-run places the pod nowhere;
* ``not re-run``: the pod is not one the profile schedules (another ``schedulerName``, gated), the
  reason in ``detail``.

So a recording of ``kubesched run`` with the same profile shows whether the live scheduler decided
as the scheduling code does on the state the cluster's API showed (every decision ``same`` or
``tie``), and a recording of another scheduler where the profile would have placed its pods
elsewhere. ``--image`` keeps the pods with a container of that image (as written in the pod);
``--from`` / ``--to`` the pods created that many seconds after the first pending pod the
recording saw (creation timestamps, the cluster's clock). Prints one line per verdict with its count; ``--csv`` writes one row per
decision (pod, created, recorded node, re-run node, the two total scores, verdict, detail).
Exits 2 when ``REC`` is not a recording or ``--config`` cannot be read.
"""

from __future__ import annotations

import argparse
import copy
import csv
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubesched.api.timestamps import parse_rfc3339
from kubesched.config.load import load_config
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.errors import KubeschedError
from kubesched.modes.record.log import read_records
from kubesched.modes.record.recording import read_recording
from kubesched.ui.explain import ExplainError, explain_objects

VERDICTS = ("same", "tie", "lower", "filtered", "unschedulable", "not re-run")

Obj = dict[str, Any]


@dataclass(frozen=True)
class Decision:
    """One recorded binding and its re-run: ``created`` (seconds after the creation of the first
    pending pod recorded), the ``recorded`` and ``rerun`` nodes (``rerun`` None: unschedulable), their total
    scores (None when not scored: filtered out, or a single feasible node), ``verdict`` (one of
    :data:`VERDICTS`) and ``detail`` (the filter reason of a ``filtered`` node)."""

    pod: str
    created: float
    recorded: str
    rerun: str | None
    recorded_score: int | None
    rerun_score: int | None
    verdict: str
    detail: str = ""


def _key(obj: Obj) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name"))


def _total(final: dict[str, dict[str, int]], node: str | None) -> int | None:
    scores = final.get(node) if node is not None else None
    return sum(scores.values()) if scores is not None else None


def _filter_reason(record: dict[str, Any], node: str) -> str:
    for plugin, status in (record.get("filter") or {}).get(node, {}).items():
        if status.get("code") != "Success":
            reasons = "; ".join(status.get("reasons") or []) or str(status.get("code"))
            return f"{plugin}: {reasons}"
    return ""


def verdict(record: dict[str, Any], recorded: str) -> tuple[str, int | None, int | None, str]:
    """``(verdict, recorded node's total score, selected node's total score, detail)`` of one
    re-run cycle's record (the ``results[]`` entry of :class:`kubesched.framework.recorder.CycleRecorder`)
    against the ``recorded`` node."""
    selected = record.get("selectedNode")
    final = record.get("finalScore") or {}
    mine, best = _total(final, recorded), _total(final, selected)
    if selected is None:
        return "unschedulable", mine, best, ""
    if selected == recorded:
        return "same", mine, best, ""
    if mine is None:
        reason = _filter_reason(record, recorded)
        if reason:
            return "filtered", mine, best, reason
        # a single feasible node is not scored (selected unscored): the recorded one was not it
        return "filtered", mine, best, "not feasible"
    if best is not None and mine == best:
        return "tie", mine, best, ""
    return "lower", mine, best, ""


def decisions(
    rec: Path,
    config: KubeSchedulerConfiguration,
    *,
    image: str | None = None,
    start: float | None = None,
    end: float | None = None,
) -> Iterator[Decision]:
    """The re-run of every binding of the recording ``rec`` that the filters keep, in the order
    recorded. Raises :class:`kubesched.modes.record.log.RecordingError` for a directory that is not a
    recording."""
    # the record-time -> cluster-time map is fitted over the whole recording, so it is read once
    # for the map before the pass that re-runs the bindings
    clock = read_recording(rec).clock
    objects: dict[tuple[str, str, str], Obj] = {}
    first_created: float | None = None
    for r in read_records(rec):
        op, kind, obj = r.get("op"), r.get("kind"), r.get("object")
        if op not in ("add", "update", "delete") or kind not in ("Node", "Pod") or not isinstance(obj, dict):
            continue
        key = _key(obj)
        if kind == "Pod":
            created = parse_rfc3339(str((obj.get("metadata") or {}).get("creationTimestamp")))
            if op == "add" and first_created is None and not (obj.get("spec") or {}).get("nodeName"):
                first_created = created
            old = objects.get(key)
            node = (obj.get("spec") or {}).get("nodeName")
            if op == "update" and old is not None and not (old.get("spec") or {}).get("nodeName") and node:
                rel = created - (first_created if first_created is not None else created)
                images = [c.get("image") for c in (obj.get("spec") or {}).get("containers") or []]
                if (
                    (image is None or image in images)
                    and (start is None or rel >= start)
                    and (end is None or rel <= end)
                ):
                    state = [copy.deepcopy(o) for o in objects.values()]
                    pod_key = f"{key[1]}/{key[2]}"
                    try:
                        ex = explain_objects(state, pod_key, config, time=clock(float(r["t"])))
                    except ExplainError as e:
                        yield Decision(key[2], rel, str(node), None, None, None, "not re-run", str(e))
                    else:
                        v, mine, best, detail = verdict(ex.record, str(node))
                        yield Decision(key[2], rel, str(node), ex.selected, mine, best, v, detail)
        if op == "delete":
            objects.pop(key, None)
        else:
            objects[key] = obj


def summary_lines(found: list[Decision]) -> list[str]:
    """``decisions N`` then one ``VERDICT COUNT`` line per verdict (every verdict, zeros included)."""
    counts = Counter(d.verdict for d in found)
    return [f"decisions {len(found)}"] + [f"{v} {counts[v]}" for v in VERDICTS]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("rec", type=Path, help="a recording directory (kubesched record --out)")
    ap.add_argument(
        "--config", required=True, help="KubeSchedulerConfiguration whose profile re-runs the cycles"
    )
    ap.add_argument("--image", default=None, help="only pods with a container of this image")
    ap.add_argument(
        "--from", dest="start", type=float, default=None, help="only pods created this many seconds on"
    )
    ap.add_argument("--to", dest="end", type=float, default=None, help="... up to this many seconds")
    ap.add_argument("--csv", type=Path, default=None, help="write one row per decision here")
    a = ap.parse_args(argv)
    try:
        config = load_config(a.config)
        found = list(decisions(a.rec, config, image=a.image, start=a.start, end=a.end))
    except KubeschedError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for line in summary_lines(found):
        print(line)
    if a.csv is not None:
        with a.csv.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(
                ["pod", "created", "recorded", "rerun", "recordedScore", "rerunScore", "verdict", "detail"]
            )
            for d in found:
                w.writerow(
                    [
                        d.pod,
                        f"{d.created:g}",
                        d.recorded,
                        d.rerun or "",
                        d.recorded_score,
                        d.rerun_score,
                        d.verdict,
                        d.detail,
                    ]
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
