"""The Kind registry is the one table of per-kind facts: ``serve``'s discovery, ``snapshot``, the
manifest loader of ``simulate`` and the scheduler's informers agree with it, and a kind added by
one row (and a trivial model) is served, snapshotted, loaded and watched."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apiserver_support import api_client, server_fixture
from kubernetes import client as k8s

from kubesched.api import kinds
from kubesched.api.kinds import Kind
from kubesched.client.kube import KubeClusterClient
from kubesched.client.live_snapshot import read_snapshot, snapshot_kinds
from kubesched.clock import VirtualClock
from kubesched.embedded.apiserver import ServerHandle, write_kubeconfig
from kubesched.embedded.apiserver.paths import SERVED_SUBRESOURCES
from kubesched.embedded.manifests import load_manifest_text
from kubesched.embedded.store import MemoryCluster
from kubesched.modes.simulate.run import run_simulation
from kubesched.scheduler import new_scheduler

LOADED_IN_ORDER = (
    "Namespace",
    "Node",
    "PriorityClass",
    "StorageClass",
    "CSIDriver",
    "CSINode",
    "CSIStorageCapacity",
    "DeviceClass",
    "ResourceSlice",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "ResourceClaimTemplate",
    "ResourceClaim",
    "Service",
    "ReplicationController",
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "DaemonSet",
    "ControllerRevision",
    "Job",
    "PodDisruptionBudget",
    "Pod",
)
WATCHED_IN_ORDER = (
    "Namespace",
    "Node",
    "StorageClass",
    "CSIDriver",
    "CSINode",
    "CSIStorageCapacity",
    "DeviceClass",
    "ResourceSlice",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "ResourceClaim",
    "Service",
    "ReplicationController",
    "ReplicaSet",
    "StatefulSet",
    "PodDisruptionBudget",
    "Pod",
)


@dataclass(frozen=True)
class Widget:
    """A trivial typed model of the made-up kind."""

    name: str
    size: int

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> Widget:
        return cls(str(obj["metadata"]["name"]), int(obj["spec"]["size"]))


WIDGET = Kind(
    "example.kubesched.io",
    "v1",
    "Widget",
    "widgets",
    "widget",
    True,
    ("wd",),
    ("status",),
    parser=Widget.from_obj,
    loadable=True,
    watched=True,
)


def _widget(name: str, size: int = 3) -> dict[str, Any]:
    return {
        "apiVersion": "example.kubesched.io/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"size": size},
    }


server = server_fixture()


def _get(server: ServerHandle, path: str) -> Any:
    with urllib.request.urlopen(server.url + path, timeout=10) as resp:
        return json.loads(resp.read())


def _discovered(server: ServerHandle) -> dict[str, dict[str, Any]]:
    """``group/version/name`` -> APIResource of every resource and subresource discovery lists."""
    out: dict[str, dict[str, Any]] = {}
    assert _get(server, "/api")["versions"] == ["v1"]
    gvs = [("", "v1")] + [
        (g["name"], v["version"]) for g in _get(server, "/apis")["groups"] for v in g["versions"]
    ]
    for group, version in gvs:
        doc = _get(server, f"/apis/{group}/{version}" if group else f"/api/{version}")
        for r in doc["resources"]:
            out[f"{group}/{version}/{r['name']}"] = r
    return out


def _expected(rows: tuple[Kind, ...]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry: dict[str, Any] = {
            "name": row.plural,
            "singularName": row.singular,
            "namespaced": row.namespaced,
            "kind": row.kind,
        }
        if row.short_names:
            entry["shortNames"] = list(row.short_names)
        if row.categories:
            entry["categories"] = list(row.categories)
        out[f"{row.group}/{row.version}/{row.plural}"] = entry
        for sub in row.subresources:
            if sub in SERVED_SUBRESOURCES:
                body_kind, verbs = kinds.SUBRESOURCE_KINDS[sub]
                out[f"{row.group}/{row.version}/{row.plural}/{sub}"] = {
                    "name": f"{row.plural}/{sub}",
                    "namespaced": row.namespaced,
                    "kind": body_kind or row.kind,
                    "verbs": list(verbs),
                }
    return out


def _compare(found: dict[str, dict[str, Any]], rows: tuple[Kind, ...]) -> None:
    expected = _expected(rows)
    assert set(found) == set(expected)
    for key, want in expected.items():
        got = found[key]
        assert {f: got.get(f) for f in want} == want, key


def test_discovery_agrees_with_the_registry(server: ServerHandle) -> None:
    found = _discovered(server)
    _compare(found, kinds.served_kinds())
    assert {k for k in found if k.startswith("resource.k8s.io/v1/")} == {
        "resource.k8s.io/v1/deviceclasses",
        "resource.k8s.io/v1/resourceslices",
        "resource.k8s.io/v1/resourceclaimtemplates",
        "resource.k8s.io/v1/resourceclaims",
        "resource.k8s.io/v1/resourceclaims/status",
    }
    assert found["apps/v1/deployments"]["shortNames"] == ["deploy"]
    assert found["apps/v1/deployments/status"]["verbs"] == ["get", "patch", "update"]
    assert found["apps/v1/deployments/scale"] == {
        "name": "deployments/scale",
        "singularName": "",
        "namespaced": True,
        "group": "autoscaling",
        "version": "v1",
        "kind": "Scale",
        "verbs": ["get", "patch", "update"],
    }
    assert found["batch/v1/jobs/status"]["kind"] == "Job"
    assert found["resource.k8s.io/v1/deviceclasses"]["namespaced"] is False
    assert found["/v1/pods/binding"] == {
        "name": "pods/binding",
        "singularName": "",
        "namespaced": True,
        "kind": "Binding",
        "verbs": ["create"],
    }


def test_snapshot_loader_and_informers_agree_with_the_registry() -> None:
    assert snapshot_kinds() == LOADED_IN_ORDER
    assert kinds.loadable_kinds() == frozenset(LOADED_IN_ORDER)
    assert kinds.watched_kinds() == WATCHED_IN_ORDER
    # the loader: one document per registered kind; the loadable ones load, the others are counted
    docs = []
    for row in kinds.all_kinds():
        meta = {"name": "x"} if not row.namespaced else {"name": "x", "namespace": "default"}
        docs.append(json.dumps({"apiVersion": row.group_version, "kind": row.kind, "metadata": meta}))
    loaded = load_manifest_text("\n---\n".join(docs), "all.yaml")
    assert [m.kind for m in loaded.manifests] == [r.kind for r in kinds.all_kinds() if r.loadable]
    assert loaded.skipped_kinds == {
        "ConfigMap": 1,
        "Event": 2,
        "Lease": 1,
        "LimitRange": 1,
    }
    # the informers of a scheduler
    sched = new_scheduler(MemoryCluster(VirtualClock(0.0)), None, clock=VirtualClock(0.0))
    assert tuple(sched.informers.informers) == WATCHED_IN_ORDER


def test_typed_parsers_resolve() -> None:
    parsers = {row.kind: kinds.parser(row.kind) for row in kinds.all_kinds() if row.parser is not None}
    assert sorted(parsers) == [
        "DeviceClass",
        "Node",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "Pod",
        "ResourceClaim",
        "ResourceClaimTemplate",
        "ResourceSlice",
        "StorageClass",
    ]
    node = parsers["Node"]
    assert node is not None
    assert node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}).name == "n1"


def test_a_kind_added_by_one_row_is_served_snapshotted_loaded_and_watched(
    server: ServerHandle, tmp_path: Path
) -> None:
    assert kinds.lookup("Widget") is None
    with kinds.extra_kinds(WIDGET):
        # serve: discovery and the generic verbs, through the official client
        found = _discovered(server)
        _compare(found, kinds.served_kinds())
        assert found["example.kubesched.io/v1/widgets"]["shortNames"] == ["wd"]
        custom = k8s.CustomObjectsApi(api_client(server))
        custom.create_namespaced_custom_object(
            "example.kubesched.io", "v1", "default", "widgets", _widget("w1")
        )
        got = custom.get_namespaced_custom_object("example.kubesched.io", "v1", "default", "widgets", "w1")
        assert got["spec"] == {"size": 3} and got["metadata"]["resourceVersion"]
        # snapshot: through the API client, as `kubesched snapshot` reads a cluster
        client = KubeClusterClient.from_kubeconfig(
            str(write_kubeconfig(tmp_path / "kubeconfig", server.url)), qps=50, burst=100
        )
        try:
            objects = read_snapshot(client)
        finally:
            client.close()
        assert [(o["kind"], o["metadata"]["name"]) for o in objects if o["kind"] == "Widget"] == [
            ("Widget", "w1")
        ]
        assert "resourceVersion" not in objects[-1]["metadata"]
        # simulate: loaded from manifests into the embedded cluster
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}},
        }
        loaded = load_manifest_text("\n---\n".join(json.dumps(o) for o in (node, _widget("w2", 5))), "w.yaml")
        assert [m.where for m in loaded.manifests] == [
            "w.yaml doc 1 (Node n1)",
            "w.yaml doc 2 (Widget default/w2)",
        ]
        result = run_simulation(loaded.manifests, None)
        assert result.cluster.get("Widget", "default", "w2")["spec"] == {"size": 5}
        # the scheduler's informers watch it
        clock = VirtualClock(0.0)
        cluster = MemoryCluster(clock)
        cluster.create(_widget("w3", 7))
        sched = new_scheduler(cluster, None, clock=clock)
        sched.start()
        try:
            listed = sched.informers.informer("Widget").list("default")
        finally:
            sched.stop()
        parse = kinds.parser("Widget")
        assert parse is not None
        assert [parse(o) for o in listed] == [Widget("w3", 7)]
    assert kinds.lookup("Widget") is None
    assert kinds.find("example.kubesched.io", "v1", "widgets") is None
