"""``kubesched.replay(...)``: a trace replay as a Python call, for notebooks.

>>> import kubesched
>>> rep = kubesched.replay("tests/fixtures/replay/tiny.yaml", [None, "examples/replay/image-aware.yaml"],
...                       images="tests/fixtures/replay/catalogue.yaml")
>>> [run.summary()["config"] for run in rep.runs]
['upstream-default', 'examples/replay/image-aware.yaml']

The same replay ``kubesched replay`` runs (same workload loading, image assignment, kubelet model
and seed), without writing files unless :meth:`Replay.write` is called.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubesched.config.load import load_config
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.modes.replay.run import ConfigSpec, run_replays
from kubesched.modes.report.report_json import report_dict, write_pods_csv, write_report_json
from kubesched.modes.report.result import ReplayResult

if TYPE_CHECKING:
    import pandas
    import plotly.graph_objects as go

    from kubesched.prepull.hook import PlannerFactory
    from kubesched.trace.workload import Workload

__all__ = ["Replay", "replay"]

ReplayConfig = KubeSchedulerConfiguration | str | Path | None


def _spec(config: ReplayConfig, index: int) -> ConfigSpec:
    if config is None:
        return ConfigSpec("upstream-default", None)
    if isinstance(config, KubeSchedulerConfiguration):
        return ConfigSpec(f"config-{index}", config)
    return ConfigSpec(str(config), load_config(str(config)))


class Replay:
    """The runs of :func:`replay`, one :class:`~kubesched.modes.report.result.ReplayResult` per config
    (``.summary()`` gives its metrics: start-up percentiles in seconds, bytes, cache hits, packing)."""

    def __init__(self, runs: list[ReplayResult], workload: Workload, kubelet: Mapping[str, Any]) -> None:
        self.runs = runs
        self.workload = workload
        self.kubelet = dict(kubelet)

    def __repr__(self) -> str:
        return f"<Replay configs={[r.summary()['config'] for r in self.runs]} pods={len(self.workload.pods)}>"

    def summaries(self) -> list[dict[str, Any]]:
        """``run.summary()`` of every run (the ``runs`` of report.json)."""
        return [r.summary() for r in self.runs]

    def to_dict(self) -> dict[str, Any]:
        """The report.json document."""
        return report_dict(self.runs, self.workload, self.kubelet)

    def figures(self) -> dict[str, go.Figure]:
        """The plotly figures of report.html by name (``latency``, ``bytes``, ``cacheHit``,
        ``utilisation``)."""
        from kubesched.modes.report.report_plots import plot_data, report_figures

        figures = report_figures([{"config": r.config, "plots": plot_data(r)} for r in self.runs])
        return dict(zip(("latency", "bytes", "cacheHit", "utilisation"), figures, strict=True))

    def to_frame(self) -> pandas.DataFrame:
        """One row per config with its summary metrics (nested values flattened as ``a.b``). Needs pandas."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_frame() needs pandas: pip install 'kubesched[notebook]'") from None
        return pd.json_normalize(self.summaries())

    def write(self, out_dir: str | Path, html: bool = True) -> list[Path]:
        """Write report.json, pods.csv (and report.html) to ``out_dir`` as ``kubesched replay --out``."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = [
            write_report_json(out / "report.json", self.runs, self.workload, self.kubelet),
            write_pods_csv(out / "pods.csv", self.runs),
        ]
        if html:
            from kubesched.modes.report.report_html import write_report_html

            written.append(write_report_html(out / "report.html", self.runs, self.workload, self.kubelet))
        return written


def replay(
    trace: str | Path,
    configs: Sequence[ReplayConfig] = (None,),
    *,
    images: str | Path | None = None,
    seed: int = 0,
    scheduler_seed: int | None = None,
    window: str | None = None,
    max_pods: int | None = None,
    max_nodes: int | None = None,
    image_mode: str = "per-app",
    zipf_s: float = 1.1,
    apps: int = 200,
    kubelet: Mapping[str, Any] | None = None,
    prepull: bool | PlannerFactory = False,
    arrival_scale: float = 1.0,
    attempt_seconds: float = 0.0,
) -> Replay:
    """Replay ``trace`` once per config (None: the upstream default profile; a path or a parsed
    ``KubeSchedulerConfiguration``), with the arguments of ``kubesched replay`` (``window`` is
    ``--trace-window``; ``scheduler_seed`` is ``--scheduler-seed``: the tie-breaking seed, default
    ``seed``; ``kubelet`` a mapping of kubelet image-model settings in camelCase; ``prepull``:
    True for ``--prepull``'s planner, or a zero-argument factory of another planner, e.g.
    ``functools.partial(PrePullPlanner, max_warm_nodes=8)``).

    Raises :class:`~kubesched.errors.ConfigError` for a bad config or kubelet setting,
    :class:`~kubesched.errors.ManifestError` for a malformed trace,
    :class:`~kubesched.errors.MissingFileError` (a ``FileNotFoundError``) for a missing trace file.
    """
    from kubesched.embedded.kubelet.config import KubeletImageConfig
    from kubesched.images.assign import ImageAssigner
    from kubesched.images.catalogue import load_catalogue
    from kubesched.prepull.hook import DEFAULT_PLANNER, load_planner_factory
    from kubesched.trace.load import load_workload

    specs = [_spec(c, i) for i, c in enumerate(configs)]
    catalogue = load_catalogue(str(images) if images is not None else None)
    assigner = ImageAssigner(catalogue, seed=seed, mode=image_mode, zipf_s=zipf_s, apps=apps)  # type: ignore[arg-type]
    workload = load_workload(str(trace), assigner, window=window, max_pods=max_pods, max_nodes=max_nodes)
    workload = workload.with_arrival_scale(arrival_scale)
    settings = {**workload.kubelet, **dict(kubelet or {})}
    kubelet_config = KubeletImageConfig.from_mapping(settings, workload.description)
    if callable(prepull):
        planners = [prepull]
    else:
        planners = [load_planner_factory(DEFAULT_PLANNER)] if prepull else []
    runs = run_replays(
        workload,
        specs,
        catalogue=catalogue,
        kubelet_config=kubelet_config,
        seed=seed if scheduler_seed is None else scheduler_seed,
        planners=planners,
        attempt_seconds=attempt_seconds,
    )
    return Replay(runs, workload, kubelet_config.to_mapping())
