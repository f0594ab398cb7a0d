"""The depth pre-check of ``check_yaml`` bounds flow nesting per document: a big multi-document
file of shallow flow mappings is not scanned, a deep document among shallow ones still is."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api import yaml_limits
from kubesched.api.yaml_limits import MAX_DEPTH, YAMLLimitError, check_yaml


def _flow(depth: int) -> str:
    return "a: " + "[" * depth + "x" + "]" * depth + "\n"


def test_many_shallow_documents_are_not_scanned(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "---\n".join(f"kind: Pod\nmetadata: {{name: p{i}, labels: {{app: a}}}}\n" for i in range(2000))
    assert not yaml_limits._may_be_deep(text)

    def boom(t: object) -> None:
        raise AssertionError("scanned")

    monkeypatch.setattr(yaml_limits, "_scan", boom)
    check_yaml(text)


def test_a_deep_document_among_shallow_ones_is_refused() -> None:
    text = "---\n".join([_flow(3)] * 50 + [_flow(MAX_DEPTH + 5)] + [_flow(3)] * 50)
    assert yaml_limits._may_be_deep(text)
    with pytest.raises(YAMLLimitError, match=f"exceeded max depth of {MAX_DEPTH}") as e:
        check_yaml(text)
    assert e.value.document == 51


def test_dashes_that_are_not_a_marker_do_not_split() -> None:
    deep = "a: " + "[" * 40 + "\n----\n" + "[" * 40 + "x" + "]" * 80 + "\n"
    assert yaml_limits._may_be_deep(deep)


@settings(max_examples=60, deadline=None)
@given(depths=st.lists(st.integers(0, 100), min_size=1, max_size=8))
def test_not_deep_means_within_the_limit(depths: list[int]) -> None:
    text = "---\n".join(_flow(d) for d in depths)
    if not yaml_limits._may_be_deep(text):
        assert max(depths) + 1 <= MAX_DEPTH
