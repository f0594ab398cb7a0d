"""Fit the pull model to real pulls: per-pull cost and throughput from kubelet ``Pulled`` events.

Model (:mod:`kubesched.images.pull_model`)::

    seconds_i = fixed + layer_seconds * layers_i + bytes_i / throughput

``layer_seconds`` is not fitted (a cluster's events rarely separate it from the fixed cost); it is
taken from the base kubelet settings and subtracted first. ``layers_i`` comes from the image
catalogue where it knows the image (or from a registry lookup, when one is given), else 1. The two unknowns ``fixed`` and ``1 / throughput`` are
fitted by least squares on ``(bytes_i, y_i)`` made robust with Huber weights (iteratively
reweighted least squares, tuning constant 1.345, scale = 1.4826 x the median absolute residual):
a pull that was slow for reasons of its own (a throttled registry, a cold disk) pulls the fit
little. Points with a residual above 3 scales are reported as outliers. A negative intercept is
refitted with ``fixed = 0``.

Errors: :class:`CalibrationError` when fewer than two pulls of different sizes are usable or the
fitted time does not grow with size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from kubesched.embedded.kubelet.pulled_events import PulledEvent
from kubesched.errors import KubeschedError
from kubesched.images.catalogue import CatalogueImage, ImageCatalogue
from kubesched.images.pull_model import DEFAULT_LAYER_SECONDS

__all__ = ["Calibration", "CalibrationError", "calibrate", "pull_points"]

_HUBER_K = 1.345
_OUTLIER_SCALES = 3.0
_MAD_TO_SIGMA = 1.4826


class CalibrationError(KubeschedError):
    """The events do not determine the model."""


@dataclass(frozen=True, slots=True)
class PullPoint:
    """One usable pull: ``image``, ``size_bytes`` (compressed), ``layers`` (None = unknown) and
    ``seconds``."""

    image: str
    size_bytes: int
    layers: int | None
    seconds: float


@dataclass(frozen=True, slots=True)
class Calibration:
    """The fit: ``fixed_seconds`` (s per pull), ``bytes_per_second`` (compressed B/s),
    ``layer_seconds`` (s per layer, not fitted), ``pulls`` (points used), ``skipped`` (pulls with
    no size known), ``outliers`` (points beyond 3 robust scales), ``scale_seconds`` (robust
    residual scale), ``layers_known`` (points whose layer count the catalogue gave) and
    ``median_relative_error`` (the fit's error: median over the pulls of ``|predicted - observed| /
    observed`` pull seconds)."""

    fixed_seconds: float
    bytes_per_second: float
    layer_seconds: float
    pulls: int
    skipped: int
    outliers: int
    scale_seconds: float
    layers_known: int
    median_relative_error: float = 0.0

    def kubelet_settings(self) -> dict[str, Any]:
        """The kubelet-model settings of this fit (camelCase, as ``replay --kubelet`` reads them):
        ``decompressBytesPerSecond`` (rounded to whole bytes/s), ``pullFixedSeconds`` (ms) and
        ``layerLatencySeconds``."""
        return {
            "decompressBytesPerSecond": round(self.bytes_per_second),
            "pullFixedSeconds": round(self.fixed_seconds, 3),
            "layerLatencySeconds": self.layer_seconds,
        }


def pull_points(
    events: Iterable[PulledEvent],
    catalogue: ImageCatalogue | None,
    lookup: Callable[[str], CatalogueImage | None] | None = None,
) -> tuple[list[PullPoint], int]:
    """Usable pulls of ``events`` and the number skipped. A pull's size is the event's (else the
    image's); its layer count the image's (else None). The image is the catalogue's, else what
    ``lookup(ref)`` returns (a registry lookup, asked once per reference). Pulls with no known size
    or a size of 0 are skipped."""
    points: list[PullPoint] = []
    skipped = 0
    looked: dict[str, CatalogueImage | None] = {}
    for ev in events:
        image = catalogue.get(ev.image) if catalogue is not None else None
        if image is None and lookup is not None:
            if ev.image not in looked:
                looked[ev.image] = lookup(ev.image)
            image = looked[ev.image]
        size = (
            ev.size_bytes if ev.size_bytes is not None else (image.size_bytes if image is not None else None)
        )
        if not size:
            skipped += 1
            continue
        layers = len(image.unique_layers) if image is not None else None
        points.append(PullPoint(ev.image, size, layers, ev.seconds))
    return points, skipped


def _wls(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], w: npt.NDArray[np.float64], intercept: bool
) -> tuple[float, float]:
    if intercept:
        sw = w.sum()
        mx, my = (w * x).sum() / sw, (w * y).sum() / sw
        sxx = (w * (x - mx) ** 2).sum()
        slope = float((w * (x - mx) * (y - my)).sum() / sxx) if sxx > 0 else 0.0
        return my - slope * mx, slope
    sxx = (w * x * x).sum()
    return 0.0, float((w * x * y).sum() / sxx) if sxx > 0 else 0.0


def _robust_line(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], intercept: bool
) -> tuple[float, float, float, npt.NDArray[np.float64]]:
    """Huber IRLS of ``y = a + b x``: ``(a, b, scale, residuals)``."""
    w = np.ones_like(x)
    a, b = _wls(x, y, w, intercept)
    scale = 0.0
    for _ in range(100):
        r = y - (a + b * x)
        scale = _MAD_TO_SIGMA * float(np.median(np.abs(r - np.median(r))))
        cut = _HUBER_K * max(scale, 1e-9)
        w = np.where(np.abs(r) <= cut, 1.0, cut / np.maximum(np.abs(r), 1e-300))
        na, nb = _wls(x, y, w, intercept)
        if abs(na - a) <= 1e-12 * max(1.0, abs(a)) and abs(nb - b) <= 1e-12 * max(1e-12, abs(b)):
            a, b = na, nb
            break
        a, b = na, nb
    r = y - (a + b * x)
    return a, b, scale, r


def calibrate(
    points: list[PullPoint], layer_seconds: float = DEFAULT_LAYER_SECONDS, skipped: int = 0
) -> Calibration:
    """Fit ``fixed_seconds`` and ``bytes_per_second`` to ``points`` (see the module docstring).
    Raises CalibrationError when the points do not determine a line with a positive slope."""
    if len({p.size_bytes for p in points}) < 2:
        raise CalibrationError(
            f"need pulls of at least two different image sizes, got {len(points)} usable pull(s)"
            + (f" ({skipped} without a known size)" if skipped else "")
        )
    x = np.array([p.size_bytes for p in points], dtype=np.float64)
    y = np.array(
        [p.seconds - layer_seconds * (p.layers if p.layers is not None else 1) for p in points],
        dtype=np.float64,
    )
    a, b, scale, r = _robust_line(x, y, intercept=True)
    if a < 0:
        a, b, scale, r = _robust_line(x, y, intercept=False)
    if not b > 0:
        raise CalibrationError(
            f"the pull time does not grow with the image size in these {len(points)} pulls "
            "(a fitted throughput must be positive)"
        )
    outliers = int((np.abs(r) > _OUTLIER_SCALES * max(scale, 1e-9)).sum())
    observed = np.array([p.seconds for p in points], dtype=np.float64)
    positive = observed > 0
    relative = float(np.median(np.abs(r[positive]) / observed[positive])) if positive.any() else 0.0
    return Calibration(
        fixed_seconds=float(a),
        bytes_per_second=1.0 / b,
        layer_seconds=layer_seconds,
        pulls=len(points),
        skipped=skipped,
        outliers=outliers,
        scale_seconds=scale,
        layers_known=sum(p.layers is not None for p in points),
        median_relative_error=relative,
    )
