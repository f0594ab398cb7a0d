"""Verbosity levels and key/value log calls (``k8s.io/klog/v2``: ``klog.V(n).InfoS``, ``klog.KObj``).

klog's ``V(n)`` maps onto stdlib levels below INFO: ``V(0)`` is ``INFO`` (20), ``V(2)`` is 18,
``V(4)`` is 16, ``V(10)`` is 10 (``DEBUG``); ``-v=N`` lets every ``V(n <= N)`` through.
Key/value pairs travel in the record's ``kv`` attribute, so any handler (text, JSON) renders them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

__all__ = ["KObj", "v_info", "v_level"]


def v_level(v: int) -> int:
    """The stdlib level of klog verbosity ``v`` (0..10)."""
    return logging.INFO - max(0, min(int(v), 10))


@dataclass(frozen=True, slots=True)
class KObj:
    """A namespaced object reference (``klog.KObj``): text ``ns/name``, JSON ``{"name", "namespace"}``."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "namespace": self.namespace} if self.namespace else {"name": self.name}


def v_info(logger: logging.Logger, v: int, msg: str, /, **kv: Any) -> None:
    """``logger.V(v).Info(msg, k1, v1, ...)``: log ``msg`` at verbosity ``v`` with key/value pairs
    (cheap when the level is off: nothing is formatted)."""
    level = v_level(v)
    if logger.isEnabledFor(level):
        logger.log(level, msg, extra={"kv": kv, "v": v}, stacklevel=2)
