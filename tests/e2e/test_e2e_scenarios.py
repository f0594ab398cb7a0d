"""End-to-end scenarios: whole manifests through ``kubesched simulate`` (CLI) or ``run_simulation``
with the default profile, checking the exact chosen nodes, scores and pending messages.

Every expected value is worked out by hand from ../shared/spec/upstream-semantics.md (kube-scheduler
v1.35); the arithmetic is in the comments. Shared facts used below:

* Default profile weights: TaintToleration 3, NodeAffinity 2, NodeResourcesFit 1,
  PodTopologySpread 2, InterPodAffinity 2, NodeResourcesBalancedAllocation 1, ImageLocality 1.
* No node has a PreferNoSchedule taint, so TaintToleration scores 0 everywhere and its reverse
  normalisation gives 100 -> 300 weighted on every feasible node
  (``pkg/scheduler/framework/plugins/helper/normalize_score.go``).
* Images are never present on nodes: ImageLocality = 0
  (``pkg/scheduler/framework/plugins/imagelocality/image_locality.go``).
* NodeResourcesFit LeastAllocated: per resource ``(alloc-req)*100//alloc``, mean of cpu and memory
  with ``//`` (``pkg/scheduler/framework/plugins/noderesources/fit.go``). BalancedAllocation:
  ``int((1 - |f_cpu - f_mem|/2) * 100)``
  (``pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go``).
* FitError message format and the DynamicResources PostFilter tail ``no new claims to deallocate,``
  before ``preemption: ...`` come from ``pkg/scheduler/schedule_one.go`` ``handleSchedulingFailure`` and
  ``FitError.Error``; preemption messages from
  ``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.embedded.manifests import Manifest, load_manifests
from kubesched.modes.simulate.run import PodOutcome, SimulationResult, run_simulation

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "e2e"

#: tail every PostFilter message starts with when DynamicResources runs first
#: (``pkg/scheduler/schedule_one.go`` ``handleSchedulingFailure`` and ``FitError.Error``)
DRA = "no new claims to deallocate, preemption: "


def _runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click 8.1
    except TypeError:
        return CliRunner()  # click >= 8.2 keeps stderr apart


def cli_json(path: Path, *extra: str, seed: int = 1) -> tuple[dict[str, Any], str]:
    """Run ``kubesched simulate -f path -o json --detail full --seed N``; returns (document, stderr)."""
    res = _runner().invoke(
        main, ["simulate", "-f", str(path), "-o", "json", "--detail", "full", "--seed", str(seed), *extra]
    )
    assert res.exit_code == 0, (res.output, res.stderr, res.exception)
    return json.loads(res.stdout), res.stderr


def by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in doc["pods"]}


def fixture_docs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((FIXTURES / name).read_text()) if d]


def write_docs(tmp_path: Path, name: str, docs: list[dict[str, Any]]) -> Path:
    out = tmp_path / name
    out.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return out


def simulate_docs(docs: list[dict[str, Any]], seed: int = 1) -> SimulationResult:
    return run_simulation([Manifest(d, "e2e.yaml", i + 1) for i, d in enumerate(docs)], None, seed=seed)


def outcomes(res: SimulationResult) -> dict[str, PodOutcome]:
    return {p.name: p for p in res.pods}


def find(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name)


# ---- 1. zone spread with a tainted node: nodeTaintsPolicy Honor vs Ignore ----------------------


def test_spread_tainted_zone_honor_excludes_the_tainted_domain() -> None:
    # Honor: c1's taint dedicated=infra:NoSchedule is not tolerated, so zone c is not a domain.
    # tp_count = {a: 1 (web-a), b: 1 (web-b)}, min_match = 1.
    # a1: skew = 1 + 1 - 1 = 1 <= 1 ok; b1: 1 + 1 - 1 = 1 ok; c1 fails TaintToleration.
    # Scores (web-new 1 cpu / 1Gi; nodes 4 cpu / 8Gi):
    #   a1: fit cpu (4000-3000)*100//4000 = 25, mem (8-2)*100//8 = 75 -> (25+75)//2 = 50;
    #       balanced |0.75-0.25|/2 = 0.25 -> 75.  total 300 + 50 + 75 + 0 = 425
    #   b1: fit cpu (4000-2000)*100//4000 = 50, mem 75 -> 125//2 = 62;
    #       balanced |0.5-0.25|/2 = 0.125 -> 87.  total 300 + 62 + 87 + 0 = 449  -> b1
    # PodTopologySpread has no soft constraint (PreScore Skip), InterPodAffinity nothing (Skip),
    # DynamicResources no claims (Skip).
    doc, stderr = cli_json(FIXTURES / "spread_tainted_zone.yaml")
    assert stderr == ""
    pod = by_name(doc)["web-new"]
    assert (pod["status"], pod["node"], pod["message"]) == ("Scheduled", "b1", "")
    rec = pod["results"][-1]
    assert rec["finalScore"] == {
        "a1": {
            "TaintToleration": 300,
            "NodeResourcesFit": 50,
            "NodeResourcesBalancedAllocation": 75,
            "ImageLocality": 0,
        },
        "b1": {
            "TaintToleration": 300,
            "NodeResourcesFit": 62,
            "NodeResourcesBalancedAllocation": 87,
            "ImageLocality": 0,
        },
    }
    assert rec["filter"]["c1"]["TaintToleration"] == {
        "code": "UnschedulableAndUnresolvable",
        "reasons": ["node(s) had untolerated taint(s)"],
    }


def test_spread_tainted_zone_ignore_counts_the_empty_tainted_zone(tmp_path: Path) -> None:
    # Ignore (the default): zone c counts as a domain with 0 pods -> min_match = 0.
    # a1: skew = 1 + 1 - 0 = 2 > 1 (Unschedulable); b1 likewise; c1: untolerated taint
    # (UnschedulableAndUnresolvable). Histogram sorted as strings:
    #   "1 node(s) had untolerated taint(s)" < "2 node(s) didn't match pod topology spread constraints"
    # Preemption: c1 is not a candidate (absent status "Preemption is not helpful"), a1/b1 host only
    # priority-0 pods, same as web-new -> "No preemption victims found for incoming pod".
    docs = fixture_docs("spread_tainted_zone.yaml")
    find(docs, "Pod", "web-new")["spec"]["topologySpreadConstraints"][0]["nodeTaintsPolicy"] = "Ignore"
    doc, _ = cli_json(write_docs(tmp_path, "ignore.yaml", docs))
    pod = by_name(doc)["web-new"]
    assert (pod["status"], pod["node"]) == ("Unschedulable", None)
    assert pod["message"] == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), "
        "2 node(s) didn't match pod topology spread constraints. "
        + DRA
        + "0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
        "2 No preemption victims found for incoming pod."
    )
    post = pod["results"][-1]["postFilter"]
    assert post["DynamicResources"] == {
        "code": "Unschedulable",
        "reasons": ["no new claims to deallocate"],
        "nominatedNode": None,
        "victims": [],
    }
    assert post["DefaultPreemption"]["nominatedNode"] is None


# ---- 2. zone spread with a cordoned node -------------------------------------------------------

CORDONED_IGNORE_MSG = (
    # a1/b1: skew 1 + 1 - 0 = 2 > 1; c1: NodeUnschedulable runs first in Filter order.
    "0/3 nodes are available: 1 node(s) were unschedulable, "
    "2 node(s) didn't match pod topology spread constraints. "
    + DRA
    + "0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
    "2 No preemption victims found for incoming pod."
)


@pytest.mark.parametrize(
    ("policy", "keep_taint", "expected"),
    [
        # Honor + the node.kubernetes.io/unschedulable taint: zone c is dropped, min_match = 1,
        # both a1 and b1 allow the pod (skew 1) and b1 wins 449 to 425 exactly as in scenario 1.
        ("Honor", True, ("Scheduled", "b1", "")),
        # Ignore: zone c (0 pods) is a domain, min_match = 0 -> pending.
        ("Ignore", True, ("Unschedulable", None, CORDONED_IGNORE_MSG)),
        # Honor looks at spec.taints only (not spec.unschedulable): a cordoned node without the taint
        # still counts as a 0-pod domain -> pending with the same message.
        ("Honor", False, ("Unschedulable", None, CORDONED_IGNORE_MSG)),
    ],
)
def test_spread_cordoned_node(
    tmp_path: Path, policy: str, keep_taint: bool, expected: tuple[str, str | None, str]
) -> None:
    docs = fixture_docs("spread_cordoned.yaml")
    find(docs, "Pod", "web-new")["spec"]["topologySpreadConstraints"][0]["nodeTaintsPolicy"] = policy
    if not keep_taint:
        del find(docs, "Node", "c1")["spec"]["taints"]
    doc, _ = cli_json(write_docs(tmp_path, "cordoned.yaml", docs))
    pod = by_name(doc)["web-new"]
    assert (pod["status"], pod["node"], pod["message"]) == expected
    assert pod["results"][0]["filter"]["c1"]["NodeUnschedulable"] == {
        "code": "UnschedulableAndUnresolvable",
        "reasons": ["node(s) were unschedulable"],
    }


# ---- 3. minDomains above the number of domains -------------------------------------------------


def test_spread_min_domains_above_domain_count() -> None:
    # 2 zones < minDomains 3 -> min_match is always 0.
    # web-0: counts {a: 0, b: 0}; skew 0 + 1 - 0 = 1 on both. Scores (1 cpu / 1Gi):
    #   a1 (4/8Gi):  fit cpu 3000*100//4000 = 75, mem 7*100//8 = 87 -> 162//2 = 81; balanced
    #                |0.25-0.125|/2 = 0.0625 -> 93.  300 + 81 + 93 = 474
    #   b1 (8/16Gi): fit cpu 7000*100//8000 = 87, mem 15*100//16 = 93 -> 180//2 = 90; balanced
    #                |0.125-0.0625|/2 = 0.03125 -> 96. 300 + 90 + 96 = 486 -> b1
    # web-1: counts {a: 0, b: 1}: a1 skew 0+1-0 = 1 ok, b1 skew 1+1-0 = 2 fails -> a1 (only node, no scoring).
    # web-2: counts {a: 1, b: 1}: skew 2 on both (it would be 1 with minDomains unset).
    doc, _ = cli_json(FIXTURES / "spread_min_domains.yaml")
    pods = by_name(doc)
    assert [(n, pods[n]["status"], pods[n]["node"]) for n in ("web-0", "web-1", "web-2")] == [
        ("web-0", "Scheduled", "b1"),
        ("web-1", "Scheduled", "a1"),
        ("web-2", "Unschedulable", None),
    ]
    assert pods["web-0"]["results"][0]["finalScore"]["a1"]["NodeResourcesFit"] == 81
    assert pods["web-0"]["results"][0]["finalScore"]["b1"]["NodeResourcesBalancedAllocation"] == 96
    assert pods["web-1"]["results"][0]["finalScore"] == {}
    assert pods["web-2"]["message"] == (
        "0/2 nodes are available: 2 node(s) didn't match pod topology spread constraints. "
        + DRA
        + "0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )


def test_spread_min_domains_unset_places_the_third_replica() -> None:
    # Same cluster without minDomains: min_match = 1 for web-2, skew 1 + 1 - 1 = 1 on both nodes.
    # After web-0 (b1) and web-1 (a1) each node has 1 cpu / 1Gi used. web-2:
    #   a1: fit cpu 2000*100//4000 = 50, mem 6*100//8 = 75 -> 62; balanced |0.5-0.25|/2 -> 87; 449
    #   b1: fit cpu 6000*100//8000 = 75, mem 14*100//16 = 87 -> 81; balanced |0.25-0.125|/2 -> 93; 474
    docs = fixture_docs("spread_min_domains.yaml")
    for d in docs:
        if d["kind"] == "Pod":
            del d["spec"]["topologySpreadConstraints"][0]["minDomains"]
    out = outcomes(simulate_docs(docs))
    assert [(n, out[n].node) for n in ("web-0", "web-1", "web-2")] == [
        ("web-0", "b1"),
        ("web-1", "a1"),
        ("web-2", "b1"),
    ]


# ---- System default spreading (Service selects the pod) ----------------------------------------


def test_spread_system_defaults_from_service() -> None:
    # web-new has no constraints; Service "web" selects it -> System defaults
    # (``pkg/scheduler/framework/plugins/podtopologyspread``):
    #   hostname maxSkew 3: size = 3 filtered nodes, w = ln 5 = 1.6094
    #   zone maxSkew 5: domains {a, b}, w = ln 4 = 1.3863, counts a = 2, b = 1
    #   a1: 2*1.6094 + 2 + 2*1.3863 + 4 = 11.99 -> 12
    #   a2: 0 + 2 + 2*1.3863 + 4 = 8.77 -> 9
    #   b1: 1.6094 + 2 + 1.3863 + 4 = 8.996 -> 9
    # normalize mx = 12, mn = 9: a1 100*(21-12)//12 = 75, a2/b1 100*(21-9)//12 = 100; x2 = 150/200/200.
    # Resources (500m / 512Mi per web pod, nodes 4 cpu / 8192Mi):
    #   a1 cpu 1500 -> 2500*100//4000 = 62, mem 1536 -> 6656*100//8192 = 81 -> 71; bal |.375-.1875|/2 -> 90
    #   a2 cpu 500 -> 87, mem 512 -> 93 -> 90; bal |.125-.0625|/2 -> 96
    #   b1 cpu 1000 -> 75, mem 1024 -> 87 -> 81; bal |.25-.125|/2 -> 93
    # totals a1 300+71+150+90 = 611, a2 300+90+200+96 = 686, b1 300+81+200+93 = 674 -> a2
    out = outcomes(simulate_docs(fixture_docs("spread_system_default.yaml")))
    rec = out["web-new"].results[-1].to_dict()
    assert out["web-new"].node == "a2"
    assert {n: s["PodTopologySpread"] for n, s in rec["score"].items()} == {"a1": 12, "a2": 9, "b1": 9}
    assert {n: s["PodTopologySpread"] for n, s in rec["normalizedScore"].items()} == {
        "a1": 75,
        "a2": 100,
        "b1": 100,
    }
    assert {n: sum(s.values()) for n, s in rec["finalScore"].items()} == {"a1": 611, "a2": 686, "b1": 674}


# ---- 4. pod anti-affinity, one replica per node until the nodes run out ----------------------


def test_anti_affinity_one_replica_per_node() -> None:
    # Replicas 1 cpu / 1Gi; nodes n1 8 cpu, n2 6 cpu, n3 4 cpu (8Gi each). InterPodAffinity scores
    # nothing (required anti-affinity is not scored) -> Skip.
    #   n1: fit cpu 7000*100//8000 = 87, mem 87 -> 87; balanced |.125-.125| -> 100; 300+87+100 = 487
    #   n2: fit cpu 5000*100//6000 = 83, mem 87 -> 85; balanced |.1667-.125|/2 -> 97; 300+85+97 = 482
    #   n3: fit 75, 87 -> 81; balanced |.25-.125|/2 -> 93;                          300+81+93 = 474
    # web-0 -> n1; web-1 (n1 excluded by anti-affinity) -> n2; web-2 -> n3 (the only node left).
    # web-3: every node hosts an app=web pod -> the incoming pod's anti-affinity fails everywhere
    # (checked before the existing pods' anti-affinity); Unschedulable code, so every node is a
    # preemption candidate but all pods have web-3's priority (0) -> no victims.
    doc, _ = cli_json(FIXTURES / "anti_affinity_one_per_node.yaml")
    pods = by_name(doc)
    assert [(n, pods[n]["node"]) for n in ("web-0", "web-1", "web-2")] == [
        ("web-0", "n1"),
        ("web-1", "n2"),
        ("web-2", "n3"),
    ]
    assert {n: sum(s.values()) for n, s in pods["web-0"]["results"][0]["finalScore"].items()} == {
        "n1": 487,
        "n2": 482,
        "n3": 474,
    }
    assert pods["web-3"]["status"] == "Unschedulable"
    assert pods["web-3"]["message"] == (
        "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. "
        + DRA
        + "0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )


# ---- 5. preemption with a PodDisruptionBudget -------------------------------------------------


def test_preemption_lowest_priority_victims_pdb_protects() -> None:
    # n1 (4 cpu, full): a(10, 1 cpu, PDB) b(20, 1) c(30, 1) d(40, 1); n2 (4 cpu, full): e(10, 2, PDB) g(50, 2).
    # hi (1000, 2 cpu): Insufficient cpu on both (Unschedulable -> both candidates; 2 potential
    # nodes, num = min(max(2*10//100, 100), 2) = 2, so both are dry-run).
    # n1: remove all, free 4. Order by importance d c b a; PDB split: violating [a], others [d c b].
    #     reprieve a (used 1, free 3 >= 2 ok), d (used 2, free 2 ok), c (used 3, free 1 < 2 -> victim),
    #     b (used 3 -> victim). victims [c, b], 0 violations, highest victim priority 30.
    # n2: violating [e], others [g]: reprieve e (used 2, free 2 ok), g -> victim. victims [g], 0
    #     violations, highest victim priority 50.
    # pick: (1) violations 0 = 0; (2) lowest highest-victim priority 30 < 50 -> n1.
    # lo-new (prio 5, 2 cpu) pops after hi: no node fits (n1 also carries the nominated hi), and no
    # pod has a priority below 5 -> no victims.
    doc, stderr = cli_json(FIXTURES / "preemption_pdb.yaml")
    assert stderr == ""
    pods = by_name(doc)
    hi = pods["hi"]
    assert (hi["status"], hi["node"]) == ("Scheduled", "n1")
    first, last = hi["results"][0], hi["results"][-1]
    assert first["selectedNode"] is None
    assert first["filter"]["n1"]["NodeResourcesFit"] == {
        "code": "Unschedulable",
        "reasons": ["Insufficient cpu"],
    }
    assert first["postFilter"]["DefaultPreemption"] == {
        "code": "Success",
        "reasons": [],
        "nominatedNode": "n1",
        "victims": ["default/c", "default/b"],
    }
    assert last["selectedNode"] == "n1"
    assert len(hi["results"]) == 2
    assert (pods["b"]["status"], pods["c"]["status"]) == ("Preempted", "Preempted")
    assert {"a", "d", "e", "g"}.isdisjoint(pods)  # untouched bound pods are not reported
    assert pods["lo-new"]["status"] == "Unschedulable"
    assert pods["lo-new"]["message"] == (
        "0/2 nodes are available: 2 Insufficient cpu. "
        + DRA
        + "0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )


def test_preemption_state_of_the_cluster_after_the_run() -> None:
    # After the run: b and c deleted, hi bound to n1; n1 = a + d + hi = 4 cpu. The binding cleared
    # hi's nominatedNodeName (ClearingNominatedNodeNameAfterBinding, on by default in v1.35).
    res = run_simulation(load_manifests([FIXTURES / "preemption_pdb.yaml"]).manifests, None, seed=1)
    names = {(o["metadata"]["name"], o["spec"].get("nodeName")) for o in res.cluster.list("Pod").items}
    assert names == {("a", "n1"), ("d", "n1"), ("e", "n2"), ("g", "n2"), ("hi", "n1"), ("lo-new", None)}
    hi = res.cluster.get("Pod", "default", "hi")
    assert "nominatedNodeName" not in hi["status"]


def test_preemption_prefers_the_node_without_pdb_violation() -> None:
    # n1: a(10, 3 cpu, only pod of a PDB with 0 disruptions) b(20, 1); n2: f(60, 2) g(50, 2). hi: 2 cpu.
    # n1: violating [a], others [b]: reprieve a (used 3, free 1 < 2 -> victim, violating),
    #     b (used 1, free 3 ok). victims [a], 1 violation.
    # n2: [f, g]: reprieve f (used 2, free 2 ok), g (used 4 -> victim). victims [g], 0 violations.
    # pick: (1) fewest PDB violations -> n2, even though g's priority 50 > a's 10.
    docs = [d for d in fixture_docs("preemption_pdb_violation.yaml") if d["metadata"]["name"] != "never"]
    out = outcomes(simulate_docs(docs))
    assert (out["hi"].status, out["hi"].node) == ("Scheduled", "n2")
    post = out["hi"].results[0].to_dict()["postFilter"]["DefaultPreemption"]
    assert (post["nominatedNode"], post["victims"]) == ("n2", ["default/g"])
    assert out["g"].status == "Preempted"
    assert "a" not in out and "f" not in out


def test_preemption_policy_never() -> None:
    # never (prio 2000, preemptionPolicy Never): both nodes full -> Insufficient cpu;
    # ``PodEligibleToPreemptOthers``.
    docs = [d for d in fixture_docs("preemption_pdb_violation.yaml") if d["metadata"]["name"] != "hi"]
    out = outcomes(simulate_docs(docs))
    assert out["never"].status == "Unschedulable"
    assert out["never"].message == (
        "0/2 nodes are available: 2 Insufficient cpu. " + DRA + "not eligible due to preemptionPolicy=Never."
    )
    assert set(out) == {"never"}  # nothing was preempted


def test_preemptor_loses_freed_room_to_higher_priority_pod() -> None:
    # Both pending: never (2000, Never) fails first; hi (1000) preempts g on n2 (as above).
    # g's deletion requeues never, which pops before hi (higher priority). hi's nomination does not
    # count against never (only nominated pods of priority >= never's are added in Filter), so never
    # takes n2. hi then preempts again: n1 still needs a (1 violation); n2 hosts f(60) and
    # never(2000 > 1000, not a victim): victims [f], 0 violations -> n2 again.
    out = outcomes(simulate_docs(fixture_docs("preemption_pdb_violation.yaml")))
    assert (out["never"].status, out["never"].node) == ("Scheduled", "n2")
    assert (out["hi"].status, out["hi"].node) == ("Scheduled", "n2")
    victims = [
        r.to_dict()["postFilter"]["DefaultPreemption"]["victims"]
        for r in out["hi"].results
        if r.to_dict()["postFilter"]
    ]
    assert victims == [["default/g"], ["default/f"]]
    assert (out["f"].status, out["g"].status) == ("Preempted", "Preempted")


def test_preemption_uses_remove_pod_extensions() -> None:
    # hi (prio 100, app=web tier=hi, 500m, hard zone spread maxSkew 1 on app=web).
    # Filter: a1 counts {a: 2, b: 1}, min 1 -> skew 2 + 1 - 1 = 2 > 1 (PodTopologySpread runs before
    # InterPodAffinity); b1 (1 cpu, filler holds it) -> Insufficient cpu. Both Unschedulable.
    # a1: potential guard, web-x1, web-x2 (all prio 0). Removed: {a: 0, b: 1}, min 0 -> skew 1, guard's
    #     anti-affinity gone -> fits. Importance (equal priority, earlier start first): guard 09:00,
    #     web-x1 10:00, web-x2 11:00. guard back -> its anti-affinity rejects tier=hi -> victim;
    #     web-x1 back -> {a: 1, b: 1}, skew 1 ok; web-x2 back -> skew 2 -> victim. [guard, web-x2], max prio 0.
    # b1: potential filler (5), web-y (0). Removed: {a: 2, b: 0}, min 0, skew 1, cpu free.
    #     filler back -> Insufficient cpu -> victim; web-y back -> {a: 2, b: 1}, min 1, skew 1 ok.
    #     [filler], max prio 5.
    # pick: no PDBs; lowest highest-victim priority 0 < 5 -> a1. Retry: {a: 1, b: 1} -> a1 (b1 still full).
    out = outcomes(
        run_simulation(load_manifests([FIXTURES / "preemption_affinity_spread.yaml"]).manifests, None, seed=1)
    )
    hi = out["hi"]
    first = hi.results[0].to_dict()
    assert first["filter"]["a1"]["PodTopologySpread"] == {
        "code": "Unschedulable",
        "reasons": ["node(s) didn't match pod topology spread constraints"],
    }
    assert first["postFilter"]["DefaultPreemption"]["nominatedNode"] == "a1"
    assert first["postFilter"]["DefaultPreemption"]["victims"] == ["default/guard", "default/web-x2"]
    assert (hi.status, hi.node) == ("Scheduled", "a1")
    assert {n for n, o in out.items() if o.status == "Preempted"} == {"guard", "web-x2"}


# ---- 6. WaitForFirstConsumer claim bound to the PV whose node affinity picks the node ---------


def test_wffc_claim_binds_local_pv_on_its_node(tmp_path: Path) -> None:
    # n1 (8 cpu / 16Gi) would win on resources; but the only PV (pv-n2, 10Gi >= 5Gi, class local)
    # is pinned to n2: VolumeBinding on n1 -> "node(s) didn't find available persistent volumes to bind".
    snap = tmp_path / "after.yaml"
    doc, _ = cli_json(FIXTURES / "wffc_local_pv.yaml", "--write-snapshot", str(snap))
    db = by_name(doc)["db"]
    assert (db["status"], db["node"]) == ("Scheduled", "n2")
    rec = db["results"][0]
    assert rec["filter"]["n1"]["VolumeBinding"] == {
        "code": "UnschedulableAndUnresolvable",
        "reasons": ["node(s) didn't find available persistent volumes to bind"],
    }
    assert rec["filter"]["n2"]["VolumeBinding"]["code"] == "Success"
    assert rec["finalScore"] == {}  # only one feasible node
    assert rec["reserve"]["VolumeBinding"]["code"] == "Success"
    assert rec["preBind"]["VolumeBinding"]["code"] == "Success"
    objs = {(o["kind"], o["metadata"]["name"]): o for o in load_manifests([snap]).objects}
    pvc, pv = objs[("PersistentVolumeClaim", "data")], objs[("PersistentVolume", "pv-n2")]
    assert pvc["spec"]["volumeName"] == "pv-n2" and pvc["status"]["phase"] == "Bound"
    assert pv["spec"]["claimRef"]["name"] == "data" and pv["spec"]["claimRef"]["namespace"] == "default"
    assert pv["spec"]["claimRef"]["uid"] == pvc["metadata"]["uid"]
    assert pv["status"]["phase"] == "Bound"
    assert objs[("Pod", "db")]["spec"]["nodeName"] == "n2"


def test_wffc_second_consumer_of_a_bound_claim_follows_the_pv() -> None:
    # A second pod using the same claim, popped after db bound it: the claim is now bound to the
    # local PV pv-n2 whose node affinity is hostname In [n2], so VolumeBinding's PreFilter narrows
    # the nodes to {n2} (upstream GetEligibleNodes); n1 is never filtered.
    docs = fixture_docs("wffc_local_pv.yaml")
    second = copy.deepcopy(find(docs, "Pod", "db"))
    second["metadata"]["name"] = "db-reader"
    second["metadata"]["creationTimestamp"] = "2025-01-01T00:00:01Z"
    docs.append(second)
    out = outcomes(simulate_docs(docs))
    assert (out["db"].node, out["db-reader"].node) == ("n2", "n2")
    rec = out["db-reader"].results[0].to_dict()
    assert list(rec["filter"]) == ["n2"]


def test_wffc_bound_claim_node_does_not_fit() -> None:
    # Same, but db-reader asks for 4 cpu: n2 (4 cpu, db holds 1) -> Insufficient cpu (4 <= 4 alloc:
    # Unschedulable); n1 is outside the PreFilter result -> absent status
    # "node(s) didn't satisfy plugin(s) [VolumeBinding]" (UnschedulableAndUnresolvable).
    # Preemption: only n2 is a potential node; db has db-reader's priority -> no victims; n1 keeps the
    # fresh absent status "Preemption is not helpful for scheduling". "1 No..." < "1 Preemption...".
    docs = fixture_docs("wffc_local_pv.yaml")
    second = copy.deepcopy(find(docs, "Pod", "db"))
    second["metadata"]["name"] = "db-reader"
    second["metadata"]["creationTimestamp"] = "2025-01-01T00:00:01Z"
    second["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "4"
    docs.append(second)
    out = outcomes(simulate_docs(docs))
    assert out["db"].node == "n2"
    assert out["db-reader"].status == "Unschedulable"
    assert out["db-reader"].message == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't satisfy plugin(s) [VolumeBinding]. "
        + DRA
        + "0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling."
    )


# ---- volume filters together: VolumeZone, NodeVolumeLimits, RWOP, PreFilter rejections ---------


def test_volume_plugins_end_to_end() -> None:
    # Pods pop in name order (equal priority and queue time; informer lists in key order).
    # app-zonal: PVC zonal -> pv-zone-b (zone b). z1: NodeVolumeLimits 1 (vol-solo) + 1 <= 2 ok,
    #   VolumeZone: PV zone b vs node zone a -> "node(s) had no available volume zone"; z2 only.
    # b-dyn: WFFC claim dyn, dynamic provisioning by ebs.csi.aws.com (handle "default-dyn").
    #   z2: 1 attached (vol-b) + 1 > 1 -> "node(s) exceed max volume count"; z1: 1 + 1 <= 2 -> z1,
    #   and PreBind annotates the claim with volume.kubernetes.io/selected-node: z1.
    # c-solo: ReadWriteOncePod claim solo already used by solo-owner -> VolumeRestrictions on both
    #   nodes (Unschedulable); solo-owner has c-solo's priority -> no victims.
    # d-imm: Immediate unbound claim -> VolumeBinding PreFilter UnschedulableAndUnresolvable; the
    #   FitError uses the PreFilter message. PreFilter stops at that rejection, so DynamicResources
    #   never wrote its state: its PostFilter returns Error "not found" (upstream getStateData) and
    #   RunPostFilterPlugins stops there, DefaultPreemption does not run -> tail ". not found".
    # e-missing: VolumeRestrictions' PreFilter (before VolumeBinding) reads the missing claim first.
    res = run_simulation(load_manifests([FIXTURES / "volumes_mixed.yaml"]).manifests, None, seed=1)
    out = outcomes(res)
    assert [(n, out[n].status, out[n].node) for n in ("app-zonal", "b-dyn")] == [
        ("app-zonal", "Scheduled", "z2"),
        ("b-dyn", "Scheduled", "z1"),
    ]
    zonal = out["app-zonal"].results[0].to_dict()
    assert zonal["filter"]["z1"]["VolumeZone"] == {
        "code": "UnschedulableAndUnresolvable",
        "reasons": ["node(s) had no available volume zone"],
    }
    dyn = out["b-dyn"].results[0].to_dict()
    assert dyn["filter"]["z2"]["NodeVolumeLimits"] == {
        "code": "Unschedulable",
        "reasons": ["node(s) exceed max volume count"],
    }
    claim = res.cluster.get("PersistentVolumeClaim", "default", "dyn")
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "z1"
    assert out["c-solo"].message == (
        "0/2 nodes are available: 2 node has pod using PersistentVolumeClaim with the same name and "
        "ReadWriteOncePod access mode. " + DRA + "0/2 nodes are available: 2 No preemption victims found for "
        "incoming pod."
    )
    assert (
        out["d-imm"].message
        == "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found"
    )
    assert (
        out["e-missing"].message
        == '0/2 nodes are available: persistentvolumeclaim "nope" not found. not found'
    )
    assert {o.status for n, o in out.items() if n in ("c-solo", "d-imm", "e-missing")} == {"Unschedulable"}


# ---- 7. the FitError message: affinity + taints, preemption not helpful --------------------------


def test_affinity_and_taints_message() -> None:
    # t1..t3: untolerated taint (UnschedulableAndUnresolvable); u1..u3: no app=db pod anywhere and
    # cache does not match its own term -> "didn't match pod affinity rules" (UnschedulableAndUnresolvable).
    # No node has code Unschedulable -> no candidates: "6 Preemption is not helpful for scheduling".
    doc, _ = cli_json(FIXTURES / "affinity_and_taints.yaml")
    pod = by_name(doc)["cache"]
    assert pod["status"] == "Unschedulable"
    assert pod["message"] == (
        "0/6 nodes are available: 3 node(s) didn't match pod affinity rules, 3 node(s) had untolerated "
        "taint(s). no new claims to deallocate, preemption: 0/6 nodes are available: 6 Preemption is not "
        "helpful for scheduling."
    )


def test_affinity_first_pod_of_self_affine_group(tmp_path: Path) -> None:
    # Give cache the label app=db: no pod matches its term, but it matches its own term ->
    # "first pod of a self-affine group" passes on u1..u3. Identical nodes, every score ties
    # (100m/128Mi on 4 cpu/8Gi) -> the node is a seeded tie-break among u1..u3.
    docs = fixture_docs("affinity_and_taints.yaml")
    find(docs, "Pod", "cache")["metadata"]["labels"] = {"app": "db"}
    out = outcomes(simulate_docs(docs))
    assert out["cache"].status == "Scheduled" and out["cache"].node in {"u1", "u2", "u3"}


# ---- 8. a pod that references a ResourceClaim -------------------------------------------------


def test_resource_claim_pod_waits_for_its_claim_not_a_crash() -> None:
    # DynamicResources PreEnqueue keeps a pod whose ResourceClaim does not exist out of the active
    # queue with the lister's NotFound text; the plain pod is scheduled.
    doc, stderr = cli_json(FIXTURES / "resource_claim.yaml")
    assert stderr == ""
    pods = by_name(doc)
    gpu = pods["gpu-job"]
    assert gpu["status"] == "Gated"
    assert gpu["message"] == 'resourceclaim.resource.k8s.io "gpu-claim" not found'
    assert pods["plain"]["status"] == "Scheduled"


# ---- 9. the default profile is complete ------------------------------------------------------

DEFAULT_PLUGINS_V1 = [
    # ``pkg/scheduler/apis/config/v1/default_plugins.go`` (DynamicResources before DefaultPreemption)
    "SchedulingGates",
    "PrioritySort",
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
    "DefaultPreemption",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
    "DefaultBinder",
]


def _names(plugins: list[Any]) -> list[str]:
    return [p.NAME for p in plugins]


def test_default_profile_is_complete() -> None:
    res = run_simulation(load_manifests([FIXTURES / "resource_claim.yaml"]).manifests, None, seed=1)
    fwk = res.scheduler.profiles["default-scheduler"]
    assert fwk.skipped_plugins == []
    # upstream v1.35 also lists DefaultPreemption at PreEnqueue (it gates a preemptor while the async
    # eviction runs); kubesched preempts synchronously by design (see default_preemption.py) and so
    # registers no PreEnqueue hook for it.
    assert _names(fwk.pre_enqueue_plugins) == ["SchedulingGates", "DynamicResources"]
    assert _names(fwk.pre_filter_plugins) == [
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    ]
    assert _names(fwk.filter_plugins) == [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    ]
    assert _names(fwk.post_filter_plugins) == ["DynamicResources", "DefaultPreemption"]
    assert _names(fwk.score_plugins) == [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    ]
    assert _names(fwk.reserve_plugins) == ["VolumeBinding", "DynamicResources"]
    assert _names(fwk.pre_bind_plugins) == ["VolumeBinding", "DynamicResources"]
    assert _names(fwk.bind_plugins) == ["DefaultBinder"]
    every = set()
    for lst in (
        fwk.pre_enqueue_plugins,
        fwk.pre_filter_plugins,
        fwk.filter_plugins,
        fwk.post_filter_plugins,
        fwk.pre_score_plugins,
        fwk.score_plugins,
        fwk.reserve_plugins,
        fwk.permit_plugins,
        fwk.pre_bind_plugins,
        fwk.bind_plugins,
        fwk.post_bind_plugins,
    ):
        every.update(_names(lst))
    every.add(type(fwk.queue_sort_plugin).NAME)
    assert every == set(DEFAULT_PLUGINS_V1)


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.glob("*.yaml")))
def test_no_warning_on_stderr_with_the_default_profile(fixture: str) -> None:
    _, stderr = cli_json(FIXTURES / fixture)
    assert "not implemented" not in stderr
    if fixture != "volumes_mixed.yaml":
        # volumes_mixed logs upstream's PostFilter Error status ("not found") through logging
        assert stderr == ""
