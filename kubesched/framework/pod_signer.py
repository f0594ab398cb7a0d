"""A profile's ``SignPod``: the pod signature OpportunisticBatching compares
(``pkg/scheduler/framework/runtime/framework.go``: ``computeBatchablePlugins``, ``SignPod``).

The signature is the JSON object (keys sorted, as Go marshals maps) of ``{SchedulerName signer:
spec.schedulerName}`` plus every fragment of every signing plugin. A profile signs no pod (every
signature is ``None``) when it has extenders, or when any of its PreFilter, Filter, PreScore or
Score plugins does not implement :class:`~kubesched.framework.interfaces.SignPlugin`; a pod is
unsigned when one plugin returns a non-Success status (an Error is logged), raises, or gives a
fragment that does not marshal.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Iterable, Mapping
from time import perf_counter
from typing import TYPE_CHECKING, Any

from kubesched.framework.interfaces import SignPlugin
from kubesched.framework.metrics_sink import MetricsSink
from kubesched.framework.signers import SCHEDULER_NAME_SIGNER_NAME
from kubesched.framework.status import Code
from kubesched.logs.kv import v_info

if TYPE_CHECKING:
    from kubesched.api.pod import Pod
    from kubesched.framework.interfaces import Plugin

log = logging.getLogger(__name__)

__all__ = ["SIGN_LABEL", "PodSigner"]

#: the ``extension_point`` label of signing's durations (upstream ``metrics.Sign``)
SIGN_LABEL = "Sign"


def _json_default(o: Any) -> Any:
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        return dataclasses.asdict(o)
    if isinstance(o, Mapping):
        return dict(o)
    if isinstance(o, (set, frozenset)):
        return sorted(o)
    raise TypeError(f"{type(o).__name__} is not JSON serializable")


class PodSigner:
    """Signs pods for one profile. ``candidates``: the profile's PreFilter, Filter, PreScore and
    Score plugins in that order (repeats allowed); ``has_extenders``: the scheduler has extenders."""

    def __init__(
        self, profile_name: str, candidates: Iterable[Plugin], has_extenders: bool, sink: MetricsSink
    ) -> None:
        self.profile_name = profile_name
        self.sink = sink
        self.plugins: list[SignPlugin] = []
        unsupported: list[str] = []
        seen: set[str] = set()
        for pl in candidates:
            if pl.NAME in seen:
                continue
            seen.add(pl.NAME)
            if isinstance(pl, SignPlugin):
                self.plugins.append(pl)
            else:
                unsupported.append(pl.NAME)
        #: position of the plugin that refused the last unsigned pod (asked first next time)
        self._first_refuser = 0
        #: upstream ``enableSignatures``
        self.enabled = not has_extenders and not unsupported
        if has_extenders:
            v_info(
                log,
                0,
                "Disabling signatures for profile because it has extenders configured.",
                profile=profile_name,
            )
        if unsupported:
            v_info(
                log,
                0,
                "Disabling signatures for profile because plugins do not support it.",
                profile=profile_name,
                plugins=unsupported,
            )

    def sign_pod(self, pod: Pod, record_plugin_stats: bool = False) -> bytes | None:
        """The pod's signature (JSON bytes), or ``None`` when it cannot be signed.

        The plugins are asked starting with the one that refused the last unsigned pod (in a
        profile whose PodTopologySpread has default constraints it refuses every pod, so that
        costs one call); fragments are merged in the profile's plugin order, so the signature is
        the same whichever plugin was asked first. With metrics, each plugin's call is observed
        (``Sign``), and the whole in sampled cycles (``record_plugin_stats``)."""
        if not self.enabled:
            return None
        plugins = self.plugins
        n = len(plugins)
        first = self._first_refuser
        fragments_of: list[Any] = [None] * n
        sink = self.sink
        timed = sink.enabled
        t_all = perf_counter() if timed and record_plugin_stats else 0.0
        try:
            for k in range(n):
                i = (first + k) % n
                pl = plugins[i]
                t0 = perf_counter() if timed else 0.0
                try:
                    fragments, s = pl.sign_pod(pod)
                except Exception as e:  # noqa: BLE001 - a plugin's failure only leaves the pod unsigned
                    log.error("SignPod failed for plugin %s: %s: %s", pl.NAME, type(e).__name__, e)
                    if timed:
                        sink.plugin_execution_duration(pl.NAME, SIGN_LABEL, "Error", perf_counter() - t0)
                    self._first_refuser = i
                    return None
                if timed:
                    code = "Success" if s is None else str(s.code)
                    sink.plugin_execution_duration(pl.NAME, SIGN_LABEL, code, perf_counter() - t0)
                if s is not None and not s.is_success():
                    if s.code == Code.Error:
                        log.error("SignPod failed for plugin %s: %s", pl.NAME, s.message())
                    v_info(log, 5, "SignPod can't sign pod due to plugin", plugin=pl.NAME, status=s.message())
                    self._first_refuser = i
                    return None
                fragments_of[i] = fragments
            sig: dict[str, Any] = {SCHEDULER_NAME_SIGNER_NAME: pod.scheduler_name}
            for fragments in fragments_of:
                for f in fragments or ():
                    sig[f.key] = f.value
            try:
                return json.dumps(sig, sort_keys=True, separators=(",", ":"), default=_json_default).encode()
            except (TypeError, ValueError) as e:
                log.error("SignPod failed to marshal signature object: %s", e)
                return None
        finally:
            if timed and record_plugin_stats:
                sink.extension_point_duration(
                    SIGN_LABEL, "Success", self.profile_name, perf_counter() - t_all
                )
