"""Server-side Table output (``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``), as
kube-apiserver's printers fill it, and the answer to a truncated protobuf request body. The kubectl
tests are skipped when kubectl is absent."""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.clock import VirtualClock
from kubesched.embedded.apiserver import ServerHandle, start_server, write_kubeconfig
from kubesched.embedded.apiserver.tables import human_duration, table_version, to_table
from kubesched.embedded.store import MemoryCluster

KUBECTL = shutil.which("kubectl")
T0 = 1_700_000_000.0
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"


def test_human_duration_matches_apimachinery() -> None:
    cases = {
        -5: "<invalid>",
        -1: "0s",
        0: "0s",
        119: "119s",
        120: "2m",
        200: "3m20s",
        600: "10m",
        10799: "179m",
        10800: "3h",
        3 * 3600 + 60: "3h1m",
        8 * 3600: "8h",
        47 * 3600: "47h",
        50 * 3600: "2d2h",
        8 * 86400: "8d",
        800 * 86400: "2y70d",
        9 * 365 * 86400: "9y",
    }
    assert {s: human_duration(s) for s in cases} == cases


def test_table_version_from_accept() -> None:
    assert table_version(TABLE) == "v1"
    assert table_version("application/json;as=Table;v=v1beta1;g=meta.k8s.io") == "v1beta1"
    assert table_version("application/json") is None
    assert table_version("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io") is None


def _pod(**over: Any) -> dict[str, Any]:
    pod: dict[str, Any] = {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": "web", "namespace": "shop", "creationTimestamp": "2023-11-14T22:13:20Z"},
        "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
        "status": {"phase": "Pending"},
    }
    for k, v in over.items():
        pod[k] = {**pod[k], **v}
    return pod


def test_pod_rows_follow_print_pod() -> None:
    now = T0 + 200
    running = _pod(
        spec={"nodeName": "n1", "readinessGates": [{"conditionType": "x"}]},
        status={
            "phase": "Running",
            "podIPs": [{"ip": "10.0.0.7"}],
            "nominatedNodeName": "",
            "conditions": [{"type": "x", "status": "True"}],
            "containerStatuses": [
                {
                    "name": "a",
                    "ready": True,
                    "restartCount": 2,
                    "state": {"running": {}},
                    "lastState": {"terminated": {"finishedAt": "2023-11-14T22:14:00Z"}},
                },
                {
                    "name": "b",
                    "ready": False,
                    "restartCount": 0,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                },
            ],
        },
    )
    gated = _pod(
        status={
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}],
            "nominatedNodeName": "n2",
        }
    )
    deleting = _pod(metadata={"deletionTimestamp": "2023-11-14T22:20:00Z"}, spec={"nodeName": "n1"})
    table = to_table("Pod", [running, gated, deleting], {"resourceVersion": "12"}, now)
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert table["metadata"] == {"resourceVersion": "12"}
    assert [(c["name"], c["priority"]) for c in table["columnDefinitions"]] == [
        ("Name", 0),
        ("Ready", 0),
        ("Status", 0),
        ("Restarts", 0),
        ("Age", 0),
        ("IP", 1),
        ("Node", 1),
        ("Nominated Node", 1),
        ("Readiness Gates", 1),
    ]
    assert [r["cells"] for r in table["rows"]] == [
        ["web", "1/2", "CrashLoopBackOff", "2 (2m40s ago)", "3m20s", "10.0.0.7", "n1", "<none>", "1/1"],
        ["web", "0/2", "SchedulingGated", "0", "3m20s", "<none>", "<none>", "n2", "<none>"],
        ["web", "0/2", "Terminating", "0", "3m20s", "<none>", "n1", "<none>", "<none>"],
    ]
    assert table["rows"][0]["object"] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": running["metadata"],
    }
    assert "object" not in to_table("Pod", [running], {}, now, include_object="None")["rows"][0]
    with pytest.raises(ValueError, match="includeObject"):
        to_table("Pod", [running], {}, now, include_object="All")


