"""The system default (or configured default) spread constraints of a pod, kept per pod shape.

:func:`~kubesched.plugins.podtopologyspread.common.build_default_constraints` reads every Service
of the pod's namespace and the pod's controlling ReplicationController, ReplicaSet or
StatefulSet (``pkg/scheduler/framework/plugins/podtopologyspread/common.go:
buildDefaultConstraints``, ``helper/spread.go: DefaultSelector``) for every pod, in PreFilter and
again in PreScore. Its result depends only on the pod's namespace, labels and controller reference
and on the objects of those four kinds, so :class:`DefaultConstraintsCache` keeps it per
(namespace, labels, controller, action) and drops everything when the lister reports another
version of any of the four kinds. A lister without ``kind_version`` is read every time, as before.

Two answers need no key at all: an ``action`` no default constraint has (``filterTopologySpreadConstraints``
keeps none, so ``buildDefaultConstraints`` returns none: with the system defaults, every PreFilter), and
a cluster with no object of the four kinds (the selector stays empty, so again none).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from kubesched.api.pod import Pod, TopologySpreadConstraint
from kubesched.plugins.podtopologyspread.common import SpreadConstraint, build_default_constraints

#: the kinds :func:`~kubesched.plugins.podtopologyspread.common.default_selector` reads
SELECTOR_KINDS: Final = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")
#: entries kept before the cache starts again (distinct pod shapes, not pods)
MAX_ENTRIES: Final = 4096

_CONTROLLERS: Final = {("v1", "ReplicationController"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")}

CacheKey = tuple[str, frozenset[tuple[str, str]], tuple[str, str, str] | None, str]


def _controller_key(pod: Pod) -> tuple[str, str, str] | None:
    """The pod's controller reference as ``default_selector`` reads it: (apiVersion, kind, name)
    of the first ``controller: true`` owner when it is one of the kinds whose selector counts,
    else None (any other owner adds nothing)."""
    meta = pod.raw.get("metadata") or {}
    for o in meta.get("ownerReferences") or []:
        if isinstance(o, Mapping) and o.get("controller") is True:
            api_version, kind = o.get("apiVersion"), o.get("kind")
            if isinstance(api_version, str) and isinstance(kind, str) and (api_version, kind) in _CONTROLLERS:
                return api_version, kind, str(o.get("name") or "")
            return None
    return None


class DefaultConstraintsCache:
    """``build_default_constraints`` results per pod shape, valid while the lister's versions of
    :data:`SELECTOR_KINDS` stay the same. Not thread-safe beyond the GIL's single dict operations
    (one scheduling cycle at a time uses it)."""

    __slots__ = ("_entries", "_versions", "_no_selectors", "_actions", "hits", "misses")

    def __init__(self) -> None:
        self._entries: dict[CacheKey, tuple[SpreadConstraint, ...]] = {}
        self._versions: tuple[int, ...] | None = None
        #: no object of SELECTOR_KINDS at ``_versions``: every pod's default selector is empty
        self._no_selectors = False
        #: the ``whenUnsatisfiable`` values of the default constraints, once seen
        self._actions: frozenset[str] | None = None
        self.hits = 0
        self.misses = 0

    def get(
        self, default_constraints: Sequence[TopologySpreadConstraint], pod: Pod, action: str, objects: Any
    ) -> list[SpreadConstraint]:
        """What ``build_default_constraints(default_constraints, pod, action, objects)`` returns
        (a new list each call). ``default_constraints`` must be the same for every call on one
        cache (one plugin instance)."""
        actions = self._actions
        if actions is None:
            actions = self._actions = frozenset(c.when_unsatisfiable for c in default_constraints)
        if action not in actions:
            return []
        kind_version: Callable[[str], int] | None = getattr(objects, "kind_version", None)
        if kind_version is None:
            return build_default_constraints(default_constraints, pod, action, objects)
        versions = (
            kind_version("Service"),
            kind_version("ReplicationController"),
            kind_version("ReplicaSet"),
            kind_version("StatefulSet"),
        )
        if versions != self._versions:
            self._entries.clear()
            self._versions = versions
            self._no_selectors = not any(objects.list(k) for k in SELECTOR_KINDS)
        if self._no_selectors:
            self.hits += 1
            return []
        labels = pod.labels
        key: CacheKey = (pod.namespace, frozenset(labels.items()), _controller_key(pod), action)
        found = self._entries.get(key)
        if found is None:
            self.misses += 1
            if len(self._entries) >= MAX_ENTRIES:
                self._entries.clear()
            found = tuple(build_default_constraints(default_constraints, pod, action, objects))
            self._entries[key] = found
        else:
            self.hits += 1
        return list(found)
