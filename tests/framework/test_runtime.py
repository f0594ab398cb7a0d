"""The framework runtime on its own (``pkg/scheduler/framework/runtime/framework.go``): how
PreFilter results and statuses merge and read, the Permit timeout cap, the Bind skip chain and
PreBindPreFlight, with scripted plugins whose answers each test sets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pytest
from framework_support import Binder, Sort
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.clock import VirtualClock
from kubesched.config.types import KubeSchedulerProfile, Plugin, Plugins, PluginSet
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    BindPlugin,
    PermitPlugin,
    PreBindPlugin,
    PreFilterPlugin,
    ScorePlugin,
)
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.options import FrameworkOptions
from kubesched.framework.registry import Registry
from kubesched.framework.results import PreFilterResult
from kubesched.framework.runtime import MAX_PERMIT_TIMEOUT, Framework, _out_of_score_range
from kubesched.framework.status import Code, Status
from kubesched.testing import make_node, make_pod

POD = make_pod("p")


class _Scripted:
    """Answers set per test: ``ANSWERS[name]`` is returned (or raised) by the plugin's method."""

    ANSWERS: ClassVar[dict[str, Any]] = {}
    CALLS: ClassVar[list[str]] = []

    def answer(self) -> Any:
        type(self).CALLS.append(self.NAME)  # type: ignore[attr-defined]
        a = type(self).ANSWERS[self.NAME]  # type: ignore[attr-defined]
        if isinstance(a, BaseException):
            raise a
        return a


def _pre_filter(name: str) -> type:
    class P(_Scripted, PreFilterPlugin):
        NAME = name

        def pre_filter(self, state: CycleState, pod: Any, nodes: Sequence[Any]) -> Any:
            return self.answer()

    return P


def _permit(name: str) -> type:
    class P(_Scripted, PermitPlugin):
        NAME = name

        def permit(self, state: CycleState, pod: Any, node_name: str) -> Any:
            return self.answer()

    return P


def _bind(name: str) -> type:
    class P(_Scripted, BindPlugin):
        NAME = name

        def bind(self, state: CycleState, pod: Any, node_name: str) -> Any:
            return self.answer()

    return P


def _pre_bind(name: str, flight: Any) -> type:
    class P(_Scripted, PreBindPlugin):
        NAME = name

        def pre_bind_pre_flight(self, state: CycleState, pod: Any, node_name: str) -> Any:
            return flight

        def pre_bind(self, state: CycleState, pod: Any, node_name: str) -> Any:
            return self.answer()

    return P


def framework(point: str, classes: list[type], **kw: Any) -> Framework:
    registry = Registry(
        {}, {"Sort": Sort, "Binder": Binder, **{c.NAME: c for c in classes}}, load_entry_points=False
    )
    sets = {
        "queue_sort": PluginSet(enabled=[Plugin(name="Sort")]),
        "bind": PluginSet(enabled=[Plugin(name="Binder")]),
    }
    sets[point] = PluginSet(
        enabled=[Plugin(name=c.NAME) for c in classes] or ([Plugin(name="Binder")] if point == "bind" else [])
    )
    plugins = Plugins(**sets)
    _Scripted.ANSWERS = {}
    _Scripted.CALLS = []
    return Framework(
        KubeSchedulerProfile(scheduler_name="default-scheduler", plugins=plugins),
        registry,
        FrameworkOptions(**kw),
    )


# ---- PreFilter ------------------------------------------------------------------------------------


def test_prefilter_node_sets_intersect() -> None:
    fwk = framework("pre_filter", [_pre_filter("A"), _pre_filter("B"), _pre_filter("C")])
    _Scripted.ANSWERS.update(
        A=(PreFilterResult({"n1", "n2", "n3"}), None),
        B=(None, None),
        C=(PreFilterResult({"n2", "n3", "n4"}), None),
    )
    result, status, plugins = fwk.run_pre_filter_plugins(CycleState(), POD, [])
    assert status is None and result is not None and result.node_names == {"n2", "n3"}
    assert plugins == {"A", "C"}


