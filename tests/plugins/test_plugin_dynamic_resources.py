"""DynamicResources: upstream messages for pods without claims; pods with claims are rejected
because kubesched does not implement DRA."""

from __future__ import annotations

import pytest

from kubesched.config.args import decode_args
from kubesched.errors import ConfigError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import NodeToStatus
from kubesched.framework.status import Code, Status
from kubesched.plugins.dynamicresources.dynamic_resources import (
    ERR_REASON_NOT_SUPPORTED,
    DynamicResources,
    DynamicResourcesArgs,
)
from kubesched.testing import FakeHandle, make_node, make_pod, node_info

CLAIMS = {"resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"}]}


def test_pod_without_claims() -> None:
    pl = DynamicResources(None, FakeHandle())
    pod = make_pod("web")
    state = CycleState()
    assert pl.pre_enqueue(pod) is None
    assert pl.pre_filter(state, pod, []) == (None, Status(Code.Skip))
    assert pl.filter(state, pod, node_info(make_node("n1"))) is None
    res, st = pl.post_filter(state, pod, NodeToStatus())
    assert res is None
    assert st == Status(Code.Unschedulable, "no new claims to deallocate")
    assert pl.reserve(state, pod, "n1") is None
    assert pl.pre_bind_pre_flight(state, pod, "n1") == Status(Code.Skip)


def test_pod_with_claims_is_rejected_with_clear_message() -> None:
    pl = DynamicResources(None, FakeHandle())
    pod = make_pod("web", spec=CLAIMS)
    state = CycleState()
    assert pl.pre_enqueue(pod) is None
    res, st = pl.pre_filter(state, pod, [])
    assert res is None
    assert st == Status(Code.UnschedulableAndUnresolvable,
                        "pod references ResourceClaims (spec.resourceClaims), but dynamic resource allocation "
                        "is not supported by kubesched yet")
    assert st.message() == ERR_REASON_NOT_SUPPORTED
    assert pl.post_filter(state, pod, NodeToStatus())[1] == Status(Code.Unschedulable, "still not schedulable")


def test_post_filter_without_pre_filter_state_is_error_not_found() -> None:
    pl = DynamicResources(None, FakeHandle())
    _, st = pl.post_filter(CycleState(), make_pod("web"), NodeToStatus())
    assert st is not None and st.code == Code.Error and st.message() == "not found"


def test_args() -> None:
    assert decode_args(DynamicResourcesArgs, None, "args").filter_timeout == 10.0
    assert decode_args(DynamicResourcesArgs, {"filterTimeout": "1m"}, "args").filter_timeout == 60.0
    assert decode_args(DynamicResourcesArgs, {"filterTimeout": "0s"}, "args").filter_timeout == 0.0
    with pytest.raises(ConfigError, match="must be zero or positive"):
        decode_args(DynamicResourcesArgs, {"filterTimeout": "-1s"}, "args")
    with pytest.raises(ConfigError):
        decode_args(DynamicResourcesArgs, {"bogus": 1}, "args")
