"""The vectorised Filter/Score path (NodeTable + ``filter_batch``/``score_batch``) and the node
table's cached PreFilter/PreScore aggregates (PodTopologySpread, InterPodAffinity) give exactly what
the per-node path gives: verdicts, reasons, raw and normalized scores, chosen nodes, the rotating
start index and the RNG stream (property tests on random clusters and pods)."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, generate_latest

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.cache.cache import Cache
from kubesched.clock import VirtualClock
from kubesched.embedded.store import MemoryCluster
from kubesched.framework import batch as batch_mod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.snapshot import Snapshot
from kubesched.metrics import SchedulerMetrics
from kubesched.plugins.interpodaffinity import batch as ipa_batch
from kubesched.scheduler import new_scheduler
from kubesched.scheduler import placement as placement_mod
from kubesched.scheduler.tie_break import draw_zero, last_zero_of_run
from kubesched.testing import node_manifest, pod_manifest

ZONES = ["a", "b", "c"]
TAINTS = [
    {"key": "k1", "value": "v1", "effect": "NoSchedule"},
    {"key": "k2", "value": "", "effect": "PreferNoSchedule"},
    {"key": "k3", "value": "v", "effect": "NoExecute"},
    {"key": "k4", "value": "w", "effect": "PreferNoSchedule"},
]
TOLERATIONS = [
    {"key": "k1", "operator": "Equal", "value": "v1", "effect": "NoSchedule"},
    {"key": "k2", "operator": "Exists"},
    {"key": "k3", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]
IMAGES = [(["img-a:1", "docker.io/img-a:1"], 300 * 1024 * 1024), (["img-b:2"], 900 * 1024 * 1024)]
GPU = "example.com/gpu"
APPS = ["a", "b"]
TOPOLOGY_KEYS = ["zone", "kubernetes.io/hostname", "tier"]


def _selector(draw: Any) -> dict[str, Any]:
    return draw(
        st.sampled_from(
            [
                {"matchLabels": {"app": "a"}},
                {"matchLabels": {"app": "b"}},
                {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "b"]}]},
                {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["a"]}]},
                {},
            ]
        )
    )


@st.composite
def spread_constraints(draw: Any) -> list[dict[str, Any]]:
    out = []
    for key in draw(st.lists(st.sampled_from(TOPOLOGY_KEYS), min_size=1, max_size=2, unique=True)):
        c: dict[str, Any] = {
            "maxSkew": draw(st.integers(1, 3)),
            "topologyKey": key,
            "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
            "labelSelector": _selector(draw),
        }
        if c["whenUnsatisfiable"] == "DoNotSchedule" and draw(st.integers(0, 3)) == 0:
            c["minDomains"] = draw(st.integers(1, 4))
        if draw(st.integers(0, 3)) == 0:
            c["nodeAffinityPolicy"] = "Ignore"
        if draw(st.integers(0, 3)) == 0:
            c["nodeTaintsPolicy"] = "Honor"
        out.append(c)
    return out


@st.composite
def pod_affinity_terms(draw: Any) -> dict[str, Any]:
    t: dict[str, Any] = {
        "labelSelector": _selector(draw),
        "topologyKey": draw(st.sampled_from(TOPOLOGY_KEYS)),
    }
    ns = draw(st.integers(0, 3))
    if ns == 1:
        t["namespaces"] = ["default", "other"]
    elif ns == 2:
        t["namespaceSelector"] = draw(st.sampled_from([{}, {"matchLabels": {"team": "x"}}]))
    return t


@st.composite
def pod_affinity(draw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        part: dict[str, Any] = {}
        if draw(st.integers(0, 2)) == 0:
            part["requiredDuringSchedulingIgnoredDuringExecution"] = [
                draw(pod_affinity_terms()) for _ in range(draw(st.integers(1, 2)))
            ]
        if draw(st.integers(0, 2)) == 0:
            part["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": draw(st.integers(1, 100)), "podAffinityTerm": draw(pod_affinity_terms())}
                for _ in range(draw(st.integers(1, 2)))
            ]
        if part:
            out[kind] = part
    return out


@st.composite
def node_specs(draw: Any, i: int) -> dict[str, Any]:
    labels: dict[str, str] = {}
    if draw(st.integers(0, 3)):
        labels["zone"] = draw(st.sampled_from(ZONES))
    if draw(st.booleans()):
        labels["tier"] = draw(st.sampled_from(["x", "y"]))
    if draw(st.booleans()):
        labels["num"] = str(draw(st.integers(0, 12)))
    alloc: dict[str, Any] = {}
    if draw(st.booleans()):
        alloc[GPU] = str(draw(st.integers(0, 2)))
    if draw(st.booleans()):
        alloc["ephemeral-storage"] = draw(st.sampled_from(["1Gi", "10Gi"]))
    return node_manifest(
        f"n{i:03d}",
        cpu=draw(st.sampled_from(["1", "2", "4"])),
        memory=draw(st.sampled_from(["1Gi", "4Gi", "32Gi"])),
        pods=draw(st.sampled_from([2, 5, 110])),
        labels=labels,
        allocatable=alloc,
        taints=draw(st.lists(st.sampled_from(TAINTS), max_size=2, unique_by=lambda t: t["key"])),
        unschedulable=draw(st.integers(0, 9)) == 0,
        images=draw(st.lists(st.sampled_from(IMAGES), max_size=2, unique_by=lambda t: t[0][0])),
    )


@st.composite
def pod_specs(draw: Any, i: int, bound_to: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    tols = draw(st.lists(st.sampled_from(TOLERATIONS), max_size=3, unique_by=lambda t: t["key"]))
    if tols:
        spec["tolerations"] = tols
    if draw(st.integers(0, 3)) == 0:
        spec["nodeSelector"] = {"zone": draw(st.sampled_from(ZONES))}
    aff: dict[str, Any] = {}
    if draw(st.integers(0, 3)) == 0:
        exprs = draw(
            st.lists(
                st.sampled_from(
                    [
                        {"key": "zone", "operator": "In", "values": ["a", "b"]},
                        {"key": "zone", "operator": "NotIn", "values": ["c"]},
                        {"key": "num", "operator": "Gt", "values": ["4"]},
                        {"key": "num", "operator": "Lt", "values": ["9"]},
                        {"key": "tier", "operator": "Exists"},
                        {"key": "tier", "operator": "DoesNotExist"},
                    ]
                ),
                min_size=1,
                max_size=2,
            )
        )
        aff["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchExpressions": exprs}]
        }
    if draw(st.integers(0, 2)) == 0:
        aff["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {
                "weight": draw(st.integers(1, 100)),
                "preference": {
                    "matchExpressions": [
                        {
                            "key": draw(st.sampled_from(["zone", "tier"])),
                            "operator": "In",
                            "values": ["a", "x"],
                        }
                    ]
                },
            }
            for _ in range(draw(st.integers(1, 2)))
        ]
    affinity: dict[str, Any] = {"nodeAffinity": aff} if aff else {}
    if draw(st.integers(0, 2)) == 0:
        affinity.update(draw(pod_affinity()))
    if affinity:
        spec["affinity"] = affinity
    if draw(st.integers(0, 2)) == 0:
        spec["topologySpreadConstraints"] = draw(spread_constraints())
    requests: dict[str, Any] = {}
    cpu = draw(st.sampled_from([None, "100m", "500m", "1500m"]))
    mem = draw(st.sampled_from([None, "200Mi", "2Gi"]))
    if draw(st.integers(0, 4)) == 0:
        requests[GPU] = "1"
    if draw(st.integers(0, 5)) == 0:
        requests["ephemeral-storage"] = "2Gi"
    image = draw(st.sampled_from(["img-a:1", "img-b:2", "registry.k8s.io/pause:3.10.1"]))
    labels = {"app": draw(st.sampled_from(APPS))} if draw(st.integers(0, 3)) else {}
    m = pod_manifest(
        f"p{i:03d}",
        draw(st.sampled_from(["default", "default", "other"])),
        cpu=cpu,
        memory=mem,
        requests=requests,
        image=image,
        node_name=bound_to,
        labels=labels,
        priority=draw(st.sampled_from([0, 0, 10])),
        spec=spec,
    )
    if draw(st.integers(0, 5)) == 0:
        m["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    return m


@st.composite
def clusters(draw: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], int]:
    n = draw(st.integers(placement_mod.BATCH_MIN_NODES, 70))
    nodes = [draw(node_specs(i)) for i in range(n)]
    bound = [
        draw(pod_specs(1000 + i, bound_to=f"n{draw(st.integers(0, n - 1)):03d}"))
        for i in range(draw(st.integers(0, 25)))
    ]
    pending = [draw(pod_specs(i)) for i in range(draw(st.integers(1, 40)))]
    return nodes, bound, pending, draw(st.integers(0, 2**31))


NAMESPACES = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other", "labels": {"team": "x"}}},
]


def _per_node(mp: pytest.MonkeyPatch) -> None:
    """Turn every vectorised form and table aggregate off."""
    mp.setattr(placement_mod, "BATCH_MIN_NODES", 10**9)
    mp.setattr(batch_mod, "TABLE_PRECOMPUTE", False)


def _run(
    nodes: list[dict[str, Any]],
    bound: list[dict[str, Any]],
    pending: list[dict[str, Any]],
    seed: int,
    pct: int | None,
    *,
    metrics: Any = None,
    record: bool = False,
    keep: list[Any] | None = None,
) -> tuple[list[Any], int, Any]:
    clock = VirtualClock(0)
    c = MemoryCluster(clock)
    c.load(NAMESPACES + nodes + bound)
    s = new_scheduler(
        c, None, clock=clock, seed=seed, on_skipped_plugins=None, metrics=metrics, record=record
    )
    if keep is not None:
        keep.append(s)
    if pct is not None:
        s.placement.global_percentage = pct
    s.start()
    for p in pending:
        c.create(p)
    for _ in range(3 * len(pending)):
        if not s.schedule_next():
            break
    pods = [
        (
            p["metadata"]["name"],
            p["spec"].get("nodeName"),
            (p.get("status") or {}).get("nominatedNodeName"),
            [(x.get("reason"), x.get("message")) for x in (p.get("status") or {}).get("conditions", [])],
        )
        for p in c.list("Pod").items
    ]
    events = [(e.get("reason"), e.get("note") or e.get("message")) for e in c.events()]
    return [pods, events], s.placement.next_start_node_index, s.rng.getstate()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(clusters(), st.sampled_from([None, 0, 10, 50, 100]))
def test_scheduler_runs_identically_with_and_without_batch(cluster: Any, pct: int | None) -> None:
    nodes, bound, pending, seed = cluster
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ipa_batch, "WALK_MAX_NODES", 0)
        batch = _run(nodes, bound, pending, seed, pct)
    with pytest.MonkeyPatch.context() as mp:
        _per_node(mp)
        per_node = _run(nodes, bound, pending, seed, pct)
    assert batch == per_node


def _snapshot(nodes: list[dict[str, Any]], bound: list[dict[str, Any]]) -> Snapshot:
    cache = Cache()
    for m in nodes:
        cache.add_node(Node.from_manifest(m))
    for m in bound:
        cache.add_pod(Pod.from_manifest(m))
    snap = Snapshot()
    cache.update_snapshot(snap)
    assert snap.node_table is not None
    return snap


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(clusters())
def test_plugin_batch_forms_match_per_node(cluster: Any) -> None:
    """Per plugin: filter verdicts and raw/normalized scores of the batch forms equal the per-node ones."""
    nodes, bound, pending, seed = cluster
    snap = _snapshot(nodes, bound)
    table = snap.node_table
    clock = VirtualClock(0)
    s = new_scheduler(MemoryCluster(clock), None, clock=clock, seed=seed, on_skipped_plugins=None)
    fwk = s.profiles["default-scheduler"]
    s.snapshot = snap
    all_nodes = snap.list()
    rows = table.order.copy()
    random.Random(seed).shuffle(rows)  # any visiting order
    infos = [table.infos[r] for r in rows]
    for m in pending:
        pod = Pod.from_manifest(m)
        state = CycleState()
        _, st_, _ = fwk.run_pre_filter_plugins(state, pod, all_nodes)
        if st_ is not None and not st_.is_success():
            continue
        for pl in fwk.filter_plugins:
            if pl.NAME in state.skip_filter_plugins:
                continue
            mask = pl.filter_batch(state, pod, table, rows)  # type: ignore[attr-defined]
            want = [(x := pl.filter(state, pod, ni)) is None or x.is_success() for ni in infos]
            assert mask.tolist() == want, pl.NAME
            keys_fn = getattr(pl, "filter_batch_status_keys", None)
            if keys_fn is not None:
                # rows with equal keys must get equal statuses (placement copies one status to all)
                keys = keys_fn(state, pod, table, rows)
                seen: dict[int, Any] = {}
                for k, ni, ok in zip(keys.tolist(), infos, want, strict=True):
                    if ok:
                        continue
                    x = pl.filter(state, pod, ni)
                    got = (x.code, x.reasons, x.message())
                    assert seen.setdefault(k, got) == got, pl.NAME
        fwk.run_pre_score_plugins(state, pod, infos)
        for sp in fwk.score_plugins:
            if sp.NAME in state.skip_score_plugins:
                continue
            raw = sp.score_batch(state, pod, table, rows)  # type: ignore[attr-defined]
            assert raw is not None, sp.NAME
            want_raw = [sp.score(state, pod, ni)[0] for ni in infos]
            assert raw.tolist() == want_raw, sp.NAME
            ext = sp.score_extensions()
            if ext is not None:
                from kubesched.framework.results import NodeScore

                ns = [NodeScore(ni.name, v) for ni, v in zip(infos, want_raw, strict=False)]
                ext.normalize_score(state, pod, ns)
                got = sp.normalize_score_batch(state, pod, raw)  # type: ignore[attr-defined]
                assert got.tolist() == [x.score for x in ns], sp.NAME
        totals, status = fwk.run_score_plugins_batch(state, pod, table, rows, infos)
        per_node, status2 = fwk.run_score_plugins(state, pod, infos)
        assert status is None and status2 is None
        assert totals is not None and totals.tolist() == [x.total_score for x in per_node]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=60), st.integers(0, 2**31))
def test_select_host_batch_draws_like_reservoir_sampling(totals: list[int], seed: int) -> None:
    from kubesched.framework.node_info import NodeInfo
    from kubesched.framework.results import NodePluginScores
    from kubesched.testing import make_node

    nodes = [NodeInfo(make_node(f"n{i}")) for i in range(len(totals))]
    a = placement_mod.Placement(random.Random(seed))
    b = placement_mod.Placement(random.Random(seed))
    got = a.select_host_batch(np.array(totals, dtype=np.int64), nodes)
    want = b.select_host([NodePluginScores(f"n{i}", total_score=t) for i, t in enumerate(totals)])
    assert got == want
    assert a.rng.getstate() == b.rng.getstate()


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 1500),
    st.lists(st.integers(0, 1499), max_size=40),
    st.booleans(),
    st.integers(0, 2**31),
)
def test_select_host_batch_of_long_tie_runs(n: int, lower: list[int], raise_later: bool, seed: int) -> None:
    """Hundreds of nodes tying the first node's total (the one-run path, several bulk fetches),
    some nodes below it, and optionally one node later raising the maximum (the general path)."""
    from kubesched.framework.node_info import NodeInfo
    from kubesched.framework.results import NodePluginScores
    from kubesched.testing import make_node

    totals = [50] * n
    for i in lower:
        if 0 < i < n:
            totals[i] = 10
    if raise_later:
        totals[n // 2] = 60
    nodes = [NodeInfo(make_node(f"n{i}")) for i in range(n)]
    a = placement_mod.Placement(random.Random(seed))
    b = placement_mod.Placement(random.Random(seed))
    got = a.select_host_batch(np.array(totals, dtype=np.int64), nodes)
    want = b.select_host([NodePluginScores(f"n{i}", total_score=t) for i, t in enumerate(totals)])
    assert got == want
    assert a.selected_index == b.selected_index
    assert a.rng.getstate() == b.rng.getstate()


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 3000), st.integers(0, 2**31))
def test_last_zero_of_a_run_consumes_the_rng_like_randrange(n: int, seed: int) -> None:
    a, b = random.Random(seed), random.Random(seed)
    draws = [b.randrange(c) for c in range(2, n + 2)]
    zeros = [j for j, d in enumerate(draws) if d == 0]
    assert last_zero_of_run(a, n) == (zeros[-1] if zeros else -1)
    assert a.getstate() == b.getstate()
    assert a.random() == b.random()


@pytest.mark.parametrize("limit", [None, 64])
def test_last_zero_of_a_run_grows_its_tables_and_falls_back_past_them(
    monkeypatch: pytest.MonkeyPatch, limit: int | None
) -> None:
    """From the smallest tables (grown to the counts asked for), and with a table limit below
    the counts (the per-count thresholds of ``draw_zero``): the same draws as ``randrange``."""
    from kubesched.scheduler import tie_break

    monkeypatch.setattr(tie_break, "_table_pair", ([0, 1 << 31], np.array([0, 1 << 31], dtype=np.uint32)))
    if limit is not None:
        monkeypatch.setattr(tie_break, "_TABLE_LIMIT", limit)
    for n, seed in ((5, 1), (300, 2), (2500, 3), (40, 4)):
        a, b = random.Random(seed), random.Random(seed)
        zeros = [j for j, c in enumerate(range(2, n + 2)) if b.randrange(c) == 0]
        assert last_zero_of_run(a, n) == (zeros[-1] if zeros else -1)
        assert a.getstate() == b.getstate()
        counts = [c for r in (n, 7, n // 2 + 1) for c in range(2, r + 2)]
        assert draw_zero(a, np.array(counts, dtype=np.int64)).tolist() == [
            b.randrange(c) == 0 for c in counts
        ]
        assert a.getstate() == b.getstate()


def test_last_zero_of_a_run_on_other_generators_calls_randrange() -> None:
    class Counting(random.Random):
        calls = 0

        def randrange(self, *args: Any, **kwargs: Any) -> int:
            type(self).calls += 1
            return super().randrange(*args, **kwargs)

    a, b = Counting(11), random.Random(11)
    draws = [b.randrange(c) for c in range(2, 302)]
    zeros = [j for j, d in enumerate(draws) if d == 0]
    assert last_zero_of_run(a, 300) == (zeros[-1] if zeros else -1)
    assert Counting.calls == 300
    assert last_zero_of_run(a, 0) == -1


def test_preemption_and_nominated_pods_run_identically() -> None:
    """Nodes full of low-priority pods; high-priority pods preempt (nominations), then more pods
    are filtered while nominated pods exist (the batch path sends those nodes through the
    nominated-pods filter)."""
    n = 40
    nodes = [
        node_manifest(f"n{i:03d}", cpu="2", memory="8Gi", labels={"zone": ZONES[i % 3]}) for i in range(n)
    ]
    bound = [
        pod_manifest(f"low{i:03d}", cpu="1500m", memory="1Gi", node_name=f"n{i % n:03d}", priority=0)
        for i in range(n)
    ]
    pending = [pod_manifest(f"high{i:03d}", cpu="1", memory="1Gi", priority=100) for i in range(12)]
    pending += [pod_manifest(f"mid{i:03d}", cpu="400m", memory="1Gi", priority=50) for i in range(30)]
    batch = _run(nodes, bound, pending, 7, None)
    with pytest.MonkeyPatch.context() as mp:
        _per_node(mp)
        per_node = _run(nodes, bound, pending, 7, None)
    assert batch == per_node
    pods, events = batch[0]
    assert any(nom for _, _, nom, _ in pods) or any(r == "Preempted" for r, _ in events)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(2, 3000), max_size=400), st.integers(0, 2**31))
def test_bulk_draws_consume_the_rng_like_randrange(counts: list[int], seed: int) -> None:
    a, b = random.Random(seed), random.Random(seed)
    got = draw_zero(a, np.array(counts, dtype=np.int64))
    assert got.tolist() == [b.randrange(c) == 0 for c in counts]
    assert a.getstate() == b.getstate()
    assert a.random() == b.random()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(1, 1500), min_size=1, max_size=6),
    st.sampled_from([2**31 - 1, 2**32 - 1, 2**32, 2**40]),
    st.integers(0, 2**31),
)
def test_bulk_draws_of_long_tie_runs(runs: list[int], top: int, seed: int) -> None:
    """Runs of ties as host selection makes them (counts 2, 3, ..., r, restarting at each new
    maximum; thousands of draws, several bulk fetches), plus counts next to 2**32, where the
    draws fall back to ``randrange``."""
    counts = [c for r in runs for c in range(2, r + 2)] + [top, 2]
    a, b = random.Random(seed), random.Random(seed)
    got = draw_zero(a, np.array(counts, dtype=np.int64))
    assert got.tolist() == [b.randrange(c) == 0 for c in counts]
    assert a.getstate() == b.getstate()
    got = draw_zero(a, np.array(counts[:-2], dtype=np.int64))
    assert got.tolist() == [b.randrange(c) == 0 for c in counts[:-2]]
    assert a.getstate() == b.getstate()


def test_bulk_draws_of_other_generators_call_randrange() -> None:
    class Counting(random.Random):
        calls = 0

        def randrange(self, *args: Any, **kwargs: Any) -> int:
            type(self).calls += 1
            return super().randrange(*args, **kwargs)

    a, b = Counting(5), random.Random(5)
    counts = [2, 3, 4, 1000, 2]
    assert draw_zero(a, np.array(counts)).tolist() == [b.randrange(c) == 0 for c in counts]
    assert Counting.calls == len(counts)
    assert draw_zero(a, np.array([], dtype=np.int64)).tolist() == []


def _pre_states(fwk: Any, pod: Pod, all_nodes: list[Any], feasible: list[Any]) -> dict[str, Any]:
    """PreFilter and PreScore states of PodTopologySpread and InterPodAffinity, as comparable values
    (PodTopologySpread's domain maps with their insertion order, which the critical paths read)."""
    from kubesched.plugins.interpodaffinity import plugin as ipa
    from kubesched.plugins.podtopologyspread import plugin as pts

    state = CycleState()
    _, s1, _ = fwk.run_pre_filter_plugins(state, pod, all_nodes)
    fwk.run_pre_score_plugins(state, pod, feasible)
    out: dict[str, Any] = {
        "status": None if s1 is None else (s1.code, s1.message()),
        "skip": (sorted(state.skip_filter_plugins), sorted(state.skip_score_plugins)),
    }
    p = state.get(pts.PRE_FILTER_STATE_KEY)
    if p is not None:
        out["pts"] = ([list(m.items()) for m in p.tp_value_to_match_num], p.critical_paths)
    p = state.get(pts.PRE_SCORE_STATE_KEY)
    if p is not None:
        out["pts_score"] = (
            [list(m.items()) for m in p.topology_value_to_pod_counts],
            sorted(p.ignored_nodes),
            p.topology_normalizing_weight,
        )
    p = state.get(ipa.PRE_FILTER_STATE_KEY)
    if p is not None:
        out["ipa"] = (p.existing_anti_affinity_counts, p.affinity_counts, p.anti_affinity_counts)
    p = state.get(ipa.PRE_SCORE_STATE_KEY)
    if p is not None:
        out["ipa_score"] = p.topology_score
    return out


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(clusters(), st.data())
def test_table_aggregates_equal_the_walk_as_the_cluster_changes(cluster: Any, data: Any) -> None:
    """PodTopologySpread/InterPodAffinity PreFilter and PreScore states built from the node table's
    cached aggregates equal the walked ones, while pods are added and removed between cycles (the
    caches are then updated for the changed nodes only)."""
    nodes, bound, pending, seed = cluster
    cache = Cache()
    for m in nodes:
        cache.add_node(Node.from_manifest(m))
    snap = Snapshot()
    clock = VirtualClock(0)
    mc = MemoryCluster(clock)
    mc.load(NAMESPACES)
    s = new_scheduler(mc, None, clock=clock, seed=seed, on_skipped_plugins=None)
    fwk = s.profiles["default-scheduler"]
    s.snapshot = snap
    placed: list[Pod] = []
    extra = [Pod.from_manifest(m) for m in bound]
    for step in range(4):
        for p in extra[step::4]:
            cache.add_pod(p)
            placed.append(p)
        if placed and data.draw(st.booleans()):
            gone = placed.pop(data.draw(st.integers(0, len(placed) - 1)))
            cache.remove_pod(gone)
        cache.update_snapshot(snap)
        all_nodes = snap.list()
        feasible = [ni for i, ni in enumerate(all_nodes) if (i + step) % 3]
        for m in pending[:6]:
            pod = Pod.from_manifest(m)
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(ipa_batch, "WALK_MAX_NODES", 0)  # always the cached aggregate
                fast = _pre_states(fwk, pod, all_nodes, feasible)
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(batch_mod, "TABLE_PRECOMPUTE", False)
                walk = _pre_states(fwk, pod, all_nodes, feasible)
            assert fast == walk


def _evaluations(reg: CollectorRegistry) -> dict[str, float]:
    """``scheduler_plugin_evaluation_total`` samples of ``reg`` (label set -> count)."""
    out = {}
    for line in generate_latest(reg).decode().splitlines():
        if line.startswith("scheduler_plugin_evaluation_total{"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(clusters(), st.sampled_from([None, 0, 50]))
def test_metrics_on_or_off_give_identical_bindings_and_the_batch_path_counts_as_per_node(
    cluster: Any, pct: int | None
) -> None:
    """Metrics never change what is scheduled (bindings, statuses, events, start index, RNG), the
    batch path stays on with metrics, and it counts plugin evaluations exactly as the per-node
    path does."""
    nodes, bound, pending, seed = cluster
    off = _run(nodes, bound, pending, seed, pct)
    reg_batch = CollectorRegistry()
    kept: list[Any] = []
    on = _run(nodes, bound, pending, seed, pct, metrics=SchedulerMetrics(reg_batch), keep=kept)
    assert on == off
    assert kept[0].profiles["default-scheduler"].sink.enabled
    reg_per_node = CollectorRegistry()
    with pytest.MonkeyPatch.context() as mp:
        _per_node(mp)
        per_node = _run(nodes, bound, pending, seed, pct, metrics=SchedulerMetrics(reg_per_node))
    assert per_node == off
    assert _evaluations(reg_batch) == _evaluations(reg_per_node)


def _records(s: Any) -> dict[str, list[dict[str, Any]]]:
    """Every recorded attempt without the engine-path fields (which differ between the paths)."""
    out = {}
    for key, recs in s.records.items():
        out[key] = [
            {k: v for k, v in r.to_dict().items() if k not in ("filterPath", "scorePath", "fallbackReason")}
            for r in recs
        ]
    return out


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(clusters())
def test_recorder_reads_the_batch_results(cluster: Any) -> None:
    """With a recorder attached (``simulate -o json``, ``--explain``) the batch path still runs and
    records exactly the verdicts and scores the per-node path records, in the same order."""
    nodes, bound, pending, seed = cluster
    batch_kept: list[Any] = []
    batch = _run(nodes, bound, pending, seed, None, record=True, keep=batch_kept)
    per_node_kept: list[Any] = []
    with pytest.MonkeyPatch.context() as mp:
        _per_node(mp)
        per_node = _run(nodes, bound, pending, seed, None, record=True, keep=per_node_kept)
    assert batch == per_node
    got, want = _records(batch_kept[0]), _records(per_node_kept[0])
    assert got == want
    assert [list(r["filter"]) for rs in got.values() for r in rs] == [
        list(r["filter"]) for rs in want.values() for r in rs
    ]
    for recs in batch_kept[0].records.values():
        for r in recs:
            assert r.filter_path in ("batch", "per-node", None)
            assert (r.filter_path == "per-node") == (r.fallback_reason is not None)
    assert {r.filter_path for recs in per_node_kept[0].records.values() for r in recs} <= {"per-node", None}


def test_recorded_attempt_on_a_plain_cluster_takes_the_batch_path() -> None:
    nodes = [node_manifest(f"n{i:03d}", cpu="4", memory="8Gi") for i in range(40)]
    kept: list[Any] = []
    _run(nodes, [], [pod_manifest("p", cpu="1")], 0, None, record=True, keep=kept)
    (rec,) = kept[0].records["default/p"]
    assert (rec.filter_path, rec.score_path, rec.fallback_reason) == ("batch", "batch", None)
    assert len(rec.filter) == 40 and rec.selected_node in rec.final_score


DRA_DRIVER = "gpu.example.com"


@st.composite
def dra_clusters(draw: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], int]:
    """Nodes with 0-3 GPUs each (a ResourceSlice per node with devices), some GPUs already held by
    allocated claims, pending pods each with a claim of 1-2 GPUs (some of model ``b`` only)."""
    n = draw(st.integers(placement_mod.BATCH_MIN_NODES, 60))
    nodes = [
        node_manifest(f"n{i:03d}", cpu="4", memory="8Gi", labels={"zone": ZONES[i % 3]}) for i in range(n)
    ]
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}]},
        }
    ]
    for i in range(n):
        models = draw(st.lists(st.sampled_from("ab"), max_size=3))
        if not models:
            continue
        name = f"n{i:03d}"
        objects.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{name}-gpu"},
                "spec": {
                    "driver": DRA_DRIVER,
                    "nodeName": name,
                    "pool": {"name": name, "generation": 0, "resourceSliceCount": 1},
                    "devices": [
                        {"name": f"gpu-{k}", "attributes": {"model": {"string": m}}}
                        for k, m in enumerate(models)
                    ],
                },
            }
        )
        held = draw(st.integers(0, len(models)))
        if held:
            objects.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaim",
                    "metadata": {"name": f"held-{name}", "namespace": "default", "uid": f"held-{name}"},
                    "spec": {
                        "devices": {
                            "requests": [{"name": "g", "exactly": {"deviceClassName": "gpu", "count": held}}]
                        }
                    },
                    "status": {
                        "allocation": {
                            "devices": {
                                "results": [
                                    {"request": "g", "driver": DRA_DRIVER, "pool": name, "device": f"gpu-{k}"}
                                    for k in range(held)
                                ]
                            }
                        }
                    },
                }
            )
    pending = []
    for p in range(draw(st.integers(1, 25))):
        request: dict[str, Any] = {"deviceClassName": "gpu", "count": draw(st.integers(1, 2))}
        if draw(st.booleans()):
            request["selectors"] = [
                {"cel": {"expression": f'device.attributes["{DRA_DRIVER}"].model == "b"'}}
            ]
        objects.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"claim-{p}", "namespace": "default", "uid": f"claim-{p}"},
                "spec": {"devices": {"requests": [{"name": "g", "exactly": request}]}},
            }
        )
        pod = pod_manifest(f"p{p:03d}", cpu="100m")
        pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": f"claim-{p}"}]
        pending.append(pod)
    return nodes, objects, pending, draw(st.integers(0, 2**31))


