"""docs/python-api.md is a notebook session: every example in it runs and prints what it shows."""

from __future__ import annotations

import doctest
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def test_python_api_doc_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pandas")
    monkeypatch.chdir(ROOT)
    result = doctest.testfile(
        str(ROOT / "docs" / "python-api.md"),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        verbose=False,
    )
    assert result.attempted >= 15
    assert result.failed == 0, (
        f"{result.failed} example(s) of docs/python-api.md failed (see the output above)"
    )
    assert os.getcwd() == str(ROOT)
