"""``CycleState`` (``pkg/scheduler/framework/cycle_state.go``).

Per-attempt key -> state store shared by a profile's plugins. A plugin's state is a
:class:`StateData` (``clone()`` copies what the PreFilter AddPod/RemovePod extensions change;
:class:`ReadOnlyStateData` for state nothing changes after it is written); any other value is
shared between clones.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

PODS_TO_ACTIVATE_KEY = "kubernetes.io/pods-to-activate"


class StateData(ABC):
    """A plugin's value in CycleState (upstream ``fwk.StateData``)."""

    __slots__ = ()

    @abstractmethod
    def clone(self) -> StateData:
        """A copy that later changes to either side do not affect (``Clone``)."""


class ReadOnlyStateData(StateData):
    """State that is never changed after it is written: ``clone`` returns the same object."""

    __slots__ = ()

    def clone(self) -> StateData:
        return self


class StateNotFoundError(LookupError):
    """``read`` of a key nobody wrote: upstream's ``not found`` error."""


class CycleState:
    """Key/value store for one scheduling attempt plus the skip sets and metrics-sampling flag."""

    __slots__ = (
        "_storage",
        "record_plugin_metrics",
        "skip_filter_plugins",
        "skip_score_plugins",
        "skip_pre_bind_plugins",
        "recorder",
    )

    def __init__(self) -> None:
        self._storage: dict[str, Any] = {}
        self.record_plugin_metrics = False
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: set[str] = set()
        #: a ``CycleRecorder`` when this attempt's verdicts are being recorded (simulate/explain), else None
        self.recorder: Any = None

    def read(self, key: str) -> Any:
        """Return the value for ``key``; raises :class:`StateNotFoundError` (``not found``)."""
        try:
            return self._storage[key]
        except KeyError:
            raise StateNotFoundError("not found") from None

    def get(self, key: str, default: Any = None) -> Any:
        """Return the value for ``key`` or ``default``."""
        return self._storage.get(key, default)

    def write(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key``."""
        self._storage[key] = value

    def delete(self, key: str) -> None:
        """Remove ``key`` if present."""
        self._storage.pop(key, None)

    def clone(self) -> CycleState:
        """Clone every :class:`StateData` value (other values are shared); the skip sets and flag
        are copied by reference, as upstream does."""
        c = CycleState()
        for k, v in self._storage.items():
            c._storage[k] = v.clone() if isinstance(v, StateData) else v
        c.record_plugin_metrics = self.record_plugin_metrics
        c.skip_filter_plugins = self.skip_filter_plugins
        c.skip_score_plugins = self.skip_score_plugins
        c.skip_pre_bind_plugins = self.skip_pre_bind_plugins
        return c
