"""The recorder's shared status entries and its numpy score arrays (the batch Score path hands
its arrays over as they are; the recorder reads them into Python ints)."""

from __future__ import annotations

import numpy as np
import orjson

from kubesched.framework.recorder import CycleRecorder, status_dict
from kubesched.framework.status import Code, Status
from kubesched.testing import make_node, node_info


def test_status_dicts_shared_only_without_reasons() -> None:
    assert status_dict(None) == {"code": "Success", "reasons": []}
    assert status_dict(None) is status_dict(Status())
    skip = status_dict(Status(Code.Skip))
    assert skip == {"code": "Skip", "reasons": []}
    assert skip is status_dict(Status(Code.Skip))
    assert status_dict(Status(Code.Skip, "not relevant")) == {"code": "Skip", "reasons": ["not relevant"]}
    assert status_dict(Status(Code.Skip, err=ValueError("boom"))) == {"code": "Skip", "reasons": ["boom"]}
    assert status_dict(Status(Code.Success, "ok")) == {"code": "Success", "reasons": ["ok"]}
    assert status_dict(Status(Code.Unschedulable)) == {"code": "Unschedulable", "reasons": []}
    assert status_dict(Status(Code.Unschedulable)) is not status_dict(Status(Code.Unschedulable))


def test_scores_from_arrays_equal_scores_from_lists() -> None:
    nodes = [node_info(make_node(f"n{i}")) for i in range(3)]
    from_arrays, from_lists = CycleRecorder(), CycleRecorder()
    raw = np.array([7, 2**40, 0], dtype=np.int64)
    norm = np.array([100, 0, 55], dtype=np.int64)
    from_arrays.record_scores("P", nodes, raw)
    from_arrays.record_normalized_scores("P", nodes, norm, 2)
    from_lists.record_scores("P", nodes, [7, 2**40, 0])
    from_lists.record_normalized_scores("P", nodes, [100, 0, 55], 2)
    assert from_arrays.to_dict() == from_lists.to_dict()
    assert from_arrays.score == {"n0": {"P": 7}, "n1": {"P": 2**40}, "n2": {"P": 0}}
    assert from_arrays.final_score == {"n0": {"P": 200}, "n1": {"P": 0}, "n2": {"P": 110}}
    assert all(type(v) is int for per in from_arrays.final_score.values() for v in per.values())
    assert orjson.dumps(from_arrays.to_dict()) == orjson.dumps(from_lists.to_dict())
