"""Typed access to the objects a queueing hint receives (``pkg/scheduler/util/utils.go`` ``As``).

A hint gets ``(pod, old_obj, new_obj)``: for an add ``old_obj`` is ``None``, for a delete
``new_obj`` is ``None``; objects are parsed :class:`~kubesched.api.pod.Pod` /
:class:`~kubesched.api.node.Node` views. A wrong type raises ``TypeError``, which the queue
treats as ``Queue`` (as upstream treats a hint error).
"""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


def as_objects(kind: type[T], old_obj: Any, new_obj: Any) -> tuple[T | None, T | None]:
    """Return ``(old, new)`` checked to be ``kind`` (``None`` stays ``None``).

    Raises:
        TypeError: ``expected Node, but got dict`` when an object has another type.
    """
    for o in (new_obj, old_obj):
        if o is not None and not isinstance(o, kind):
            raise TypeError(f"expected {kind.__name__}, but got {type(o).__name__}")
    return old_obj, new_obj
