"""The plots of a ``kubesched replay`` report, built from data that ``report.json`` carries, so that
``report.html`` and ``kubesched ui`` (which opens a ``report.json``) draw the same figures.

:func:`plot_data` gives one run's plot data, stored as ``runs[i].plots`` in ``report.json``::

    {"startupCdf": {"seconds": [s, ...], "fraction": [0..1, ...]},   # at most CDF_MAX_POINTS points
     "series": {"hours": [h, ...], "bytesPulled": [bytes, ...], "cacheHitRatio": [0..1, ...],
                "allocatedFraction": {"cpu": [f, ...], ...}}}

:func:`report_figures` makes the four plotly figures from ``[{"config": name, "plots": ...}, ...]``:

* start-up latency CDF per config (creation -> container running, log x axis when all > 0);
* bytes pulled over time (cumulative, GB = 10^9 bytes) per config;
* cache hit ratio over time (cumulative bytes found on the node / bytes requested) per config;
* utilisation over time: allocated / allocatable per resource (one panel per resource) per config.

Times on the x axes are hours since the replay origin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import plotly.graph_objects as go

from kubesched.modes.report.result import ReplayResult

__all__ = ["plot_data", "report_figures", "CDF_MAX_POINTS", "FIGURE_TITLES"]

#: at most this many points per CDF line (evenly spaced order statistics, ends included)
CDF_MAX_POINTS = 2000
_HOUR = 3600.0
FIGURE_TITLES = (
    "Start-up latency CDF (creation to container running)",
    "Bytes pulled (cumulative)",
    "Cache hit ratio (cumulative, bytes)",
    "Utilisation: allocated / allocatable",
)
_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


def _cdf(values: Sequence[float]) -> tuple[list[float], list[float]]:
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        return [], []
    if n <= CDF_MAX_POINTS:
        idx = list(range(n))
    else:
        idx = sorted({round(k * (n - 1) / (CDF_MAX_POINTS - 1)) for k in range(CDF_MAX_POINTS)})
    return [xs[i] for i in idx], [(i + 1) / n for i in idx]


def plot_data(r: ReplayResult) -> dict[str, Any]:
    """One run's plot data (see the module docstring)."""
    x, y = _cdf(r.phase_values("startup"))
    resources: list[str] = list(r.mean_allocated_fraction)
    return {
        "startupCdf": {"seconds": x, "fraction": y},
        "series": {
            "hours": [p.t / _HOUR for p in r.series],
            "bytesPulled": [p.bytes_pulled for p in r.series],
            "cacheHitRatio": [p.cache_hit_ratio for p in r.series],
            "allocatedFraction": {
                res: [p.allocated_fraction.get(res, 0.0) for p in r.series] for res in resources
            },
        },
    }


def _latency_cdf(runs: Sequence[Mapping[str, Any]]) -> go.Figure:
    import plotly.graph_objects as go

    fig = go.Figure()
    all_positive = True
    for run in runs:
        cdf = run["plots"]["startupCdf"]
        all_positive = all_positive and all(v > 0 for v in cdf["seconds"])
        fig.add_trace(
            go.Scatter(
                x=cdf["seconds"], y=cdf["fraction"], mode="lines", name=run["config"], line={"shape": "hv"}
            )
        )
    fig.update_layout(
        title=FIGURE_TITLES[0],
        xaxis_title="seconds",
        yaxis_title="fraction of started pods",
        yaxis_range=[0, 1.01],
    )
    if all_positive:
        fig.update_xaxes(type="log")
    return fig


def _over_time(
    runs: Sequence[Mapping[str, Any]], title: str, ytitle: str, key: str, scale: float
) -> go.Figure:
    import plotly.graph_objects as go

    fig = go.Figure()
    for run in runs:
        s = run["plots"]["series"]
        fig.add_trace(
            go.Scatter(x=s["hours"], y=[v / scale for v in s[key]], mode="lines", name=run["config"])
        )
    fig.update_layout(title=title, xaxis_title="hours since the replay origin", yaxis_title=ytitle)
    return fig


def _utilisation(runs: Sequence[Mapping[str, Any]]) -> go.Figure:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    resources: list[str] = []
    for run in runs:
        for res in run["plots"]["series"]["allocatedFraction"]:
            if res not in resources:
                resources.append(res)
    fig = make_subplots(
        rows=max(1, len(resources)),
        cols=1,
        shared_xaxes=True,
        subplot_titles=resources,
        vertical_spacing=0.08,
    )
    for k, run in enumerate(runs):
        s = run["plots"]["series"]
        for row, res in enumerate(resources, start=1):
            fig.add_trace(
                go.Scatter(
                    x=s["hours"],
                    y=s["allocatedFraction"].get(res, [0.0] * len(s["hours"])),
                    mode="lines",
                    name=run["config"],
                    legendgroup=run["config"],
                    showlegend=row == 1,
                    line={"color": _COLOURS[k % len(_COLOURS)]},
                ),
                row=row,
                col=1,
            )
    fig.update_layout(title=FIGURE_TITLES[3], height=260 * max(1, len(resources)))
    fig.update_xaxes(title_text="hours since the replay origin", row=max(1, len(resources)), col=1)
    return fig


def require_plotly() -> None:
    """Raise ImportError with the install hint when plotly, the optional extra ``report``, is missing."""
    try:
        import plotly  # noqa: F401
    except ImportError:
        raise ImportError(
            "report.html and the replay plots need plotly: pip install 'kubesched[report]'"
        ) from None


def report_figures(runs: Sequence[Mapping[str, Any]]) -> list[go.Figure]:
    """The four figures for ``runs`` (each ``{"config": name, "plots": plot_data(...)}``), in the
    order of :data:`FIGURE_TITLES`. Raises KeyError when a run has no ``plots``, ImportError (with
    the install hint) without plotly."""
    require_plotly()
    return [
        _latency_cdf(runs),
        _over_time(runs, FIGURE_TITLES[1], "GB", "bytesPulled", 1e9),
        _over_time(runs, FIGURE_TITLES[2], "ratio", "cacheHitRatio", 1.0),
        _utilisation(runs),
    ]
