"""Tests for kubesched.embedded.patch (status merge) and kubesched.embedded.selector."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.embedded.patch import merge_status_patch, set_condition
from kubesched.embedded.selector import compile_selector


def test_merge_status_patch_nested_null_and_lists() -> None:
    status = {"phase": "Pending", "a": {"x": 1, "y": 2}, "ips": [{"ip": "1"}]}
    patch = {"a": {"x": None, "z": 3}, "ips": [{"ip": "2"}], "phase": "Running"}
    assert merge_status_patch(status, patch) == {
        "phase": "Running",
        "a": {"y": 2, "z": 3},
        "ips": [{"ip": "2"}],
    }
    assert status == {"phase": "Pending", "a": {"x": 1, "y": 2}, "ips": [{"ip": "1"}]}
    assert merge_status_patch(None, {"conditions": [{"type": "A", "status": "True", "reason": None}]}) == {
        "conditions": [{"type": "A", "status": "True"}]
    }
    assert merge_status_patch({"conditions": [{"type": "A"}]}, {"conditions": None}) == {}


def test_set_condition_keeps_transition_time_when_status_unchanged() -> None:
    old = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": "t0", "reason": "r"}]
    cond = {"type": "PodScheduled", "status": "True", "lastProbeTime": None}
    assert set_condition(old, cond, "t1") == [
        {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": "t0"}
    ]
    assert set_condition([], cond, "t1") == [{**cond, "lastTransitionTime": "t1"}]


@given(
    st.dictionaries(st.sampled_from("abc"), st.integers() | st.none(), max_size=3),
    st.dictionaries(st.sampled_from("abc"), st.integers() | st.none(), max_size=3),
)
def test_merge_patch_is_idempotent(status: dict[str, Any], patch: dict[str, Any]) -> None:
    once = merge_status_patch(status, patch)
    assert merge_status_patch(once, patch) == once


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("app=web", ["web", "web-prod"]),
        ("app==web,env=prod", ["web-prod"]),
        ("app!=web", ["db", "bare"]),
        ("env in (prod, dev)", ["web-prod", "db"]),
        ("env notin (prod)", ["web", "db", "bare"]),
        ("env", ["web-prod", "db"]),
        ("!env", ["web", "bare"]),
        ("", ["web", "web-prod", "db", "bare"]),
    ],
)
def test_selector(selector: str, expected: list[str]) -> None:
    objs = {
        "web": {"app": "web"},
        "web-prod": {"app": "web", "env": "prod"},
        "db": {"app": "db", "env": "dev"},
        "bare": {},
    }
    match = compile_selector(selector)
    assert [name for name, labels in objs.items() if match(labels)] == expected


def test_selector_parse_error() -> None:
    with pytest.raises(ValueError, match="invalid label selector 'a=b,c d': cannot parse 'c d'"):
        compile_selector("a=b,c d")
