"""The pre-pull planner's settings tried on one replay over several tie-break seeds.

Usage::

    python scripts/planner_sweep.py TRACE OUT [--seeds 0-5] [--set NAME=VALUE ...] [--config YAML]
        [--window 30d] [--arrival-scale 0.002] [--seed 0] [--images CATALOGUE] [--kubelet YAML]

Replays ``TRACE`` (as ``kubesched replay --trace TRACE --trace-window 30d --arrival-scale 0.002
--seed 0 --scheduler-seed S --prepull --config examples/replay/image-aware.yaml [--kubelet YAML]``) once per
scheduler seed ``S``, with the planner built as ``PrePullPlanner(NAME=VALUE, ...)``
(:class:`kubesched.prepull.planner.PrePullPlanner`; values parsed as the argument's default is
typed), writes each run's ``report.json`` and ``pods.csv`` to ``OUT/s<S>``, and prints per seed
the start-up p95 (seconds), the gigabytes of images pulled by pods, pre-pulled and in all (10^9
bytes, whole images: the replay's ``imageBytesPulled`` and ``imageBytesPrepulled``, as the live
runs count them), the pre-pulls and the precision; then the median of the bytes in all and the
largest p95. Exits 2 for an unknown setting or a value of the wrong type.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import statistics
import sys
from pathlib import Path
from typing import Any

import kubesched
from kubesched.embedded.kubelet.settings_file import read_kubelet_settings
from kubesched.prepull.planner import PrePullPlanner


def planner_settings(items: list[str]) -> dict[str, Any]:
    """``["max_warm_nodes=8", "net_bytes=true"]`` -> ``{"max_warm_nodes": 8, "net_bytes": True}``,
    each value typed as the argument's default. Raises ValueError naming the setting."""
    defaults = {
        name: p.default
        for name, p in inspect.signature(PrePullPlanner.__init__).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }
    out: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or name not in defaults:
            raise ValueError(f"--set {item!r}: expected NAME=VALUE with NAME one of {', '.join(defaults)}")
        default = defaults[name]
        if isinstance(default, bool):
            if text.lower() not in ("true", "false"):
                raise ValueError(f"--set {name}: expected true or false, got {text!r}")
            out[name] = text.lower() == "true"
        else:
            try:
                out[name] = type(default)(text)
            except ValueError:
                raise ValueError(f"--set {name}: expected a {type(default).__name__}, got {text!r}") from None
    return out


def seed_range(text: str) -> list[int]:
    """``"0-5"`` -> ``[0, 1, 2, 3, 4, 5]``; ``"3"`` -> ``[3]``."""
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def row(seed: int, summary: dict[str, Any]) -> tuple[str, float, float]:
    """One printed line of a run's ``report.json`` entry, its bytes in all (GB) and its p95 (s)."""
    pulled, prepulled = summary["imageBytesPulled"] / 1e9, summary["imageBytesPrepulled"] / 1e9
    p95 = summary["startupLatencySeconds"]["p95"]
    precision = summary["prepullPrecision"]
    line = (
        f"seed {seed}: p95 {p95:.2f} s, GB by pods {pulled:.1f}, pre-pulled {prepulled:.1f}, "
        f"in all {pulled + prepulled:.1f}, pre-pulls {summary['prepulls']}, precision "
        + ("-" if precision is None else f"{100 * precision:.1f} %")
    )
    return line, pulled + prepulled, p95


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace")
    parser.add_argument("out", type=Path)
    parser.add_argument("--seeds", type=seed_range, default=seed_range("0-5"))
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--config", default="examples/replay/image-aware.yaml")
    parser.add_argument("--window", default="30d", help="--trace-window (openb traces only; '' for none)")
    parser.add_argument("--arrival-scale", type=float, default=0.002)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--images", default=None, help="image catalogue (default: the packaged one)")
    parser.add_argument("--kubelet", default=None, help="kubelet image-model settings (YAML mapping)")
    args = parser.parse_args(argv)
    try:
        settings = planner_settings(args.settings)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    planner = functools.partial(PrePullPlanner, **settings)
    kubelet = read_kubelet_settings(args.kubelet)
    totals, p95s = [], []
    for seed in args.seeds:
        rep = kubesched.replay(
            args.trace,
            [args.config],
            images=args.images,
            seed=args.seed,
            scheduler_seed=seed,
            window=args.window or None,
            arrival_scale=args.arrival_scale,
            prepull=planner,
            kubelet=kubelet,
        )
        rep.write(args.out / f"s{seed}", html=False)
        line, total, p95 = row(seed, rep.runs[0].summary())
        print(line, flush=True)
        totals.append(total)
        p95s.append(p95)
    print(f"median GB in all {statistics.median(totals):.1f}, largest p95 {max(p95s):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
