"""DefaultBinder (``pkg/scheduler/framework/plugins/defaultbinder/default_binder.go``)."""

from __future__ import annotations

from typing import Any, cast

from kubesched.api.pod import Pod
from kubesched.errors import ConflictError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import BindPlugin
from kubesched.framework.status import Code
from kubesched.plugins.defaultbinder.default_binder import DefaultBinder
from kubesched.testing import FakeHandle, make_pod


class RecordingClient:
    def __init__(self, exc: Exception | None = None) -> None:
        self.calls: list[tuple[str, str, str, str]] = []
        self.exc = exc

    def bind(self, namespace: str, name: str, uid: str, node_name: str) -> None:
        self.calls.append((namespace, name, uid, node_name))
        if self.exc is not None:
            raise self.exc


def binder(client: Any) -> DefaultBinder:
    h = FakeHandle()
    h.client = client
    return DefaultBinder(None, cast(Any, h))


def test_identity() -> None:
    assert DefaultBinder().name() == "DefaultBinder"
    assert DefaultBinder.Args is None
    assert isinstance(DefaultBinder(), BindPlugin)


def test_bind_calls_client() -> None:
    c = RecordingClient()
    p = make_pod("web", "prod", uid="u-1")
    assert binder(c).bind(CycleState(), p, "n1") is None
    assert c.calls == [("prod", "web", "u-1", "n1")]


def test_bind_error_is_wrapped() -> None:
    err = ConflictError(
        'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "n0"'
    )
    s = binder(RecordingClient(err)).bind(CycleState(), make_pod("web"), "n1")
    assert s is not None
    assert s.code == Code.Error
    assert s.err is err
    assert s.message() == str(err)
    assert s.as_error() is err


def test_bind_with_memory_cluster() -> None:
    from kubesched.clock import VirtualClock
    from kubesched.embedded.store import MemoryCluster
    from kubesched.testing import pod_manifest

    mc = MemoryCluster(VirtualClock())
    pod = Pod.from_manifest(mc.create(pod_manifest("web")))
    assert binder(mc).bind(CycleState(), pod, "n1") is None
    obj = mc.get("Pod", "default", "web")
    assert obj is not None and obj["spec"]["nodeName"] == "n1"
    s = binder(mc).bind(CycleState(), pod, "n2")
    assert s is not None and s.code == Code.Error
    assert (
        s.message()
        == 'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "n1"'
    )


def test_no_client_is_error() -> None:
    s = DefaultBinder().bind(CycleState(), make_pod("web"), "n1")
    assert s is not None and s.code == Code.Error
