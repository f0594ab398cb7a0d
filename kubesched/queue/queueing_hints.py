"""Queueing hints: deciding whether a cluster event may make a rejected pod schedulable
(``pkg/scheduler/backend/queue/scheduling_queue.go`` ``AddUnschedulableIfNotPresent``;
``isPodWorthRequeuing``/``isEventOfInterest`` in
``pkg/scheduler/backend/queue/scheduling_queue.go``).

``hints`` maps a profile name to ``[(registered_event, [(plugin_name, hint_fn | None), ...]), ...]``
(the framework builds it from each plugin's ``events_to_register``). A missing hint function
means Queue; a hint function that raises counts as Queue.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from enum import IntEnum
from typing import Any

from kubesched.api.pod import Pod
from kubesched.framework.events import ClusterEvent, QueueingHint, QueueingHintFn
from kubesched.framework.queued_pod_info import QueuedPodInfo
from kubesched.queue.metrics import QUEUEING_HINT_DURATION, QueueMetrics

_log = logging.getLogger(__name__)

#: ``profile -> [(registered event, [(plugin name, hint fn or None)])]``.
HintMap = Mapping[str, Sequence[tuple[ClusterEvent, Sequence[tuple[str, QueueingHintFn | None]]]]]


class QueueingStrategy(IntEnum):
    """Where a pod goes after an event: stay unschedulable, backoffQ (if still backing off),
    or straight to activeQ."""

    SKIP = 0
    AFTER_BACKOFF = 1
    IMMEDIATELY = 2


class QueueingHints:
    """Evaluates registered events and hints for pods of each profile.

    ``profile_of(pod)`` names the pod's profile (``None``: no hint map, every event is Queue).
    """

    def __init__(
        self,
        hints: HintMap,
        profile_of: Callable[[Pod], str | None],
        metrics: QueueMetrics,
        metrics_enabled: bool,
    ) -> None:
        self._hints = {p: [(ev, list(hs)) for ev, hs in entries] for p, entries in hints.items()}
        self._profile_of = profile_of
        self._metrics = metrics
        self._metrics_enabled = metrics_enabled
        self._interested: dict[ClusterEvent, frozenset[str] | None] = {}
        self.plugin_events: dict[str, list[ClusterEvent]] = {}
        for entries in self._hints.values():
            for ev, hs in entries:
                for plugin, _fn in hs:
                    evs = self.plugin_events.setdefault(plugin, [])
                    if ev not in evs:
                        evs.append(ev)

    def interested_plugins(self, event: ClusterEvent) -> frozenset[str] | None:
        """Plugins (any profile) that registered an event matching ``event``; ``None`` when no
        registered event matches and ``event`` is not the wildcard (the event is of no interest).
        The wildcard returns an empty set (it concerns every pod)."""
        if event in self._interested:
            return self._interested[event]
        if event.is_wildcard():
            res: frozenset[str] | None = frozenset()
        else:
            names = {
                plugin
                for entries in self._hints.values()
                for ev, hs in entries
                if ev.match(event)
                for plugin, _fn in hs
            }
            matched = any(ev.match(event) for entries in self._hints.values() for ev, _hs in entries)
            res = frozenset(names) if matched else None
        self._interested[event] = res
        return res

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        """True for the wildcard or when some profile registered a matching event."""
        return self.interested_plugins(event) is not None

    def worth_requeuing(self, p: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> QueueingStrategy:
        """``isPodWorthRequeuing`` (``pkg/scheduler/backend/queue/scheduling_queue.go``
        ``AddUnschedulableIfNotPresent``)."""
        unsched = p.unschedulable_plugins
        pending = p.pending_plugins
        if not unsched and not pending:
            return QueueingStrategy.AFTER_BACKOFF
        pod = p.pod_info.pod
        if event.is_wildcard():
            # A wildcard event carrying an object targets one pod only (e.g. ForceActivate).
            if new is not None and (not isinstance(new, Pod) or new.uid != pod.uid):
                return QueueingStrategy.SKIP
            return QueueingStrategy.AFTER_BACKOFF
        profile = self._profile_of(pod)
        entries = self._hints.get(profile) if profile is not None else None
        if entries is None:
            return QueueingStrategy.AFTER_BACKOFF
        strategy = QueueingStrategy.SKIP
        for registered, hs in entries:
            if not registered.match(event):
                continue
            for plugin, fn in hs:
                if plugin not in unsched and plugin not in pending:
                    continue
                if fn is not None:
                    hint = self._run_hint(plugin, fn, pod, event, old, new)
                    if hint == QueueingHint.QueueSkip:
                        continue
                if plugin in pending:
                    return QueueingStrategy.IMMEDIATELY
                if not pending:
                    return QueueingStrategy.AFTER_BACKOFF
                strategy = QueueingStrategy.AFTER_BACKOFF
        return strategy

    def _run_hint(
        self, plugin: str, fn: QueueingHintFn, pod: Pod, event: ClusterEvent, old: Any, new: Any
    ) -> QueueingHint:
        start = time.perf_counter() if self._metrics_enabled else 0.0
        err = False
        try:
            hint = fn(pod, old, new)
        except Exception:  # upstream: an error from a hint is treated as Queue
            _log.exception("QueueingHintFn of %s failed for event %s, pod %s", plugin, event.label, pod.key)
            hint = QueueingHint.Queue
            err = True
        if self._metrics_enabled:
            label = "Error" if err else ("QueueSkip" if hint == QueueingHint.QueueSkip else "Queue")
            self._metrics.observe(
                QUEUEING_HINT_DURATION,
                {"plugin": plugin, "event": event.label, "hint": label},
                time.perf_counter() - start,
            )
        return hint
