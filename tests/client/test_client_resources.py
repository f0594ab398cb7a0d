"""Resources by GroupVersionResource (custom resources) through the ``ClusterClient`` interface:
the embedded store and the API client (against ``kubesched serve``) answer alike, for a kind the
registry has (one row, served by both) and for one nobody serves (404)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.api import kinds
from kubesched.api.kinds import Kind
from kubesched.client.client import ClusterClient, GroupVersionResource
from kubesched.client.kube import KubeClusterClient
from kubesched.clock import VirtualClock
from kubesched.embedded.apiserver import start_server, write_kubeconfig
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import AlreadyExistsError, NotFoundError

JOB_ROW = Kind("apps.kruise.io", "v1alpha1", "ImagePullJob", "imagepulljobs", "imagepulljob", True)
JOBS = GroupVersionResource("apps.kruise.io", "v1alpha1", "imagepulljobs")
UNSERVED = GroupVersionResource("example.kubesched.io", "v1", "gadgets")


def _job(name: str, node: str, *, generate: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"namespace": "kruise", "labels": {"kubesched.io/prepull": "true", "node": node}}
    meta["generateName" if generate else "name"] = name
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "metadata": meta,
        "spec": {"image": "redis:7", "selector": {"names": [node]}},
    }


@pytest.fixture(params=["memory", "api"])
def client(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ClusterClient]:
    """Each backend with the ImagePullJob row registered (the embedded cluster serves registered kinds)."""
    with kinds.extra_kinds(JOB_ROW):
        if request.param == "memory":
            yield MemoryCluster(VirtualClock(0.0))
            return
        server = start_server()
        api = KubeClusterClient.from_kubeconfig(
            str(write_kubeconfig(tmp_path / "kubeconfig", server.url)), qps=0, burst=0
        )
        # OpenKruise's namespace, as a cluster running it has (the API server refuses objects in a
        # namespace that does not exist)
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kruise"}})
        try:
            yield api
        finally:
            api.close()
            server.stop()


def test_create_list_delete_by_group_version_resource(client: ClusterClient) -> None:
    assert client.serves_resource(JOBS) is True
    assert client.serves_resource(UNSERVED) is False
    created = client.create_resource(JOBS, _job("kubesched-prepull-", "n2", generate=True))
    generated = created["metadata"]["name"]
    assert generated.startswith("kubesched-prepull-") and len(generated) > len("kubesched-prepull-")
    assert created["metadata"]["namespace"] == "kruise" and created["metadata"]["resourceVersion"]
    client.create_resource(JOBS, _job("a-job", "n1"))
    with pytest.raises(AlreadyExistsError, match='imagepulljobs.apps.kruise.io "a-job" already exists'):
        client.create_resource(JOBS, _job("a-job", "n1"))
    listed = client.list_resource(JOBS, "kruise", "kubesched.io/prepull=true")
    assert [(o["metadata"]["name"], o["spec"]["selector"]["names"]) for o in listed] == [
        ("a-job", ["n1"]),
        (generated, ["n2"]),
    ]
    assert [o["metadata"]["name"] for o in client.list_resource(JOBS, "kruise", {"node": "n2"})] == [
        generated
    ]
    assert client.list_resource(JOBS, "elsewhere") == []
    client.delete_resource(JOBS, "kruise", "a-job")
    assert [o["metadata"]["name"] for o in client.list_resource(JOBS)] == [generated]
    with pytest.raises(NotFoundError, match='imagepulljobs.apps.kruise.io "a-job" not found'):
        client.delete_resource(JOBS, "kruise", "a-job")


def test_a_resource_nobody_serves_is_not_found(client: ClusterClient) -> None:
    with pytest.raises(NotFoundError):
        client.list_resource(UNSERVED, "default")
    with pytest.raises(NotFoundError):
        client.create_resource(
            UNSERVED,
            {
                "apiVersion": "example.kubesched.io/v1",
                "kind": "Gadget",
                "metadata": {"name": "g", "namespace": "default"},
            },
        )
    with pytest.raises(NotFoundError):
        client.delete_resource(UNSERVED, "default", "g")


def test_the_memory_store_serves_exactly_the_registered_kinds() -> None:
    store = MemoryCluster(VirtualClock(0.0))
    assert store.serves_resource(JOBS) is False
    with pytest.raises(
        NotFoundError,
        match=r"^the server could not find the requested resource "
        r"\(imagepulljobs.apps.kruise.io/v1alpha1\)$",
    ):
        store.list_resource(JOBS, "kruise")
    assert store.serves_resource(GroupVersionResource("", "v1", "pods")) is True
    store.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "d"},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        }
    )
    assert [
        o["metadata"]["name"] for o in store.list_resource(GroupVersionResource("", "v1", "pods"), "d")
    ] == ["p"]
