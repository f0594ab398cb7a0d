"""Errors raised by the scheduler cache (``pkg/scheduler/backend/cache/cache.go``).

These are internal consistency errors (an informer event the cache cannot apply, a binding
path forgetting a pod that was never assumed); they are not user errors, so they do not
derive from :class:`kubesched.errors.KubeschedError`. Messages reproduce upstream's text.
"""

from __future__ import annotations


class CacheError(Exception):
    """An operation the cache refuses, e.g. ``pod <uid>(<ns>/<name>) is in the cache, so can't be assumed``."""


class CacheCorruptedError(CacheError):
    """Upstream logs ``scheduler cache is corrupted and can badly affect scheduling decisions`` and
    **exits the process** (``klog.FlushAndExit``) here, e.g. when an update moves a pod to another
    node. kubesched raises this instead; callers should treat it as fatal."""


class SnapshotInconsistentError(CacheError):
    """``update_snapshot`` found ``len(node_info_list) != nodes in tree``. The lists were rebuilt
    for the next cycle, but the current scheduling cycle must fail (upstream returns the error)."""