@pytest.mark.parametrize(
    ("sets", "message"),
    [
        ([{"n1"}, set()], "node(s) didn't satisfy plugin(s) [A B] simultaneously"),
        ([set(), {"n1"}], "node(s) didn't satisfy plugin A"),
    ],
)
def test_prefilter_empty_intersection_messages(sets: list[set[str]], message: str) -> None:
    fwk = framework("pre_filter", [_pre_filter("A"), _pre_filter("B")])
    _Scripted.ANSWERS.update(A=(PreFilterResult(sets[0]), None), B=(PreFilterResult(sets[1]), None))
    result, status, plugins = fwk.run_pre_filter_plugins(CycleState(), POD, [])
    assert result is None and status is not None
    assert (status.code, status.message()) == (Code.UnschedulableAndUnresolvable, message)
    assert plugins == ({"A", "B"} if len(sets[0]) else {"A"})
    assert _Scripted.CALLS == (["A", "B"] if len(sets[0]) else ["A"])  # an empty set stops the point


def test_prefilter_unresolvable_stops_unschedulable_continues() -> None:
    fwk = framework("pre_filter", [_pre_filter("A"), _pre_filter("B"), _pre_filter("C")])
    _Scripted.ANSWERS.update(
        A=(None, Status(Code.Unschedulable, "a says no")),
        B=(None, Status(Code.Skip)),
        C=(PreFilterResult({"n9"}), None),
    )
    state = CycleState()
    result, status, plugins = fwk.run_pre_filter_plugins(state, POD, [])
    assert status is not None and (status.code, status.message(), status.plugin) == (
        Code.Unschedulable,
        "a says no",
        "A",
    )
    assert result is not None and result.node_names == {"n9"} and plugins == {"A", "C"}
    assert state.skip_filter_plugins == {"B"}
    fwk = framework("pre_filter", [_pre_filter("A"), _pre_filter("B")])
    _Scripted.ANSWERS.update(A=(None, Status(Code.UnschedulableAndUnresolvable, "never")), B=(None, None))
    _, status, plugins = fwk.run_pre_filter_plugins(CycleState(), POD, [])
    assert (
        status is not None and status.message() == "never" and plugins == {"A"} and _Scripted.CALLS == ["A"]
    )


def test_prefilter_error_and_crash_name_the_plugin() -> None:
    fwk = framework("pre_filter", [_pre_filter("A")])
    _Scripted.ANSWERS.update(A=(None, Status(Code.Error, "disk on fire")))
    _, status, plugins = fwk.run_pre_filter_plugins(CycleState(), POD, [])
    assert status is not None and (status.code, status.message()) == (
        Code.Error,
        'running PreFilter plugin "A": disk on fire',
    )
    assert plugins == set()
    _Scripted.ANSWERS.update(A=KeyError("boom"))
    _, status, _ = fwk.run_pre_filter_plugins(CycleState(), POD, [])
    assert (
        status is not None
        and status.code == Code.Error
        and status.message().startswith('running PreFilter plugin "A": ')
    )


# ---- Permit ---------------------------------------------------------------------------------------


def test_permit_wait_timeouts_are_capped() -> None:
    clock = VirtualClock(0.0)
    fwk = framework("permit", [_permit("A"), _permit("B")], clock=clock)
    _Scripted.ANSWERS.update(A=(Status(Code.Wait), 3600.0), B=(Status(Code.Wait), 5.0))
    s = fwk.run_permit_plugins(CycleState(), POD, "n1")
    assert s is not None and s.code == Code.Wait
    assert s.message() == 'one or more plugins asked to wait and no plugin rejected pod "p"'
    waiting = fwk.get_waiting_pod(POD.uid)
    assert waiting is not None and sorted(waiting.get_pending_plugins()) == ["A", "B"]
    clock.advance_to(5.0)  # B's 5 s run out first: the pod is rejected by B
    s = waiting.wait(0)
    assert s is not None and (s.code, s.message()) == (
        Code.Unschedulable,
        "rejected due to timeout after waiting 5s at plugin B",
    )
    clock = VirtualClock(0.0)
    fwk = framework("permit", [_permit("A")], clock=clock, permit_wait_timeout=30.0)
    _Scripted.ANSWERS.update(A=(Status(Code.Wait), 3600.0))
    fwk.run_permit_plugins(CycleState(), POD, "n1")
    waiting = fwk.get_waiting_pod(POD.uid)
    assert waiting is not None
    clock.advance_to(29.5)
    assert waiting.get_pending_plugins() == ["A"]
    clock.advance_to(30.0)  # --permit-wait-timeout caps the plugin's hour
    s = waiting.wait(0)
    assert s is not None and s.message() == "rejected due to timeout after waiting 30s at plugin A"
    clock = VirtualClock(0.0)
    fwk = framework("permit", [_permit("A")], clock=clock)
    _Scripted.ANSWERS.update(A=(Status(Code.Wait), 3600.0))
    fwk.run_permit_plugins(CycleState(), POD, "n1")
    waiting = fwk.get_waiting_pod(POD.uid)
    clock.advance_to(899.0)
    assert waiting is not None and waiting.get_pending_plugins() == ["A"]
    clock.advance_to(900.0)  # upstream's 15-minute maximum
    assert waiting.wait(0).message() == "rejected due to timeout after waiting 15m0s at plugin A"  # type: ignore[union-attr]
    assert MAX_PERMIT_TIMEOUT == 900.0


