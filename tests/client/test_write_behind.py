"""``WriteBehindClient``: Pod status patches and deletions are queued, other kinds' status patches
(DynamicResources' claim allocation in PreBind) are written before the call returns."""

from __future__ import annotations

import threading
from typing import Any

from kubesched.client.write_behind import AsyncWriter, WriteBehindClient
from kubesched.clock import VirtualClock
from kubesched.embedded.store import MemoryCluster


class Gated(MemoryCluster):
    """A store whose status patches wait for ``gate`` (a slow API server)."""

    def __init__(self) -> None:
        super().__init__(VirtualClock(0.0))
        self.gate = threading.Event()

    def patch_status(
        self, kind: str, namespace: str | None, name: str, patch: dict[str, Any]
    ) -> dict[str, Any]:
        if kind == "Pod":
            self.gate.wait(5)
        return super().patch_status(kind, namespace, name, patch)


def test_claim_status_is_written_before_return_and_pod_status_behind() -> None:
    store = Gated()
    store.create(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": {}}
    )
    store.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": "ns"},
            "spec": {},
        }
    )
    writer = AsyncWriter(workers=1)
    client = WriteBehindClient(store, writer)
    allocation = {
        "devices": {"results": [{"request": "gpu", "driver": "d", "pool": "n1", "device": "gpu-0"}]}
    }
    written = client.patch_status("ResourceClaim", "ns", "c", {"allocation": allocation})
    assert written["status"] == {"allocation": allocation}
    assert store.get("ResourceClaim", "ns", "c")["status"] == {"allocation": allocation}
    assert client.patch_status("Pod", "ns", "p", {"nominatedNodeName": "n1"}) == {}
    assert store.get("Pod", "ns", "p")["status"] == {"phase": "Pending"}  # still queued
    store.gate.set()
    assert writer.flush(5)
    assert store.get("Pod", "ns", "p")["status"] == {"phase": "Pending", "nominatedNodeName": "n1"}
    writer.stop()
