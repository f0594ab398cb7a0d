"""End-to-end tests of ``kubesched simulate``: the JSON contract, exact placements and messages,
reproducibility, snapshots and every bad-input path."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = str(ROOT / "examples" / "cluster.yaml")
FIX = ROOT / "tests" / "fixtures" / "simulate"
SCHEMA = json.loads((ROOT / "kubesched" / "schemas" / "simulation-result.schema.json").read_text())


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def simulate_json(*args: str, exit_code: int = 0) -> dict:
    code, out, err = run("simulate", *args, "-o", "json", "--detail", "full")
    assert code == exit_code, err
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    return doc


def by_name(doc: dict) -> dict[str, dict]:
    return {f"{p['namespace']}/{p['name']}": p for p in doc["pods"]}


def test_example_snapshot_exact_outcome() -> None:
    doc = simulate_json("-f", EXAMPLE, "--seed", "7")
    assert doc["apiVersion"] == "kubesched.io/v1alpha1" and doc["kind"] == "SimulationResult"
    assert doc["profile"] == "default-scheduler" and doc["seed"] == 7
    pods = by_name(doc)
    assert {k: (p["status"], p["node"]) for k, p in pods.items()} == {
        "shop/web-1": ("Scheduled", "node-a1"),
        "shop/web-2": ("Scheduled", "node-a1"),
        "ml/trainer-0": ("Scheduled", "gpu-b3"),
        "shop/batch-big": ("Unschedulable", None),
        "shop/gated-1": ("Gated", None),
        "shop/other-scheduler": ("Ignored", None),
    }
    # batch-big asks 6 cpu: node-a1/a2 have 4 (unresolvable), node-b1 has 8-3=5 free (resolvable,
    # but its only pod has a higher priority), the GPU nodes are tainted.
    assert pods["shop/batch-big"]["message"] == (
        "0/5 nodes are available: 2 node(s) had untolerated taint(s), 3 Insufficient cpu. "
        "no new claims to deallocate, preemption: 0/5 nodes are available: "
        "1 No preemption victims found for incoming pod, 4 Preemption is not helpful for scheduling."
    )
    assert pods["shop/gated-1"]["message"] == "waiting for scheduling gates: [example.com/quota]"
    assert pods["shop/other-scheduler"]["message"] == 'no profile for schedulerName "my-scheduler"'


def test_example_web1_scores_are_upstream_integers() -> None:
    doc = simulate_json("-f", EXAMPLE, "--seed", "7")
    res = by_name(doc)["shop/web-1"]["results"]
    assert len(res) == 1
    r = res[0]
    assert r["selectedNode"] == "node-a1"
    # node-a1: 4 cpu / 16Gi, empty. LeastAllocated: cpu (4000-500)*100//4000 = 87,
    # memory (16Gi-512Mi)*100//16Gi = 96 -> (87+96)//2 = 91.
    # BalancedAllocation: |0.125 - 0.03125|/2 = 0.046875 -> int((1-0.046875)*100) = 95.
    assert r["score"]["node-a1"]["NodeResourcesFit"] == 91
    assert r["score"]["node-a1"]["NodeResourcesBalancedAllocation"] == 95
    # node-b1: 8 cpu / 32Gi with db-0 (3 cpu, 8Gi): cpu (8000-3500)*100//8000 = 56,
    # memory (32Gi-8.5Gi)*100//32Gi = 73 -> (56+73)//2 = 64.
    assert r["score"]["node-b1"]["NodeResourcesFit"] == 64
    # TaintToleration: no PreferNoSchedule taints -> every node normalizes to 100, weight 3.
    assert r["normalizedScore"]["node-b1"]["TaintToleration"] == 100
    assert r["finalScore"]["node-b1"]["TaintToleration"] == 300
    # tainted GPU nodes were rejected by TaintToleration and never reached NodeResourcesFit
    assert r["filter"]["gpu-b2"] == {
        "NodeUnschedulable": {"code": "Success", "reasons": []},
        "NodeName": {"code": "Success", "reasons": []},
        "TaintToleration": {
            "code": "UnschedulableAndUnresolvable",
            "reasons": ["node(s) had untolerated taint(s)"],
        },
    }
    assert "gpu-b2" not in r["score"]


def test_single_feasible_node_skips_scoring() -> None:
    doc = simulate_json("-f", EXAMPLE, "--seed", "7")
    r = by_name(doc)["ml/trainer-0"]["results"][0]
    # only the two GPU nodes tolerate... and have GPUs; both feasible -> scored
    assert set(r["score"]) == {"gpu-b2", "gpu-b3"}
    single = FIX / "one_node.yaml"
    doc2 = simulate_json("-f", str(single))
    r2 = doc2["pods"][0]["results"][0]
    assert r2["selectedNode"] == "n1" and r2["score"] == {} and r2["preScore"] == {}


def test_same_seed_same_bytes() -> None:
    a = run("simulate", "-f", EXAMPLE, "--seed", "3", "-o", "json")
    b = run("simulate", "-f", EXAMPLE, "--seed", "3", "-o", "json")
    assert a[0] == b[0] == 0 and a[1] == b[1]


def test_config_changes_strategy() -> None:
    doc = simulate_json("-f", EXAMPLE, "--seed", "7", "--config", str(FIX / "most_allocated.yaml"))
    pods = by_name(doc)
    # MostAllocated packs: web-1 onto node-a2 (3 of 4 cpu used), web-2 (needs ssd) onto node-b1.
    assert pods["shop/web-1"]["node"] == "node-a2"
    assert pods["shop/web-2"]["node"] == "node-b1"
    scored = pods["shop/web-1"]["results"][0]["score"]["node-a2"]
    assert "NodeResourcesBalancedAllocation" not in scored and "ImageLocality" not in scored


def test_invalid_pod_is_reported_and_others_scheduled() -> None:
    doc = simulate_json("-f", str(FIX / "bad_quantity.yaml"), exit_code=1)
    pods = by_name(doc)
    assert pods["default/ok-1"]["status"] == "Scheduled"
    assert pods["default/ok-2"]["status"] == "Scheduled"
    bad = pods["default/web-1"]
    assert bad["status"] == "Error" and bad["node"] is None
    assert bad["message"].endswith(
        "bad_quantity.yaml doc 3 (Pod default/web-1): spec.containers[0].resources.requests.cpu: "
        'invalid quantity "1.5.0"'
    )


def test_malformed_node_fails_with_one_line() -> None:
    code, out, err = run("simulate", "-f", str(FIX / "bad_node.yaml"))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].endswith('bad_node.yaml doc 1 (Node n1): status.allocatable.cpu: invalid quantity "four"')
    assert "Traceback" not in out + err


def test_bad_config_names_the_field_path() -> None:
    code, _, err = run("simulate", "-f", EXAMPLE, "--config", str(FIX / "bad_config.yaml"))
    assert code == 2
    assert err.strip().endswith(
        'bad_config.yaml: profiles[0].pluginConfig[1].args.scoringStrategy.type: Unsupported value: "Balanced": '
        'supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
    )


def test_write_snapshot_chains(tmp_path: Path) -> None:
    snap = tmp_path / "out.yaml"
    code, _, err = run("simulate", "-f", EXAMPLE, "--seed", "7", "--write-snapshot", str(snap), "-o", "json")
    assert code == 0, err
    objs = list(yaml.safe_load_all(snap.read_text()))
    pods = {
        f"{o['metadata']['namespace']}/{o['metadata']['name']}": o
        for o in objs
        if o and o.get("kind") == "Pod"
    }
    assert pods["shop/web-1"]["spec"]["nodeName"] == "node-a1"
    cond = {c["type"]: c for c in pods["shop/web-1"]["status"]["conditions"]}
    assert cond["PodScheduled"]["status"] == "True"
    cond = {c["type"]: c for c in pods["shop/batch-big"]["status"]["conditions"]}
    assert cond["PodScheduled"]["status"] == "False" and cond["PodScheduled"]["reason"] == "Unschedulable"
    assert cond["PodScheduled"]["message"].startswith(
        "0/5 nodes are available: 2 node(s) had untolerated taint(s)"
    )
    # chained run: bound pods are cluster state, only the still-pending ones are scheduled again
    doc = simulate_json("-f", str(snap), "--seed", "7")
    assert {p["name"]: p["status"] for p in doc["pods"]} == {
        "batch-big": "Unschedulable",
        "gated-1": "Gated",
        "other-scheduler": "Ignored",
    }


def test_kubectl_list_format_and_skipped_kinds(tmp_path: Path) -> None:
    objs = [o for o in yaml.safe_load_all(Path(EXAMPLE).read_text()) if o]
    nodes = {"apiVersion": "v1", "kind": "List", "items": [o for o in objs if o["kind"] == "Node"]}
    pods = {
        "apiVersion": "v1",
        "kind": "PodList",
        "items": [{k: v for k, v in o.items() if k != "kind"} for o in objs if o["kind"] == "Pod"],
    }
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "nodes.json").write_text(json.dumps(nodes))
    (tmp_path / "a" / "pods.yaml").write_text(yaml.safe_dump(pods))
    (tmp_path / "a" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    code, out, err = run("simulate", "-f", str(tmp_path / "a"), "--seed", "7", "-o", "json")
    assert code == 0, err
    assert "warning: skipped 1 object(s) of unsupported kind ConfigMap" in err
    assert by_name(json.loads(out))["shop/web-1"]["node"] == "node-a1"


def test_table_and_explain() -> None:
    code, out, err = run("simulate", "-f", EXAMPLE, "--seed", "7", "--explain", "shop/web-1")
    assert code == 0, err
    assert "shop/batch-big" in out and "<pending>" in out
    assert "6 pods: 3 scheduled, 1 unschedulable, 1 gated, 1 ignored" in out
    assert "Score (raw / normalized / weighted)" in out
    assert "91 / 91 / 91" in out


def test_explain_unknown_pod_is_a_usage_error() -> None:
    code, _, err = run("simulate", "-f", EXAMPLE, "--explain", "nope")
    assert code == 2 and "pod 'nope' not found" in err


@pytest.mark.parametrize("missing", ["does-not-exist.yaml"])
def test_missing_file(missing: str) -> None:
    code, _, err = run("simulate", "-f", missing)
    assert code == 2 and "does-not-exist.yaml" in err


def _write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


NODE = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
"""


