"""``kubesched serve`` decodes a JSON request body to the value, and the error, of the bounded
standard loader (``load_json``), whichever decoder it takes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.yaml_limits import MAX_DEPTH, YAMLLimitError, load_json
from kubesched.embedded.apiserver.app import _load_json_body

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=5), kids, max_size=4),
    max_leaves=20,
)


def _same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN and types kept (1 is not 1.0)."""
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


@settings(max_examples=300, deadline=None)
@given(_JSON, st.booleans())
def test_the_same_value_as_the_standard_loader(value: Any, ascii_only: bool) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert _same(_load_json_body(raw), load_json(raw))


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": 1,',
        b"\xff{}",
        b'{"a": "\\ud800"}',
        b"\xef\xbb\xbf{}",
        b'{"a": 1, "a": 2}',
        b"",
    ],
)
def test_bad_or_odd_bodies_as_the_standard_loader(raw: bytes) -> None:
    try:
        want: Any = load_json(raw)
    except ValueError as e:
        with pytest.raises(type(e)) as got:
            _load_json_body(raw)
        assert str(got.value) == str(e)
        return
    assert _same(_load_json_body(raw), want)


def test_a_body_nested_past_the_limit_is_refused() -> None:
    raw = b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1)
    with pytest.raises(YAMLLimitError, match=f"exceeded max depth of {MAX_DEPTH}"):
        _load_json_body(raw)
