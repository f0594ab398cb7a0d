"""Fixtures shared by several test modules.

``cluster`` / ``replicas``: an in-process ``kubesched serve`` (or the real cluster named by
``KUBESCHED_E2E_KUBECONFIG``) and the ``kubesched run`` subprocesses a test starts; see
tests/run_support.py.

Hypothesis runs without its per-example deadline: a property test asserts values, never time
(speed lives in ``kubesched bench``), and a deadline only fails a test on a busy machine."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

settings.register_profile("kubesched", deadline=None)
settings.load_profile("kubesched")


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Any]:
    from run_support import Cluster

    c = Cluster(tmp_path)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def replicas() -> Iterator[list[Any]]:
    started: list[Any] = []
    yield started
    for r in started:
        r.stop()
