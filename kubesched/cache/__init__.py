"""The scheduler cache: pods (bound and assumed) per node, node tree order, image states and
incremental snapshots (``pkg/scheduler/backend/cache``)."""

from kubesched.cache.cache import Cache, CacheDump, SnapshotUpdate
from kubesched.cache.errors import CacheCorruptedError, CacheError, SnapshotInconsistentError
from kubesched.cache.image_states import ImageState, ImageStateTable
from kubesched.cache.node_tree import NodeTree

__all__ = [
    "Cache",
    "CacheCorruptedError",
    "CacheDump",
    "CacheError",
    "ImageState",
    "ImageStateTable",
    "NodeTree",
    "SnapshotInconsistentError",
    "SnapshotUpdate",
]
