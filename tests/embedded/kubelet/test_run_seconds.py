"""The ``kubesched.io/run-seconds`` annotation: written exactly (``kubesched load``), read alike by
``serve --kubelet``'s kubelets and by ``replay``."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.embedded.kubelet.live import RUN_SECONDS_ANNOTATION, parse_run_seconds, run_seconds_text
from kubesched.modes.replay.controllers import run_seconds


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (30, "30"),
        (30.0, "30"),
        (0.0, "0"),
        (1234567.5, "1234567.5"),  # 6 significant digits (``:g``) would give 1.23457e+06
        (12345.75, "12345.75"),
        (0.1, "0.1"),
        (1e-05, "1e-05"),
        (1e20, "100000000000000000000"),
    ],
)
def test_run_seconds_text_is_exact(seconds: float, text: str) -> None:
    assert run_seconds_text(seconds) == text


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [
        ("30", 30.0),
        ("1234567.5", 1234567.5),
        ("1.23457e+06", 1234570.0),  # what earlier versions of ``kubesched load`` wrote
        ("1e-05", 1e-05),
        ("0", 0.0),
        (45, 45.0),  # an unquoted number in a YAML manifest
        ("soon", None),
        ("", None),
        ("-1", None),
        ("nan", None),
        ("inf", None),
        (None, None),
        (True, None),
    ],
)
def test_parse_run_seconds(raw: object, seconds: float | None) -> None:
    assert parse_run_seconds(raw) == seconds


@given(st.floats(min_value=0, allow_nan=False, allow_infinity=False))
def test_written_run_seconds_read_back_as_the_same_float(seconds: float) -> None:
    text = run_seconds_text(seconds)
    assert parse_run_seconds(text) == seconds
    pod = {"metadata": {"annotations": {RUN_SECONDS_ANNOTATION: text}}}
    assert run_seconds(pod) == seconds  # replay's reader agrees
    assert math.isfinite(float(text))