def test_node_event_and_default_rows() -> None:
    now = T0 + 3 * 86400
    node = {
        "kind": "Node",
        "metadata": {
            "name": "n1",
            "creationTimestamp": "2023-11-14T22:13:20Z",
            "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "gpu"},
        },
        "spec": {"unschedulable": True},
        "status": {
            "conditions": [{"type": "Ready", "status": "False"}],
            "addresses": [{"type": "InternalIP", "address": "10.1.0.1"}],
            "nodeInfo": {"kubeletVersion": "v1.34.0", "osImage": "Ubuntu"},
        },
    }
    assert to_table("Node", [node], {}, now)["rows"][0]["cells"] == [
        "n1",
        "NotReady,SchedulingDisabled",
        "control-plane,gpu",
        "3d",
        "v1.34.0",
        "10.1.0.1",
        "<none>",
        "Ubuntu",
        "<unknown>",
        "<unknown>",
    ]
    event = {
        "kind": "Event",
        "apiVersion": "events.k8s.io/v1",
        "metadata": {"name": "web.1", "namespace": "shop"},
        "eventTime": "2023-11-17T22:12:20.000000Z",
        "reason": "Scheduled",
        "type": "Normal",
        "note": "Successfully assigned shop/web to n1",
        "regarding": {"kind": "Pod", "name": "web", "namespace": "shop"},
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-h",
    }
    assert to_table("Event", [event], {}, now)["rows"][0]["cells"] == [
        "60s",
        "Normal",
        "Scheduled",
        "pod/web",
        "",
        "default-scheduler, default-scheduler-h",
        "Successfully assigned shop/web to n1",
        "60s",
        1,
        "web.1",
    ]
    sc = {"kind": "StorageClass", "metadata": {"name": "fast", "creationTimestamp": "2023-11-14T22:13:20Z"}}
    table = to_table("StorageClass", [sc], {}, now)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]
    assert table["rows"][0]["cells"] == ["fast", "3d"]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[ServerHandle, Path, VirtualClock]]:
    clock = VirtualClock(T0)
    handle = start_server(MemoryCluster(clock), clock=clock, bookmark_interval=0.2)
    try:
        yield handle, write_kubeconfig(tmp_path / "kubeconfig", handle.url), clock
    finally:
        handle.stop()


def _get(url: str, accept: str) -> tuple[int, Any]:
    req = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_server_answers_tables_for_lists_and_objects(served: tuple[ServerHandle, Path, VirtualClock]) -> None:
    server, _, clock = served
    server.cluster.create({"kind": "Node", "metadata": {"name": "n1"}})
    server.cluster.create(
        {
            "kind": "Pod",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        }
    )
    server.cluster.bind("default", "web", "", "n1")
    clock.advance_to(T0 + 65)
    code, table = _get(server.url + "/api/v1/namespaces/default/pods?limit=500", TABLE)
    assert code == 200 and table["kind"] == "Table"
    assert table["metadata"] == {"resourceVersion": server.cluster.resource_version}
    assert [r["cells"] for r in table["rows"]] == [
        ["web", "0/1", "Pending", "0", "65s", "<none>", "n1", "<none>", "<none>"]
    ]
    code, one = _get(server.url + "/api/v1/nodes/n1", TABLE)
    assert code == 200 and one["rows"][0]["cells"][:4] == ["n1", "Unknown", "<none>", "65s"]
    code, plain = _get(server.url + "/api/v1/nodes/n1", "application/json")
    assert code == 200 and plain["kind"] == "Node"
    code, status = _get(server.url + "/api/v1/pods?includeObject=Everything", TABLE)
    assert code == 400 and "includeObject" in status["message"]


