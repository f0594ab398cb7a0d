"""An assume cache over an informer kind (``pkg/scheduler/util/assumecache/assume_cache.go``),
used by VolumeBinding for PersistentVolumes and PersistentVolumeClaims.

Reads go to the informer (``handle.objects``) unless an *assumed* version of the object was
recorded: Reserve assumes PV-to-claim bindings in memory so that the next pod in the same run
does not pick the same PV before the binding is written. An assumed object is used until the
informer holds a strictly newer resourceVersion of it (or the object is deleted), exactly as
upstream's cache replaces the assumed object on a newer informer event; ``restore`` drops it
(Unreserve).

Thread safety: one lock (the binding cycle may run on another thread than the scheduling cycle).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from kubesched.api.storage import newer_version


def _rv(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return str(meta.get("resourceVersion") or "")


def _key(obj: Mapping[str, Any], namespaced: bool) -> str:
    meta = obj.get("metadata") or {}
    name = str(meta.get("name") or "")
    return f"{meta.get('namespace') or 'default'}/{name}" if namespaced else name


class AssumeCache:
    """Assumed versions of objects of one ``kind`` on top of an :class:`~kubesched.framework.handle.ObjectLister`.

    Keys are ``name`` for cluster-scoped kinds and ``namespace/name`` otherwise.
    """

    def __init__(self, kind: str, namespaced: bool) -> None:
        self.kind = kind
        self.namespaced = namespaced
        self._assumed: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def key_of(self, obj: Mapping[str, Any]) -> str:
        """The cache key of ``obj``."""
        return _key(obj, self.namespaced)

    def _resolve(self, key: str, informer: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        assumed = self._assumed.get(key)
        if assumed is None:
            return informer
        if informer is None or newer_version(_rv(informer), _rv(assumed)):
            del self._assumed[key]
            return informer
        return assumed

    def get(self, objects: Any, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The assumed version of the object if still current, else the informer's (``None`` if absent)."""
        informer = objects.get(self.kind, namespace if self.namespaced else "", name)
        key = f"{namespace}/{name}" if self.namespaced else name
        with self._lock:
            return self._resolve(key, informer)

    def list(self, objects: Any) -> list[Mapping[str, Any]]:
        """Every informer object, each replaced by its assumed version when that is still current."""
        items = objects.list(self.kind)
        with self._lock:
            if not self._assumed:
                return list(items)
            out = []
            for o in items:
                r = self._resolve(self.key_of(o), o)
                if r is not None:
                    out.append(r)
            return out

    def assume(self, obj: dict[str, Any]) -> None:
        """Record ``obj`` (a new dict, never mutated afterwards) as the current version of its object."""
        with self._lock:
            self._assumed[self.key_of(obj)] = obj

    def restore(self, key: str) -> None:
        """Forget the assumed version of ``key`` (back to the informer's)."""
        with self._lock:
            self._assumed.pop(key, None)

    def __len__(self) -> int:
        return len(self._assumed)