def test_priority_class_admission_enables_preemption(tmp_path: Path) -> None:
    f = _write(
        tmp_path,
        "pc.yaml",
        NODE
        + """---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 100000
---
apiVersion: v1
kind: Pod
metadata: {name: filler, namespace: default}
spec:
  nodeName: n1
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: vip, namespace: default}
spec:
  priorityClassName: high
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: typo, namespace: default}
spec:
  priorityClassName: hihg
  containers: [{name: c, image: busybox}]
""",
    )
    doc = simulate_json("-f", f, "--seed", "1", exit_code=1)
    pods = by_name(doc)
    assert pods["default/vip"]["status"] == "Scheduled" and pods["default/vip"]["node"] == "n1"
    assert pods["default/vip"]["results"][0]["postFilter"]["DefaultPreemption"]["victims"] == [
        "default/filler"
    ]
    assert pods["default/filler"]["status"] == "Preempted"
    # the report names the preemptor as users do (the Event itself names its UID, as upstream's)
    assert pods["default/filler"]["message"] == "Preempted by pod default/vip on node n1"
    assert pods["default/typo"]["status"] == "Error"
    assert pods["default/typo"]["message"].endswith(
        "doc 5 (Pod default/typo): spec.priorityClassName: no PriorityClass with name hihg was found"
    )