def test_truncated_protobuf_body_gets_400_with_a_clear_message(
    served: tuple[ServerHandle, Path, VirtualClock],
) -> None:
    server, _, _ = served
    req = urllib.request.Request(
        server.url + "/api/v1/namespaces",
        data=b"k8s\x00\n\x0f\n\x02v1",
        method="POST",
        headers={"Content-Type": "application/vnd.kubernetes.protobuf"},
    )
    with pytest.raises(urllib.error.HTTPError) as ei:
        urllib.request.urlopen(req, timeout=10)
    status = json.loads(ei.value.read())
    assert ei.value.code == 400 and status["message"] == (
        "the body of the request could not be decoded: truncated length-delimited field"
    )


def _kubectl(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    return subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_kubectl_get_wide_shows_the_node(served: tuple[ServerHandle, Path, VirtualClock]) -> None:
    server, kc, clock = served
    server.cluster.create(
        {
            "kind": "Node",
            "metadata": {"name": "n1"},
            "status": {
                "conditions": [{"type": "Ready", "status": "True"}],
                "nodeInfo": {"kubeletVersion": "v1.34.0"},
            },
        }
    )
    for name in ("web", "queued"):
        server.cluster.create(
            {
                "kind": "Pod",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            }
        )
    server.cluster.bind("default", "web", "", "n1")
    clock.advance_to(T0 + 30)
    out = _kubectl(kc, "get", "pods", "-o", "wide")
    assert out.returncode == 0, out.stderr
    assert [line.split() for line in out.stdout.splitlines()] == [
        [
            "NAME",
            "READY",
            "STATUS",
            "RESTARTS",
            "AGE",
            "IP",
            "NODE",
            "NOMINATED",
            "NODE",
            "READINESS",
            "GATES",
        ],
        ["queued", "0/1", "Pending", "0", "30s", "<none>", "<none>", "<none>", "<none>"],
        ["web", "0/1", "Pending", "0", "30s", "<none>", "n1", "<none>", "<none>"],
    ]
    out = _kubectl(kc, "get", "nodes")
    assert [line.split() for line in out.stdout.splitlines()] == [
        ["NAME", "STATUS", "ROLES", "AGE", "VERSION"],
        ["n1", "Ready", "<none>", "30s", "v1.34.0"],
    ]
    out = _kubectl(kc, "get", "pods", "-A", "--sort-by=.metadata.name", "-o", "wide")
    assert out.returncode == 0, out.stderr
    assert [line.split()[:2] + line.split()[7:8] for line in out.stdout.splitlines()[1:]] == [
        ["default", "queued", "<none>"],
        ["default", "web", "n1"],
    ]


def test_a_malformed_object_gets_a_row_of_its_own_and_never_fails_the_list() -> None:
    ok, bad = _pod(), _pod(metadata={"name": "p5"})
    bad["spec"] = {"containers": 5}
    table = to_table("Pod", [ok, bad], {"resourceVersion": "7"}, T0 + 200)
    cells = [r["cells"] for r in table["rows"]]
    assert cells[0][:3] == ["web", "0/2", "Pending"]
    assert cells[1] == ["p5"] + ["<unknown>"] * (len(table["columnDefinitions"]) - 1)


def _dra_objects() -> list[dict[str, Any]]:
    claim_spec = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}
    return [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}},
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {"spec": claim_spec},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "n1-gpu"},
            "spec": {
                "driver": "gpu.example.com",
                "nodeName": "n1",
                "pool": {"name": "n1", "generation": 0, "resourceSliceCount": 1},
                "devices": [{"name": "gpu-0"}],
            },
        },
        *(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": "default", "finalizers": ["example.com/keep"]},
                "spec": claim_spec,
            }
            for name in ("allocated", "deleted", "pending", "reserved")
        ),
    ]


def _allocate(cluster: MemoryCluster, name: str, reserved: bool) -> None:
    status: dict[str, Any] = {
        "allocation": {
            "devices": {
                "results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]
            }
        }
    }
    if reserved:
        status["reservedFor"] = [{"resource": "pods", "name": "p", "uid": "u1"}]
    cluster.patch_status("ResourceClaim", "default", name, status)