def _run_dra(cluster: Any, pct: int | None) -> Any:
    nodes, objects, pending, seed = cluster
    clock = VirtualClock(0)
    c = MemoryCluster(clock)
    c.load(NAMESPACES + nodes + objects)
    s = new_scheduler(c, None, clock=clock, seed=seed, on_skipped_plugins=None)
    if pct is not None:
        s.placement.global_percentage = pct
    s.start()
    for p in pending:
        c.create(p)
    for _ in range(3 * len(pending)):
        if not s.schedule_next():
            break
    pods = [
        (
            p["metadata"]["name"],
            p["spec"].get("nodeName"),
            [(x.get("reason"), x.get("message")) for x in (p.get("status") or {}).get("conditions", [])],
        )
        for p in c.list("Pod").items
    ]
    claims = [
        (o["metadata"]["name"], (o.get("status") or {}).get("allocation"))
        for o in c.list("ResourceClaim").items
    ]
    return pods, claims, s.placement.next_start_node_index, s.rng.getstate()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(dra_clusters(), st.sampled_from([None, 10, 100]))
def test_dynamic_resources_batch_filter_schedules_like_per_node(cluster: Any, pct: int | None) -> None:
    from kubesched.plugins.dynamicresources.dynamic_resources import DynamicResources

    allocated_in_batch: list[int] = []
    original = DynamicResources.filter_batch

    def counting(self: Any, state: Any, pod: Any, table: Any, rows: Any) -> Any:
        out = original(self, state, pod, table, rows)
        if out is not None and pod.resource_claims:
            allocated_in_batch.append(len(rows))
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(DynamicResources, "filter_batch", counting)
        batch = _run_dra(cluster, pct)
    assert allocated_in_batch  # the pods with claims took the batch path
    with pytest.MonkeyPatch.context() as mp:
        _per_node(mp)
        per_node = _run_dra(cluster, pct)
    assert batch == per_node
