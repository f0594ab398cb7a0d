"""The JSON codec of the API client and ``kubesched serve``: the same values as the standard
library's ``json`` for every document it accepts, including what orjson refuses."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.client.json_codec import dumps, loads

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
_docs = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_docs)
def test_round_trips_and_reads_what_json_writes(doc: Any) -> None:
    assert loads(dumps(doc)) == doc
    assert loads(json.dumps(doc)) == json.loads(json.dumps(doc))
    assert json.loads(dumps(doc)) == doc


def test_integers_beyond_64_bits_stay_integers() -> None:
    assert loads(b'{"a": 123456789012345678901234567890, "b": [18446744073709551616]}') == {
        "a": 123456789012345678901234567890,
        "b": [18446744073709551616],
    }
    assert dumps({"a": 2**70}) == b'{"a":1180591620717411303424}'
    assert loads(b"18446744073709551615") == 18446744073709551615  # 64 bits: orjson's own range
    # 19 digits below int64: orjson would read a float
    assert loads(b"[-9223372036854775809, -9223372036854775808]") == [-9223372036854775809, -(2**63)]


def test_what_orjson_refuses_goes_through_json() -> None:
    assert math.isnan(loads(b'{"x": NaN}')["x"])
    assert dumps({1: "a"}) == b'{"1":"a"}'
    assert dumps({"n": "é"}) == '{"n":"é"}'.encode()  # UTF-8, as the API server writes it
    assert loads('{"s": "é"}') == {"s": "é"} and loads(bytearray(b"[1]")) == [1]


def test_what_is_not_json_raises_value_error() -> None:
    with pytest.raises(ValueError, match="Expecting property name"):
        loads(b"{bad")
    with pytest.raises(ValueError):
        loads(b"\xff\xfe")
