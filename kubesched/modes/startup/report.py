"""Writing a ``kubesched startup`` report: ``report.json`` in the replay's format (one run per
scheduler; each run adds ``topImages``, the images costing most pull time), ``pods.csv`` and
``report.html`` through the replay's writers.

A run is labelled by the scheduler whose pods it covers: ``runs[].scheduler`` stands where the
replay has ``runs[].config`` (every other key of a run is the replay's), the first column of
``pods.csv`` is ``scheduler``, and the tables (terminal, report.html) are titled
``kubesched startup`` with a ``scheduler`` column and no wall seconds."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kubesched.atomic_file import atomic_write_text
from kubesched.modes.report.report_html import write_report_html
from kubesched.modes.report.report_json import report_dict, write_pods_csv
from kubesched.modes.report.report_plots import require_plotly
from kubesched.modes.startup.analysis import StartupRun

__all__ = ["LABEL", "TITLE", "startup_report", "write_startup_report"]

#: the title of the report's tables and the name of the column labelling its runs
TITLE = "kubesched startup"
LABEL = "scheduler"

log = logging.getLogger(__name__)


def startup_report(runs: Sequence[StartupRun], source: Mapping[str, Any], top: int = 10) -> dict[str, Any]:
    """The ``report.json`` dict: per run the replay's keys, ``scheduler`` in place of ``config``,
    plus ``topImages`` (``top`` images by pull seconds including waiting); and ``source`` (where
    the data came from)."""
    out = report_dict([r.result for r in runs])
    out["runs"] = [{LABEL: entry.pop("config"), **entry} for entry in out["runs"]]
    for entry, run in zip(out["runs"], runs, strict=True):
        entry["topImages"] = [s.to_dict() for s in run.images[:top]]
    out["source"] = dict(source)
    out.pop("seed", None)
    return out


def write_startup_report(
    out_dir: str | Path,
    runs: Sequence[StartupRun],
    source: Mapping[str, Any],
    *,
    top: int = 10,
    html: bool = True,
) -> list[Path]:
    """Write report.json, pods.csv and (with ``html``) report.html into ``out_dir`` (created)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "report.json", out / "pods.csv"]
    atomic_write_text(paths[0], json.dumps(startup_report(runs, source, top), indent=2) + "\n")
    results = [r.result for r in runs]
    write_pods_csv(paths[1], results, label=LABEL)
    if html:
        try:
            require_plotly()
        except ImportError as e:
            log.warning("report.html skipped: %s", e)
        else:
            paths.append(
                write_report_html(out / "report.html", results, title=TITLE, label=LABEL, wall=False)
            )
    return paths
