"""``Pod.stored_as``: the pod parsed from a manifest, read for the copy the embedded cluster stored
of that manifest, equals a full parse of the stored copy (every slot), and anything else than what
creation fills in (another spec object, changed labels, status fields beyond the phase) gives None.
The simulation primes its scheduler with these pods, so its output must not change: the whole
simulate pipeline is compared with and without priming."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.pod import Pod
from kubesched.clock import VirtualClock
from kubesched.embedded.store import MemoryCluster
from kubesched.scheduler import event_handlers

labels = st.dictionaries(st.sampled_from(("app", "tier")), st.sampled_from(("a", "b")), max_size=2)


@st.composite
def manifests(draw: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": draw(st.sampled_from(("web", "db")))}
    if draw(st.booleans()):
        meta["namespace"] = draw(st.sampled_from(("default", "prod")))
    if draw(st.booleans()):
        meta["uid"] = "u-given"
    if draw(st.booleans()):
        meta["creationTimestamp"] = "2025-01-02T03:04:05Z"
    lab = draw(labels)
    if lab:
        meta["labels"] = lab
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}],
        "priority": draw(st.integers(0, 10)),
    }
    if draw(st.booleans()):
        spec["nodeName"] = "n1"
    m: dict[str, Any] = {"kind": "Pod", "metadata": meta, "spec": spec}
    if draw(st.booleans()):
        m["apiVersion"] = "v1"
    status = draw(st.sampled_from((None, {}, {"phase": "Pending"}, {"nominatedNodeName": "n2"})))
    if status is not None:
        m["status"] = status
    return m


def _slots(p: Pod) -> dict[str, Any]:
    return {s: getattr(p, s) for s in Pod.__slots__}


@settings(max_examples=100, deadline=None)
@given(manifests())
def test_stored_copy_reads_as_a_full_parse(m: dict[str, Any]) -> None:
    parsed = Pod.from_manifest(m)
    cluster = MemoryCluster(VirtualClock(0))
    cluster.load([m])
    stored = cluster.get(
        "Pod", m["metadata"].get("namespace") or "default", "web" if "web" in str(m) else "db"
    )
    got = parsed.stored_as(stored)
    assert got is not None
    assert _slots(got) == _slots(Pod.from_manifest(stored))


def test_anything_else_changed_is_parsed_in_full() -> None:
    m = {
        "kind": "Pod",
        "metadata": {"name": "web", "labels": {"app": "a"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    parsed = Pod.from_manifest(m)
    same = {**m, "metadata": {**m["metadata"], "uid": "u", "resourceVersion": "7"}}
    assert parsed.stored_as(same) is not None
    assert parsed.stored_as({**same, "spec": copy.deepcopy(m["spec"])}) is None  # another spec object
    relabelled = {**same, "metadata": {**same["metadata"], "labels": {"app": "b"}}}
    assert parsed.stored_as(relabelled) is None
    other_ns = {**same, "metadata": {**same["metadata"], "namespace": "prod"}}
    assert parsed.stored_as(other_ns) is None
    nominated = {**same, "status": {"phase": "Pending", "nominatedNodeName": "n1"}}
    assert parsed.stored_as(nominated) is None
    pending = {**same, "status": {"phase": "Pending"}}
    q = parsed.stored_as(pending)
    assert q is not None and (q.phase, q.uid, q.resource_version) == ("Pending", "u", "7")


def test_simulation_output_is_the_same_without_priming(monkeypatch: Any) -> None:
    from kubesched.embedded.manifests import load_manifest_text
    from kubesched.modes.simulate.run import run_simulation

    text = "\n---\n".join(
        [
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {topology.kubernetes.io/zone: a}}\n"
            "status: {allocatable: {cpu: '2', memory: 4Gi, pods: '10'}}",
            "apiVersion: v1\nkind: Node\nmetadata: {name: n2, labels: {topology.kubernetes.io/zone: b}}\n"
            "status: {allocatable: {cpu: '2', memory: 4Gi, pods: '10'}}",
        ]
        + [
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, labels: {{app: x}}}}\n"
            f"spec: {{containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: 500m}}}}}}]}}"
            for i in range(6)
        ]
        + [
            "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {containers: [{name: c, resources: {requests: {cpu: x}}}]}"
        ]
    )

    def outcome() -> list[tuple[str, str, str | None, str]]:
        result = run_simulation(load_manifest_text(text, "c.yaml").manifests, None, seed=1)
        return [(p.name, p.status, p.node, p.message) for p in result.pods]

    primed = outcome()
    monkeypatch.setattr(event_handlers.EventHandlers, "prime", lambda self, pods: None)
    assert outcome() == primed
    assert [s for _, s, _, _ in primed].count("Scheduled") == 6
    assert [s for n, s, _, _ in primed if n == "bad"] == ["Error"]