def test_duplicate_objects_are_located(tmp_path: Path) -> None:
    f = _write(tmp_path, "dup.yaml", NODE + "---\n" + NODE)
    code, _, err = run("simulate", "-f", f)
    assert code == 2
    assert err.strip().endswith(
        "dup.yaml doc 2 (Node n1): metadata.name: duplicate of " + f + " doc 1 (Node n1)"
    )


def test_pending_pod_being_deleted_is_ignored(tmp_path: Path) -> None:
    f = _write(
        tmp_path,
        "del.yaml",
        NODE
        + """---
apiVersion: v1
kind: Pod
metadata: {name: going, namespace: default, deletionTimestamp: "2025-01-01T00:00:00Z"}
spec:
  containers: [{name: c, image: busybox}]
""",
    )
    pods = by_name(simulate_json("-f", f))
    assert (pods["default/going"]["status"], pods["default/going"]["message"]) == (
        "Ignored",
        "skip schedule deleting pod: default/going",
    )
    assert pods["default/going"]["results"] == []


def test_explain_pod_without_attempts() -> None:
    code, out, err = run("simulate", "-f", EXAMPLE, "--explain", "shop/gated-1")
    assert code == 0, err
    flat = " ".join(out.split())  # the console wraps at the terminal width
    assert (
        "shop/gated-1: no scheduling attempt (Gated: waiting for scheduling gates: [example.com/quota])"
        in flat
    )


