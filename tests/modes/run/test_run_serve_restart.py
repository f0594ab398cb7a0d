"""``kubesched run`` against ``kubesched serve`` processes restarted on the same port within about a
second: from another snapshot (the new store's resourceVersions are a new epoch, every watch from
the old history gets 410, the informers re-list and reconcile: no ghost pods, the restored bound
pods counted) and from the server's own dump (new pods get UIDs no loaded object has). See
tests/run_support.py and tests/serve_support.py; every wait is bounded, every process killed."""

from __future__ import annotations

import json
import re
import time
import types
import urllib.request
from pathlib import Path
from typing import Any

from run_support import READER_TOKEN, SCHEDULER_NAME, Replica, needs_hooks, scheduler_config, wait_for
from serve_support import ServeProcess

from kubesched.embedded.apiserver import write_kubeconfig
from kubesched.embedded.manifests import write_manifests

NS = "it"
CPU_IN_USE = re.compile(r'^scheduler_scheduler_cache_size\{type="pods"\} (\S+)$', re.M)


def _node(name: str) -> dict[str, Any]:
    res = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"capacity": res, "allocatable": res, "conditions": [{"type": "Ready", "status": "True"}]},
    }


def _pod(name: str, cpu: str, node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": SCHEDULER_NAME,
        "terminationGracePeriodSeconds": 0,
        "containers": [
            {
                "name": "c",
                "image": "registry.k8s.io/pause:3.9",
                "resources": {"requests": {"cpu": cpu, "memory": "8Mi"}},
            }
        ],
    }
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS}, "spec": spec}


