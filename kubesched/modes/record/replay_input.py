"""What ``kubesched replay --trace REC`` needs from a recording: the workload, the image catalogue
and a kubelet model calibrated on the recording's own pulls.

Calibration (unless a kubelet-model file is given): the pull model's throughput and per-pull cost
fitted to the recording's ``Pulled`` Events (:func:`kubesched.embedded.kubelet.calibrate.calibrate`, joined
pulls left out: ``images calibrate --events REC`` does the same), and ``containerStartSeconds`` set
to the median container start the recording shows (start-up minus scheduling and pulls, over the
pods that started; :mod:`kubesched.modes.startup.analysis`). When the pulls do not determine the
fit (fewer than two image sizes), the model's defaults are kept and the reason is returned. When
the recording holds puller pods of ``kubesched run --prepull``, the cluster pre-pulled through the
kubelet's own pull slot, so the model gets ``prePullKubeletSlot: true`` (``replay --prepull`` then
pre-pulls as that agent did; without puller pods a pre-pull is modelled at the CRI level, as
OpenKruise's ``ImagePullJob`` makes it).
No upstream counterpart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kubesched.embedded.kubelet.calibrate import Calibration, CalibrationError, calibrate, pull_points
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.images.catalogue import ImageCatalogue
from kubesched.modes.record.recording import (
    REGISTRY_CACHE,
    Recording,
    RegistryCache,
    pod_images,
    read_recording,
    recorded_pulls,
    recording_catalogue,
    recording_workload,
)
from kubesched.modes.startup.analysis import StartupData, analyse
from kubesched.prepull.puller_pod import is_puller
from kubesched.trace.workload import Workload

__all__ = ["RecordingInput", "load_recording_input", "calibration_summary"]


@dataclass
class RecordingInput:
    """``workload``, ``catalogue``, ``kubelet`` (camelCase settings for the replay),
    ``calibration`` (None when not fitted), ``notes`` (why not, images left out, ...)."""

    recording: Recording
    workload: Workload
    catalogue: ImageCatalogue
    kubelet: dict[str, Any]
    calibration: Calibration | None
    container_start_seconds: float | None
    notes: list[str] = field(default_factory=list)


def _container_start(recording: Recording) -> float | None:
    runs = analyse(
        StartupData(recording.pod_objects(), list(recording.nodes.values()), recording.image_events())
    )
    starts = [tl.container_start for r in runs for tl in r.result.timelines if tl.container_start is not None]
    return round(float(np.median(starts)), 3) if starts else None


def load_recording_input(
    path: str | Path,
    base_catalogue: ImageCatalogue,
    *,
    kubelet_settings: Mapping[str, Any] | None = None,
    fetch: Any = None,
) -> RecordingInput:
    """Read the recording at ``path`` and build the replay's input. ``kubelet_settings`` (a
    kubelet-model file's settings) replace the calibration; ``fetch(canonical)`` is a registry
    lookup returning ``(digest, [(layer digest, bytes)])`` or None, for images missing from the
    catalogue and the recording's cache. Raises RecordingError for an unreadable recording."""
    recording = read_recording(path)
    images = {i for h in recording.pods.values() for i in pod_images(h.first)}
    cache = RegistryCache(Path(path) / REGISTRY_CACHE, fetch)
    catalogue, notes = recording_catalogue(recording, base_catalogue, sorted(images), cache)
    workload = recording_workload(recording, catalogue)
    calibration = None
    start = None
    settings: dict[str, Any] = {}
    if kubelet_settings:
        settings = dict(kubelet_settings)
    else:
        pulls, joined = recorded_pulls(recording)
        layer = KubeletImageConfig().layer_latency_seconds
        points, skipped = pull_points(pulls, catalogue)
        try:
            calibration = calibrate(points, layer, skipped)
            settings.update(calibration.kubelet_settings())
            if joined:
                notes.append(f"calibration: {joined} joined pulls left out")
        except CalibrationError as e:
            notes.append(f"kubelet model not calibrated: {e}; its defaults are used")
        start = _container_start(recording)
        if start is not None:
            settings["containerStartSeconds"] = start
        if any(is_puller(h.first) for h in recording.pods.values()):
            settings["prePullKubeletSlot"] = True
            notes.append("puller pods recorded: pre-pulls take the kubelet's pull slot (prePullKubeletSlot)")
    return RecordingInput(recording, workload, catalogue, settings, calibration, start, notes)


def calibration_summary(inp: RecordingInput) -> dict[str, Any] | None:
    """The calibration as ``report.json`` gives it (None when not fitted)."""
    c = inp.calibration
    if c is None:
        return None
    return {
        "pulls": c.pulls,
        "bytesPerSecond": round(c.bytes_per_second),
        "pullFixedSeconds": round(c.fixed_seconds, 3),
        "layerLatencySeconds": c.layer_seconds,
        "outliers": c.outliers,
        "medianRelativeError": round(c.median_relative_error, 4),
        "residualScaleSeconds": round(c.scale_seconds, 3),
        "containerStartSeconds": inp.container_start_seconds,
    }