def test_permit_reject_wins_and_error_names_plugin() -> None:
    fwk = framework("permit", [_permit("A"), _permit("B")], clock=VirtualClock(0.0))
    _Scripted.ANSWERS.update(A=(Status(Code.Wait), 10.0), B=(Status(Code.Unschedulable, "quota"), 0.0))
    s = fwk.run_permit_plugins(CycleState(), POD, "n1")
    assert s is not None and (s.code, s.message(), s.plugin) == (Code.Unschedulable, "quota", "B")
    assert fwk.get_waiting_pod(POD.uid) is None
    _Scripted.ANSWERS.update(A=(Status(Code.Error, "x"), 0.0))
    s = fwk.run_permit_plugins(CycleState(), POD, "n1")
    assert s is not None and (s.code, s.message()) == (Code.Error, 'running Permit plugin "A": x')


# ---- Bind chain and PreBindPreFlight ----------------------------------------------------------------


def test_bind_skip_chain() -> None:
    fwk = framework("bind", [_bind("A"), _bind("B"), _bind("C")])
    _Scripted.ANSWERS.update(A=Status(Code.Skip), B=None, C=None)
    assert fwk.run_bind_plugins(CycleState(), POD, "n1") is None
    assert _Scripted.CALLS == ["A", "B"]  # the first binder that does not skip decides
    _Scripted.CALLS.clear()
    _Scripted.ANSWERS.update(A=Status(Code.Skip), B=Status(Code.Skip), C=Status(Code.Skip))
    s = fwk.run_bind_plugins(CycleState(), POD, "n1")
    assert s is not None and s.code == Code.Skip and _Scripted.CALLS == ["A", "B", "C"]
    _Scripted.ANSWERS.update(A=Status(Code.Error, "conflict"))
    s = fwk.run_bind_plugins(CycleState(), POD, "n1")
    assert s is not None and s.code == Code.Error and "conflict" in s.message()


def test_pre_bind_pre_flight_skip_and_error() -> None:
    assert framework("pre_bind", []).run_pre_bind_pre_flights(CycleState(), POD, "n1").code == Code.Skip  # type: ignore[union-attr]
    fwk = framework("pre_bind", [_pre_bind("A", Status(Code.Skip)), _pre_bind("B", None)])
    _Scripted.ANSWERS.update(A=None, B=Status(Code.Unschedulable, "volume gone"))
    state = CycleState()
    assert fwk.run_pre_bind_pre_flights(state, POD, "n1") is None
    assert state.skip_pre_bind_plugins == {"A"}
    s = fwk.run_pre_bind_plugins(state, POD, "n1")
    assert _Scripted.CALLS == ["B"]  # A skipped at PreBind too
    assert s is not None and s.code == Code.Unschedulable and "volume gone" in s.message()
    fwk = framework("pre_bind", [_pre_bind("A", Status(Code.Skip)), _pre_bind("B", Status(Code.Skip))])
    assert fwk.run_pre_bind_pre_flights(CycleState(), POD, "n1").code == Code.Skip  # type: ignore[union-attr]
    fwk = framework("pre_bind", [_pre_bind("A", Status(Code.Error, "x"))])
    s = fwk.run_pre_bind_pre_flights(CycleState(), POD, "n1")
    assert s is not None and (s.code, s.message()) == (Code.Error, 'running PreBindPreFlight "A": x')


# ---- Score (batch forms) --------------------------------------------------------------------------


def _batch_score(name: str) -> type:
    class P(_Scripted, ScorePlugin):
        NAME = name

        def score(self, state: CycleState, pod: Any, node_info: Any) -> Any:
            return 0, Status(Code.Error, "the batch form answers")

        def score_batch(self, state: CycleState, pod: Any, table: Any, rows: Any) -> Any:
            return self.answer()

    return P


