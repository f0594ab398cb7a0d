"""``CycleState.clone`` (``pkg/scheduler/framework/cycle_state.go`` ``Clone``): every
:class:`StateData` value is cloned, :class:`ReadOnlyStateData` is shared as its ``clone`` says,
any other value is shared; the skip sets and the metrics flag are copied by reference."""

from __future__ import annotations

import pytest

from kubesched.framework import CycleState, ReadOnlyStateData, StateData, StateNotFoundError


class _Counter(StateData):
    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n

    def clone(self) -> _Counter:
        return _Counter(self.n)


class _Frozen(ReadOnlyStateData):
    __slots__ = ("names",)

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names


class _NotStateData:
    """Has a ``clone`` method but is no StateData: shared, not cloned."""

    def clone(self) -> _NotStateData:
        raise AssertionError("clone of a non-StateData value")


def test_clone_copies_state_data_and_shares_the_rest() -> None:
    s = CycleState()
    counter, frozen, plain, other = _Counter(1), _Frozen(("a",)), {"k": 1}, _NotStateData()
    s.write("counter", counter)
    s.write("frozen", frozen)
    s.write("plain", plain)
    s.write("other", other)
    s.record_plugin_metrics = True
    s.skip_filter_plugins.add("NodePorts")

    c = s.clone()
    assert c.read("counter") is not counter and c.read("counter").n == 1
    c.read("counter").n = 2
    assert counter.n == 1
    assert c.read("frozen") is frozen
    assert c.read("plain") is plain
    assert c.read("other") is other
    assert c.record_plugin_metrics is True
    assert c.skip_filter_plugins is s.skip_filter_plugins


def test_state_data_is_abstract_and_missing_keys_raise() -> None:
    with pytest.raises(TypeError):
        StateData()  # type: ignore[abstract]
    with pytest.raises(StateNotFoundError, match="not found"):
        CycleState().read("PreFilterNodePorts")
    assert CycleState().get("PreFilterNodePorts", 7) == 7
