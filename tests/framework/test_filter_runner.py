"""``Framework.filter_runner`` and ``Framework.has_pre_filter_extensions``: the prepared Filter of
preemption's dry run gives exactly ``run_filter_plugins_with_nominated_pods``' verdicts (code,
reasons, plugin, wrapped error) and runs the same plugins in the same order, for every skip set,
scripted answer (including crashes) and nominated pods on the node."""

from __future__ import annotations

from typing import Any, ClassVar

from framework_support import Binder, Sort
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.pod import Pod
from kubesched.config.types import KubeSchedulerProfile, Plugin, Plugins, PluginSet
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import (
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
)
from kubesched.framework.node_info import NodeInfo, PodInfo
from kubesched.framework.options import FrameworkOptions
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Code, Status
from kubesched.testing import make_node, make_pod, node_info

FILTERS = ["F0", "F1", "F2", "F3"]

#: what a scripted Filter answers: a status, None (Success), an exception, or "count" (Unschedulable
#: when the node holds more than two pods, so that nominated pods change the verdict)
ANSWERS: list[Any] = [
    None,
    None,
    "count",
    Status(Code.Unschedulable, "u1", "u2"),
    Status(Code.UnschedulableAndUnresolvable, "x"),
    Status(Code.Error, "e"),
    Status(Code.Skip),
    RuntimeError("boom"),
]


class _Scripted(FilterPlugin):
    NAME = ""
    SCRIPT: ClassVar[dict[str, Any]] = {}
    CALLS: ClassVar[list[tuple[str, int]]] = []

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        type(self).CALLS.append((self.NAME, len(node_info.pods)))
        a = _Scripted.SCRIPT[self.NAME]
        if isinstance(a, BaseException):
            raise a
        if a == "count":
            return Status(Code.Unschedulable, "crowded") if len(node_info.pods) > 2 else None
        # a fresh status per call: the framework sets its plugin
        return None if a is None else Status(a.code, *a.reasons)


def _filter(name: str) -> type:
    return type(name, (_Scripted,), {"NAME": name})


class Ext(PreFilterPlugin, PreFilterExtensions):
    """A PreFilter plugin with AddPod/RemovePod extensions (counts the AddPod calls in the state)."""

    NAME = "Ext"

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Any) -> Any:
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        state.write("adds", (state.get("adds") or 0) + 1)
        return None

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return None


class NoExt(PreFilterPlugin):
    NAME = "NoExt"

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Any) -> Any:
        return None, None


class Nominator:
    def __init__(self, by_node: dict[str, list[Pod]]) -> None:
        self.by_node = by_node

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return [PodInfo(p) for p in self.by_node.get(node_name, [])]

    def nominated_node_names(self) -> list[str]:
        return [n for n, pods in self.by_node.items() if pods]


def framework(
    nominated: dict[str, list[Pod]] | None = None, pre_filters: tuple[type, ...] = (Ext,)
) -> Framework:
    classes = {c.NAME: c for c in (Sort, Binder, *pre_filters, *(_filter(n) for n in FILTERS))}
    plugins = Plugins(
        queue_sort=PluginSet(enabled=[Plugin(name="Sort")]),
        bind=PluginSet(enabled=[Plugin(name="Binder")]),
        pre_filter=PluginSet(enabled=[Plugin(name=c.NAME) for c in pre_filters]),
        filter=PluginSet(enabled=[Plugin(name=n) for n in FILTERS]),
    )
    return Framework(
        KubeSchedulerProfile(scheduler_name="default-scheduler", plugins=plugins),
        Registry({}, classes, load_entry_points=False),
        FrameworkOptions(nominator=Nominator(nominated or {})),
    )


def _view(s: Status | None) -> tuple[Any, ...] | None:
    if s is None:
        return None
    return (s.code, s.reasons, s.plugin, s.message(), type(s.err).__name__ if s.err else None)


@settings(max_examples=200, deadline=None)
@given(
    answers=st.lists(st.sampled_from(range(len(ANSWERS))), min_size=len(FILTERS), max_size=len(FILTERS)),
    skip=st.sets(st.sampled_from([*FILTERS, "Ext"])),
    on_node=st.integers(0, 3),
    nominated=st.lists(st.tuples(st.integers(0, 20), st.booleans()), max_size=3),
)
def test_filter_runner_equals_run_filter_plugins_with_nominated_pods(
    answers: list[int], skip: set[str], on_node: int, nominated: list[tuple[int, bool]]
) -> None:
    pod = make_pod("p", uid="u-p", priority=10)
    noms = [
        pod if self_ else make_pod(f"n{i}", uid=f"u-n{i}", priority=prio)
        for i, (prio, self_) in enumerate(nominated)
    ]
    fwk = framework({"n1": noms})
    ni = node_info(
        make_node("n1"), [make_pod(f"e{i}", uid=f"u-e{i}", node_name="n1") for i in range(on_node)]
    )
    _Scripted.SCRIPT = {n: ANSWERS[a] for n, a in zip(FILTERS, answers, strict=True)}
    state = CycleState()
    state.skip_filter_plugins = set(skip)

    _Scripted.CALLS = []
    want = fwk.run_filter_plugins_with_nominated_pods(state.clone(), pod, ni)
    want_calls = list(_Scripted.CALLS)
    _Scripted.CALLS = []
    run = fwk.filter_runner(state)
    got = run(state.clone(), pod, ni)
    assert _view(got) == _view(want)
    assert _Scripted.CALLS == want_calls
    assert len(ni.pods) == on_node  # the node itself is never changed


def test_filter_runner_nominated_pods_go_through_add_pod() -> None:
    hi = make_pod("hi", uid="u-hi", priority=20)
    fwk = framework({"n1": [hi]})
    _Scripted.SCRIPT = dict.fromkeys(FILTERS)
    _Scripted.CALLS = []
    state = CycleState()
    assert (
        fwk.filter_runner(state)(state, make_pod("p", uid="u-p", priority=10), node_info(make_node("n1")))
        is None
    )
    # every filter once with the nominated pod on a copy of the node, then once without it
    assert _Scripted.CALLS == [(n, 1) for n in FILTERS] + [(n, 0) for n in FILTERS]


def test_has_pre_filter_extensions() -> None:
    state = CycleState()
    assert framework().has_pre_filter_extensions(state) is True
    state.skip_filter_plugins = {"Ext"}
    assert framework().has_pre_filter_extensions(state) is False
    assert framework(pre_filters=(NoExt,)).has_pre_filter_extensions(CycleState()) is False