def _score_framework(weights: dict[str, int]) -> Framework:
    classes = [_batch_score(name) for name in weights]
    registry = Registry(
        {}, {"Sort": Sort, "Binder": Binder, **{c.NAME: c for c in classes}}, load_entry_points=False
    )
    plugins = Plugins(
        queue_sort=PluginSet(enabled=[Plugin(name="Sort")]),
        bind=PluginSet(enabled=[Plugin(name="Binder")]),
        score=PluginSet(enabled=[Plugin(name=n, weight=w) for n, w in weights.items()]),
    )
    _Scripted.ANSWERS = {}
    _Scripted.CALLS = []
    return Framework(
        KubeSchedulerProfile(scheduler_name="default-scheduler", plugins=plugins),
        registry,
        FrameworkOptions(),
    )


def test_score_batch_totals_weigh_each_plugin_and_leave_its_array_alone() -> None:
    fwk = _score_framework({"A": 3, "B": 1, "C": 2})
    a = np.array([1, 50, 100], dtype=np.int64)
    fwk_answers = {
        "A": a,
        "B": np.array([0, 7, 100], dtype=np.int64),
        "C": np.array([5, 0, 1], dtype=np.int32),
    }
    _Scripted.ANSWERS.update(fwk_answers)
    total, status = fwk.run_score_plugins_batch(CycleState(), POD, None, np.arange(3), [])
    assert status is None and total is not None
    assert total.dtype == np.int64 and total.tolist() == [13, 157, 402]
    assert a.tolist() == [1, 50, 100]  # a batch form may hand over a column it keeps


@pytest.mark.parametrize(
    ("a", "b", "bad"),
    [
        ([1, 101, 5], [0, 0, 0], ("A", 101)),
        ([0, 100, 100], [0, -1, 200], ("B", -1)),
        ([0, -(2**63), 2**63 - 1], [0, 0, 0], ("A", -(2**63))),
        ([0, 0, 0], [2**63 - 1, 0, 0], ("B", 2**63 - 1)),
    ],
)
def test_score_batch_rejects_a_score_outside_the_range(
    a: list[int], b: list[int], bad: tuple[str, int]
) -> None:
    fwk = _score_framework({"A": 1, "B": 2})
    _Scripted.ANSWERS.update(A=np.array(a, dtype=np.int64), B=np.array(b, dtype=np.int64))
    total, status = fwk.run_score_plugins_batch(CycleState(), POD, None, np.arange(3), [])
    assert total is None and status is not None
    assert (status.code, status.plugin, status.message()) == (
        Code.Error,
        bad[0],
        f'applying score defaultWeights on Score plugins: plugin "{bad[0]}" returns an invalid score '
        f"{bad[1]}, it should in the range of [0, 100] after normalizing",
    )


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(-5, 105), st.integers(-(2**63), 2**63 - 1), st.sampled_from([-(2**63), 2**63 - 1])
        ),
        max_size=20,
    ),
    st.sampled_from([np.int64, np.int32, np.float64]),
)
def test_score_range_check_matches_the_two_comparisons(values: list[int], dtype: Any) -> None:
    if dtype is np.int32:
        values = [max(-(2**31), min(2**31 - 1, v)) for v in values]
    arr = np.array(values, dtype=dtype)
    assert _out_of_score_range(arr) == bool(((arr > 100) | (arr < 0)).any())


@pytest.mark.parametrize("recorded", [False, True])
@pytest.mark.parametrize(
    ("a", "want"),
    [
        (
            [1, 101, 5],
            'applying score defaultWeights on Score plugins: plugin "A" returns an invalid score 101',
        ),
        ([1, 100, 5], 'running Score plugins: plugin "B" failed with: the batch form answers'),
    ],
)
def test_score_batch_errors_come_in_plugin_order(a: list[int], want: str, recorded: bool) -> None:
    """A's range error (found after the loop when nothing is recorded) still comes before a later
    plugin's Score error, as the plugin-by-plugin checks return it; with a recorder as well."""
    from kubesched.framework.recorder import CycleRecorder

    fwk = _score_framework({"A": 1, "B": 1})
    _Scripted.ANSWERS.update(A=np.array(a, dtype=np.int64), B=None)  # B: no batch answer, per node
    state = CycleState()
    if recorded:
        state.recorder = CycleRecorder()
    nodes = [NodeInfo(make_node(f"n{i}")) for i in range(3)]
    total, status = fwk.run_score_plugins_batch(state, POD, None, np.arange(3), nodes)
    assert total is None and status is not None
    assert status.message().startswith(want)
