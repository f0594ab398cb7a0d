"""NodeName (``pkg/scheduler/framework/plugins/nodename/node_name.go``)."""

from __future__ import annotations

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import NODE_ADD, QueueingHint
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code
from kubesched.plugins.nodename.node_name import NodeName
from kubesched.testing import make_node, make_pod, node_info


def test_identity() -> None:
    assert NodeName().name() == "NodeName"
    assert NodeName.Args is None


def test_no_node_name_fits_any() -> None:
    assert NodeName().filter(CycleState(), make_pod("p"), node_info(make_node("n1"))) is None


def test_matching_node_name() -> None:
    assert NodeName().filter(CycleState(), make_pod("p", node_name="n1"), node_info(make_node("n1"))) is None


def test_other_node_rejected() -> None:
    st = NodeName().filter(CycleState(), make_pod("p", node_name="n1"), node_info(make_node("n2")))
    assert st is not None
    assert st.code == Code.UnschedulableAndUnresolvable
    assert st.reasons == ["node(s) didn't match the requested node name"]


def test_nil_node_is_error() -> None:
    st = NodeName().filter(CycleState(), make_pod("p", node_name="n1"), NodeInfo())
    assert st is not None and st.code == Code.Error and st.message() == "node not found"


def test_events_and_hint() -> None:
    pl = NodeName()
    evs = pl.events_to_register()
    assert [e.event for e in evs] == [NODE_ADD]
    hint = evs[0].queueing_hint_fn
    assert hint is not None
    assert hint(make_pod("p", node_name="n1"), None, make_node("n1")) == QueueingHint.Queue
    assert hint(make_pod("p", node_name="n1"), None, make_node("n2")) == QueueingHint.QueueSkip
    assert hint(make_pod("p"), None, make_node("n2")) == QueueingHint.Queue