def test_dra_rows_follow_the_resource_printers(served: tuple[ServerHandle, Path, VirtualClock]) -> None:
    server, _, clock = served
    for obj in _dra_objects():
        server.cluster.create(obj)
    _allocate(server.cluster, "allocated", reserved=False)
    _allocate(server.cluster, "reserved", reserved=True)
    _allocate(server.cluster, "deleted", reserved=True)
    server.cluster.delete("ResourceClaim", "default", "deleted")
    clock.advance_to(T0 + 65)
    base = server.url + "/apis/resource.k8s.io/v1"
    code, claims = _get(base + "/namespaces/default/resourceclaims", TABLE)
    assert code == 200
    assert [c["name"] for c in claims["columnDefinitions"]] == ["Name", "State", "Age"]
    assert [r["cells"] for r in claims["rows"]] == [
        ["allocated", "allocated", "65s"],
        ["deleted", "deleted,allocated,reserved", "65s"],
        ["pending", "pending", "65s"],
        ["reserved", "allocated,reserved", "65s"],
    ]
    code, slices = _get(base + "/resourceslices", TABLE)
    assert [c["name"] for c in slices["columnDefinitions"]] == ["Name", "Node", "Driver", "Pool", "Age"]
    assert [r["cells"] for r in slices["rows"]] == [["n1-gpu", "n1", "gpu.example.com", "n1", "65s"]]
    code, classes = _get(base + "/deviceclasses", TABLE)
    assert [r["cells"] for r in classes["rows"]] == [["gpu", "65s"]]
    code, templates = _get(base + "/namespaces/default/resourceclaimtemplates", TABLE)
    assert [r["cells"] for r in templates["rows"]] == [["one-gpu", "65s"]]


def test_resource_claim_state_without_deletion_or_allocation() -> None:
    table = to_table(
        "ResourceClaim",
        [
            {"metadata": {"name": "a", "deletionTimestamp": "2023-11-14T22:13:20Z"}},
            {"metadata": {"name": "b"}, "status": {"allocation": {"devices": {}}, "reservedFor": []}},
        ],
        {},
        T0,
    )
    assert [r["cells"][:2] for r in table["rows"]] == [["a", "deleted"], ["b", "allocated"]]


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_kubectl_get_resourceclaims_shows_the_state(served: tuple[ServerHandle, Path, VirtualClock]) -> None:
    server, kc, clock = served
    for obj in _dra_objects():
        server.cluster.create(obj)
    _allocate(server.cluster, "allocated", reserved=False)
    _allocate(server.cluster, "reserved", reserved=True)
    server.cluster.delete("ResourceClaim", "default", "deleted")
    clock.advance_to(T0 + 30)
    out = _kubectl(kc, "get", "resourceclaims")
    assert out.returncode == 0, out.stderr
    assert [line.split() for line in out.stdout.splitlines()] == [
        ["NAME", "STATE", "AGE"],
        ["allocated", "allocated", "30s"],
        ["deleted", "deleted", "30s"],
        ["pending", "pending", "30s"],
        ["reserved", "allocated,reserved", "30s"],
    ]
    out = _kubectl(kc, "get", "resourceslices")
    assert out.returncode == 0, out.stderr
    assert [line.split() for line in out.stdout.splitlines()] == [
        ["NAME", "NODE", "DRIVER", "POOL", "AGE"],
        ["n1-gpu", "n1", "gpu.example.com", "n1", "30s"],
    ]
    out = _kubectl(kc, "get", "deviceclasses,resourceclaimtemplates")
    assert out.returncode == 0, out.stderr
    assert [line.split() for line in out.stdout.splitlines() if line] == [
        ["NAME", "AGE"],
        ["deviceclass.resource.k8s.io/gpu", "30s"],
        ["NAME", "AGE"],
        ["resourceclaimtemplate.resource.k8s.io/one-gpu", "30s"],
    ]