def test_output_path_checked_before_running(tmp_path: Path) -> None:
    code, _, err = run("simulate", "-f", EXAMPLE, "--write-snapshot", str(tmp_path / "no" / "x.yaml"))
    assert (
        code == 2
        and err.strip()
        == f"error: --write-snapshot {tmp_path / 'no' / 'x.yaml'}: directory {tmp_path / 'no'} does not exist"
    )
    code, _, err = run("simulate", "-f", EXAMPLE, "--write-snapshot", str(tmp_path))
    assert code == 2 and err.strip() == f"error: --write-snapshot {tmp_path}: is a directory"


def test_per_pod_profile_with_two_profiles(tmp_path: Path) -> None:
    cfg = _write(
        tmp_path,
        "two.yaml",
        """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: my-scheduler
""",
    )
    doc = simulate_json("-f", EXAMPLE, "--seed", "7", "--config", cfg)
    assert doc["profile"] == "default-scheduler,my-scheduler"
    pods = by_name(doc)
    assert pods["shop/other-scheduler"]["profile"] == "my-scheduler"
    assert pods["shop/other-scheduler"]["status"] == "Scheduled"
    assert pods["shop/web-1"]["profile"] == "default-scheduler"


def test_trace_snapshot_errors(tmp_path: Path) -> None:
    code, _, err = run("trace", "snapshot", str(tmp_path), "--output", str(tmp_path / "x.yaml"))
    assert code == 2
    assert err.strip() == (
        f"error: {tmp_path / 'openb_node_list_all_node.csv'}: no such file (expected an openb trace csv)"
    )
    code, _, err = run(
        "trace", "snapshot", str(tmp_path), "--pods", "-1", "--output", str(tmp_path / "x.yaml")
    )
    assert code == 2 and "-1 is not in the range x>=0" in err


GOLDEN = ROOT / "tests" / "golden" / "example-cluster-seed7.json"
GOLDEN_COMPACT = ROOT / "tests" / "golden" / "example-cluster-seed7-compact.json"


@pytest.mark.parametrize(("detail", "golden"), [("full", GOLDEN), ("compact", GOLDEN_COMPACT)])
def test_golden_json_of_the_example(detail: str, golden: Path) -> None:
    """The whole JSON document for the shipped example, byte for byte. After an intended change of
    behaviour, regenerate with:
    ``kubesched simulate -f examples/cluster.yaml --seed 7 -o json --detail full > tests/golden/example-cluster-seed7.json``
    (and ``--detail compact > tests/golden/example-cluster-seed7-compact.json``) and review the diff."""
    code, out, err = run("simulate", "-f", EXAMPLE, "--seed", "7", "-o", "json", "--detail", detail)
    assert code == 0, err
    jsonschema.validate(json.loads(out), SCHEMA)
    assert out == golden.read_text()