def _namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def _http(url: str, method: str = "GET", body: Any = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def _pods(serve: ServeProcess) -> dict[str, dict[str, Any]]:
    items = _http(f"{serve.url}/api/v1/namespaces/{NS}/pods")["items"]
    return {p["metadata"]["name"]: p for p in items}


def _create(serve: ServeProcess, pod: dict[str, Any]) -> None:
    _http(f"{serve.url}/api/v1/namespaces/{NS}/pods", "POST", pod)


def _wait_bound(serve: ServeProcess, name: str, timeout: float = 60) -> str:
    node: str = wait_for(
        lambda: (_pods(serve).get(name) or {}).get("spec", {}).get("nodeName"), timeout, f"pod {name} bound"
    )
    return node


def _cached_pods(replica: Replica) -> float:
    m = CPU_IN_USE.search(replica.get("/metrics")[1].decode())
    return float(m.group(1)) if m else -1.0


def _review_flags(tmp: Path) -> list[str]:
    """serve flags letting ``READER_TOKEN`` read the scheduler's endpoints (TokenReview + ABAC)."""
    tokens, policy = tmp / "tokens.csv", tmp / "policy.jsonl"
    tokens.write_text(f'{READER_TOKEN},it-reader,u1,"it-readers"\n')
    policy.write_text(
        json.dumps(
            {
                "apiVersion": "abac.authorization.kubernetes.io/v1beta1",
                "kind": "Policy",
                "spec": {"group": "it-readers", "nonResourcePath": "*", "readonly": True},
            }
        )
        + "\n"
    )
    return ["--token-auth-file", str(tokens), "--authorization-policy-file", str(policy)]


def _serve(tmp: Path, snapshot: Path, name: str, port: int | None = None) -> ServeProcess:
    return ServeProcess(tmp, "-f", str(snapshot), *_review_flags(tmp), port=port, name=name).wait_ready()


def _harness(tmp: Path, serve: ServeProcess) -> types.SimpleNamespace:
    kubeconfig = str(write_kubeconfig(tmp / "kubeconfig", serve.url))
    return types.SimpleNamespace(tmp=tmp, kubeconfig=kubeconfig, reader_token=READER_TOKEN)


def _restart(old: ServeProcess, tmp: Path, snapshot: Path) -> tuple[ServeProcess, float]:
    """Stop ``old`` and serve ``snapshot`` on its port; returns the new server and the seconds the
    port went unanswered."""
    start = time.monotonic()
    old.stop()
    new = _serve(tmp, snapshot, "second", port=old.port)
    return new, time.monotonic() - start


@needs_hooks
def test_restart_from_another_snapshot_within_a_second_reconciles_the_cache(tmp_path: Path) -> None:
    nodes = [_node("n1"), _node("n2")]
    first_snapshot = tmp_path / "first.yaml"
    write_manifests(first_snapshot, [_namespace(NS), *nodes, *(_pod(f"a-{i}", "1", "n1") for i in range(3))])
    # the second history: other bound pods (on n2), then enough objects that its resourceVersions
    # pass the ones the scheduler's watches saw on the first server
    second_snapshot = tmp_path / "second.yaml"
    write_manifests(
        second_snapshot,
        [
            _namespace(NS),
            *nodes,
            *(_pod(f"b-{i}", "1", "n2") for i in range(3)),
            *(_namespace(f"pad-{i}") for i in range(150)),
        ],
    )
    first = _serve(tmp_path, first_snapshot, "first")
    second: ServeProcess | None = None
    replica: Replica | None = None
    try:
        harness = _harness(tmp_path, first)
        replica = Replica(harness, scheduler_config(tmp_path, NS), name="r")  # type: ignore[arg-type]
        replica.wait_ready(timeout=60)
        _create(first, _pod("warm", "10m"))
        assert _wait_bound(first, "warm") == "n2"  # n1 holds 3 of 4 CPUs
        assert _cached_pods(replica) == 4.0

        second, gap = _restart(first, tmp_path, second_snapshot)
        print(f"serve restarted from another snapshot in {gap:.2f} s")
        # n1 is empty now, n2 holds 3 CPUs: only n1 fits 2 CPUs, twice; then only n2 fits 1 CPU
        for name, cpu, expected in (("p1", "2", "n1"), ("p2", "2", "n1"), ("p3", "1", "n2")):
            _create(second, _pod(name, cpu))
            assert _wait_bound(second, name, 90) == expected, replica.log()
        assert _cached_pods(replica) == 6.0  # b-0..2 and p1..p3, no ghost of the first server
        _create(second, _pod("p4", "100m"))

        def failed() -> list[str]:
            events = _http(f"{second.url}/apis/events.k8s.io/v1/namespaces/{NS}/events")["items"]  # type: ignore[union-attr]
            return [
                e["note"]
                for e in events
                if e.get("reason") == "FailedScheduling" and e["regarding"]["name"] == "p4"
            ]

        notes = wait_for(failed, 60, "p4 reported unschedulable")
        assert notes[0].startswith("0/2 nodes are available: 2 Insufficient cpu."), notes
        used: dict[str, int] = {}
        for p in _pods(second).values():
            if p["spec"].get("nodeName"):
                cpu = p["spec"]["containers"][0]["resources"]["requests"]["cpu"]
                used[p["spec"]["nodeName"]] = used.get(p["spec"]["nodeName"], 0) + (
                    int(cpu[:-1]) if cpu.endswith("m") else int(cpu) * 1000
                )
        assert used == {"n1": 4000, "n2": 4000}
        assert replica.get("/readyz", 2)[:2] == (200, b"ok")
        log = replica.log()
        assert "re-listing" in log and "Traceback" not in log, log
        assert replica.terminate(60) == 0
    finally:
        if replica is not None:
            replica.stop()
        if second is not None:
            second.stop()
        first.stop()


@needs_hooks
def test_restart_from_its_own_dump_hands_out_no_loaded_uid(tmp_path: Path) -> None:
    snapshot = tmp_path / "first.yaml"
    write_manifests(snapshot, [_namespace(NS), _node("n1"), *(_pod(f"a-{i}", "100m") for i in range(5))])
    first = _serve(tmp_path, snapshot, "first")
    second: ServeProcess | None = None
    replica: Replica | None = None
    try:
        harness = _harness(tmp_path, first)
        replica = Replica(harness, scheduler_config(tmp_path, NS), name="r")  # type: ignore[arg-type]
        replica.wait_ready(timeout=60)
        for i in range(5):
            _wait_bound(first, f"a-{i}")
        dump = tmp_path / "dump.json"
        objects = [
            dict(o, kind=kind)
            for kind, path in (
                ("Namespace", "/api/v1/namespaces"),
                ("Node", "/api/v1/nodes"),
                ("Pod", "/api/v1/pods"),
            )
            for o in _http(first.url + path)["items"]
        ]
        write_manifests(dump, objects)
        loaded_uids = {o["metadata"]["uid"] for o in objects}
        second, gap = _restart(first, tmp_path, dump)
        print(f"serve restarted from its own dump in {gap:.2f} s")
        for i in range(5):
            _create(second, _pod(f"new-{i}", "100m"))
        for i in range(5):
            assert _wait_bound(second, f"new-{i}", 60) == "n1", replica.log()
        new_uids = {p["metadata"]["uid"] for n, p in _pods(second).items() if n.startswith("new-")}
        assert len(new_uids) == 5 and not new_uids & loaded_uids
        log = replica.log()
        assert "can't be assumed" not in log and "Traceback" not in log, log
    finally:
        if replica is not None:
            replica.stop()
        if second is not None:
            second.stop()
        first.stop()
