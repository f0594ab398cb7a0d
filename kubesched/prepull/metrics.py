"""Prometheus metrics of the pre-pull controller (served on the scheduler's ``/metrics``).

* ``kubesched_prepulls_total{outcome}``: finished pre-pulls (one per node and image) by outcome:
  ``succeeded``, ``failed`` (the kubelet could not pull), ``timeout`` (not done within the
  controller's timeout; the puller pod is deleted), ``skipped_disk_pressure`` (the planner chose a
  node with ``DiskPressure``; nothing was created);
* ``kubesched_prepull_bytes_total``: compressed bytes of the images pre-pulled successfully (the
  catalogue's sizes);
* ``kubesched_prepull_used_total``: pre-pulled images that a pod used on that node before image
  GC removed them;
* ``kubesched_prepull_precision``: used / started pre-pulls so far (0 before the first).
"""

from __future__ import annotations

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge

__all__ = ["PrePullMetrics", "OUTCOMES"]

OUTCOMES = ("succeeded", "failed", "timeout", "skipped_disk_pressure")


class PrePullMetrics:
    """The collectors, registered in ``registry`` (default: the process's, which ``/metrics`` serves)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        reg = REGISTRY if registry is None else registry
        self.prepulls = Counter(
            "kubesched_prepulls",
            "Finished image pre-pulls (node, image) by outcome.",
            ["outcome"],
            registry=reg,
        )
        for outcome in OUTCOMES:
            self.prepulls.labels(outcome)
        self.bytes = Counter(
            "kubesched_prepull_bytes", "Compressed bytes of images pre-pulled successfully.", registry=reg
        )
        self.used = Counter(
            "kubesched_prepull_used",
            "Pre-pulled images a pod used on their node before image GC removed them.",
            registry=reg,
        )
        self.precision = Gauge(
            "kubesched_prepull_precision",
            "Pre-pulled images used by a pod before GC / pre-pulls started.",
            registry=reg,
        )
