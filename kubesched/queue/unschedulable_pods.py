"""The unschedulable pod pool (``pkg/scheduler/backend/queue/scheduling_queue.go`` ``PriorityQueue``;
``unschedulablePods`` in
``pkg/scheduler/backend/queue/scheduling_queue.go``).

A dict keyed by ``namespace/name`` holding pods rejected by plugins (and gated pods, counted
separately). Two indexes keep cluster-event handling off a full scan:

* by rejector plugin (``unschedulable_plugins | pending_plugins``; ``""`` for none): an event
  only needs to look at pods rejected by plugins that registered a matching event;
* *cross-topology candidates*: pods rejected by PodTopologySpread or having a required
  pod-affinity term, the only ones ``AssignedPodAdd``/``Update`` events can help.

Iteration order is insertion order (upstream iterates a Go map, i.e. randomly); candidate
lists are returned in that order. Not thread-safe on its own.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubesched.framework.queued_pod_info import QueuedPodInfo

POD_TOPOLOGY_SPREAD = "PodTopologySpread"

_ABSENT = object()


def _rejectors(p: QueuedPodInfo) -> set[str]:
    r = p.unschedulable_plugins | p.pending_plugins
    return r if r else {""}


class UnschedulablePods:
    """Pool of unschedulable and gated pods (see module docstring)."""

    __slots__ = ("_pods", "_order", "_seq", "_gated", "_by_plugin", "_indexed", "_cross", "_cross_sorted")

    def __init__(self) -> None:
        self._pods: dict[str, QueuedPodInfo] = {}
        self._order: dict[str, int] = {}
        self._seq = 0
        self._gated: set[str] = set()
        self._by_plugin: dict[str, dict[str, None]] = {}
        self._indexed: dict[str, frozenset[str]] = {}
        self._cross: dict[str, None] = {}
        #: :meth:`cross_topology_candidates` as last computed (None: to recompute); every binding
        #: asks for it, the pool changes far less often
        self._cross_sorted: list[QueuedPodInfo] | None = None

    def __len__(self) -> int:
        return len(self._pods)

    def __contains__(self, key: str) -> bool:
        return key in self._pods

    @property
    def gated_count(self) -> int:
        """Number of gated pods (``gating_plugin != ""``)."""
        return len(self._gated)

    @property
    def unschedulable_count(self) -> int:
        """Number of pods that are not gated."""
        return len(self._pods) - len(self._gated)

    def get(self, key: str) -> QueuedPodInfo | None:
        """The entry for ``namespace/name``."""
        return self._pods.get(key)

    def values(self) -> list[QueuedPodInfo]:
        """All entries in insertion order."""
        return list(self._pods.values())

    def add_or_update(self, p: QueuedPodInfo) -> bool:
        """Insert or replace ``p``; returns True if the key was new."""
        k = p.pod_info.pod.key
        new = k not in self._pods
        self._pods[k] = p
        if k in self._cross:
            self._cross_sorted = None
        if new:
            self._order[k] = self._seq
            self._seq += 1
        self.reindex(p)
        return new

    def reindex(self, p: QueuedPodInfo) -> None:
        """Refresh the gated flag and indexes of a stored entry whose plugins/pod changed."""
        k = p.pod_info.pod.key
        if k not in self._pods:
            return
        if p.gating_plugin:
            self._gated.add(k)
        else:
            self._gated.discard(k)
        new_idx = frozenset(_rejectors(p))
        old_idx = self._indexed.get(k)
        if old_idx != new_idx:
            if old_idx is not None:
                self._unindex_plugins(k, old_idx)
            for pl in new_idx:
                self._by_plugin.setdefault(pl, {})[k] = None
            self._indexed[k] = new_idx
        if POD_TOPOLOGY_SPREAD in p.unschedulable_plugins or p.pod_info.required_affinity_terms:
            if k not in self._cross:
                self._cross[k] = None
                self._cross_sorted = None
        elif self._cross.pop(k, _ABSENT) is not _ABSENT:
            self._cross_sorted = None

    def delete(self, key: str) -> QueuedPodInfo | None:
        """Remove and return the entry, or ``None``."""
        p = self._pods.pop(key, None)
        if p is None:
            return None
        del self._order[key]
        self._gated.discard(key)
        idx = self._indexed.pop(key, None)
        if idx is not None:
            self._unindex_plugins(key, idx)
        if self._cross.pop(key, _ABSENT) is not _ABSENT:
            self._cross_sorted = None
        return p

    def _unindex_plugins(self, k: str, plugins: Iterable[str]) -> None:
        for pl in plugins:
            b = self._by_plugin.get(pl)
            if b is not None:
                b.pop(k, None)
                if not b:
                    del self._by_plugin[pl]

    def _sorted(self, keys: Iterable[str]) -> list[QueuedPodInfo]:
        order = self._order
        return [self._pods[k] for k in sorted(keys, key=order.__getitem__)]

    def rejected_by(self, plugins: Iterable[str]) -> list[QueuedPodInfo]:
        """Pods whose rejector set intersects ``plugins`` plus pods with no rejector at all,
        in insertion order."""
        keys: set[str] = set()
        for pl in (*plugins, ""):
            b = self._by_plugin.get(pl)
            if b:
                keys.update(b)
        return self._sorted(keys)

    def cross_topology_candidates(self) -> list[QueuedPodInfo]:
        """Pods rejected by PodTopologySpread or with required affinity terms, insertion order
        (a new list; sorted again only after the candidates changed)."""
        if self._cross_sorted is None:
            self._cross_sorted = self._sorted(self._cross)
        return list(self._cross_sorted)
