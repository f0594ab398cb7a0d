"""Compact entries share the parts that attempts repeat (one object per distinct JSON text), and
the document is the same with sharing as without it, byte for byte."""

from __future__ import annotations

import json

import pytest

from kubesched.embedded.manifests import Manifest
from kubesched.modes.bench.simulate_fixture import spreading_cluster
from kubesched.modes.simulate import compact as compact_mod
from kubesched.modes.simulate.compact import CompactAttempt, CompactRecords
from kubesched.modes.simulate.report import iter_result_json
from kubesched.modes.simulate.run import run_simulation
from kubesched.testing import pod_manifest


def _manifests() -> list[Manifest]:
    objs = list(spreading_cluster(9, 60, apps=3, spread_every=2))
    objs.append(pod_manifest("too-big", cpu="64"))  # unschedulable: a postFilter status of its own
    return [Manifest(o, "fixture", i) for i, o in enumerate(objs, 1)]


def test_parts_shared_and_document_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    res = run_simulation(_manifests(), None, seed=5, compact=True)
    entries = [p.results[-1] for p in res.pods if p.results]
    assert len(entries) == 61 and all(isinstance(e, CompactAttempt) for e in entries)
    # the scheduled pods of one shape share one head; every head part is one object per text
    heads = {id(e.head) for e in entries}
    assert len(heads) < 5
    by_text: dict[bytes, int] = {}
    for e in entries:
        for part in e.head:
            assert by_text.setdefault(json.dumps(part).encode(), id(part)) == id(part)
    assert len({id(e.names) for e in entries}) == len({e.names for e in entries})
    shared = b"".join(iter_result_json(res))
    monkeypatch.setattr(compact_mod, "MAX_SHARED_PARTS", 0)
    unshared_res = run_simulation(_manifests(), None, seed=5, compact=True)
    assert len({id(p.results[-1].head) for p in unshared_res.pods if p.results}) == 61
    assert b"".join(iter_result_json(unshared_res)) == shared
    doc = json.loads(shared)
    too_big = next(p for p in doc["pods"] if p["name"] == "too-big")
    assert too_big["status"] == "Unschedulable"
    assert too_big["lastAttempt"]["filterRejections"] == {"NodeResourcesFit": {"Insufficient cpu": 9}}
    assert too_big["lastAttempt"]["nodesFeasible"] == 0


def test_share_keeps_what_orjson_cannot_encode() -> None:
    records = CompactRecords()
    big = {"x": 2**70}
    assert records._share(big) == (big, False)
    a, b = {"k": [1, 2]}, {"k": [1, 2]}
    assert records._share(a) == (a, True)
    got, ok = records._share(b)
    assert got is a and ok
    # key order is part of the text: not the same part
    c = {"y": 1, "x": 2}
    d = {"x": 2, "y": 1}
    assert records._share(c)[0] is c and records._share(d)[0] is d


def test_to_dict_rebuilds_the_entry() -> None:
    head = tuple({"P": {"code": "Success", "reasons": []}} for _ in compact_mod._AS_IS)
    entry = CompactAttempt(head, 5, 4, {"F": {"no": 1}}, "n1", ("A", "B"), (1, 2, 4, 9, None, None))
    assert entry.to_dict() == {
        "preFilter": head[0],
        "postFilter": head[1],
        "preScore": head[2],
        "reserve": head[3],
        "permit": head[4],
        "preBind": head[5],
        "bind": head[6],
        "nodesFiltered": 5,
        "nodesFeasible": 4,
        "filterRejections": {"F": {"no": 1}},
        "selectedNode": "n1",
        "selectedNodeScores": {
            "A": {"score": 1, "normalizedScore": 2, "finalScore": 4},
            "B": {"score": 9, "normalizedScore": None, "finalScore": None},
        },
    }
    assert list(entry.to_dict()) == [*compact_mod._AS_IS, *list(entry.to_dict())[7:]]
