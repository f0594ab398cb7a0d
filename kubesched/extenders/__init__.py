"""HTTP scheduler extenders (``pkg/scheduler/extender.go``).

Public API:

* :class:`HTTPExtender` - one extender built from the config model
  (:class:`kubesched.config.types.Extender`).
* :func:`build_extenders` - every configured extender, in the order the scheduler calls them.
* :class:`ExtenderError` - a failed extender call (message as upstream).
* :func:`call_extenders` (in :mod:`kubesched.extenders.preemption`) - the preempt verb applied
  to DefaultPreemption's candidates.
"""

from __future__ import annotations

from kubesched.config.extenders import ordered_extenders
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.extenders.http_extender import MAX_EXTENDER_PRIORITY, HTTPExtender
from kubesched.extenders.transport import ExtenderError
from kubesched.queue.metrics import QueueMetrics

__all__ = ["MAX_EXTENDER_PRIORITY", "ExtenderError", "HTTPExtender", "build_extenders"]


def build_extenders(
    config: KubeSchedulerConfiguration, metrics: QueueMetrics | None = None
) -> list[HTTPExtender]:
    """``buildExtenders``: one :class:`HTTPExtender` per ``config.extenders`` entry, non-ignorable
    ones first (each group in config order). Raises :class:`~kubesched.errors.ConfigError`
    (path ``extenders[i].tlsConfig``) for unusable TLS settings."""
    index = {id(e): i for i, e in enumerate(config.extenders)}
    return [HTTPExtender(e, f"extenders[{index[id(e)]}]", metrics) for e in ordered_extenders(config)]
