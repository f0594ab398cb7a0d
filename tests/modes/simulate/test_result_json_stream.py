"""``simulate -o json`` is streamed pod by pod (orjson per pod) and stays byte-identical to
``json.dump(result_dict(res), indent=2)``: per value (hypothesis: text with non-ASCII and control
characters, integers beyond 64 bits, nesting) and per document (example cluster, no pods, full detail)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubesched.embedded.manifests import Manifest, load_manifests
from kubesched.modes.simulate.report import _indented, iter_result_json, result_dict
from kubesched.modes.simulate.run import run_simulation
from kubesched.testing import node_manifest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "cluster.yaml"

values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(obj=values, prefix=st.sampled_from([b"", b"    "]))
@example(obj={"\x7f": None}, prefix=b"")  # DEL: ASCII, but json escapes it
def test_indented_equals_json_dumps(obj: Any, prefix: bytes) -> None:
    want = json.dumps(obj, indent=2).replace("\n", "\n" + prefix.decode()).encode()
    assert _indented(obj, prefix) == want


def _doc(res: Any) -> bytes:
    return b"".join(iter_result_json(res))


def test_documents_equal_json_dump() -> None:
    manifests = load_manifests([str(EXAMPLE)]).manifests
    for compact in (True, False):
        res = run_simulation(manifests, None, seed=1, compact=compact)
        assert _doc(res) == json.dumps(result_dict(res), indent=2).encode()
    empty = run_simulation([Manifest(node_manifest("n1"), "x", 1)], None, seed=None, compact=True)
    assert _doc(empty) == json.dumps(result_dict(empty), indent=2).encode()
    assert _doc(empty).endswith(b'"detail": "compact",\n  "pods": []\n}')
