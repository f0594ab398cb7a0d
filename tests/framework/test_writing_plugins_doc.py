"""docs/writing-plugins.md is complete: its plugin, copied from the page as it is, builds, is
registered like a third-party plugin, and schedules with exact outcomes through the profile the
page shows."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest
import yaml

from kubesched.config.load import parse_config
from kubesched.embedded.manifests import Manifest
from kubesched.errors import ConfigError
from kubesched.framework import Registry
from kubesched.modes.simulate.run import run_simulation
from kubesched.plugins import in_tree_registry

DOC = Path(__file__).resolve().parents[2] / "docs" / "writing-plugins.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), flags=re.S)


@pytest.fixture
def doc_module(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType("writing_plugins_doc")
    monkeypatch.setitem(sys.modules, module.__name__, module)  # dataclasses look their module up
    exec(compile(_blocks("python")[0], str(DOC), "exec"), module.__dict__)  # noqa: S102 - the page's own code
    return module


def _node(name: str, tier: str, cpu: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"example.com/tier": tier}},
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}},
    }


def _pod(name: str, annotations: dict[str, str] | None = None) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "annotations": annotations or {}},
        "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "500m"}}}]},
    }


def test_the_page_plugin_schedules_through_the_page_profile(doc_module: types.ModuleType) -> None:
    registry = in_tree_registry()
    doc_module.register(registry)
    assert isinstance(registry, Registry)
    config = parse_config(yaml.safe_load(_blocks("yaml")[0]))
    objs = [
        _node("batch-big", "batch", "64"),
        _node("web-small", "web", "2"),
        _node("web-large", "web", "8"),
        _pod("p1"),
        _pod("anywhere", {"example.com/any-tier": "true"}),
    ]
    manifests = [Manifest(o, "t.yaml", i + 1) for i, o in enumerate(objs)]
    res = run_simulation(manifests, config, seed=1, record=True, registry=registry)
    pods = {p.name: p for p in res.pods}
    assert pods["p1"].node == "web-large"  # batch is forbidden; most free CPU among the rest
    assert pods["anywhere"].node == "batch-big"  # the annotation lifts the restriction
    (attempt,) = pods["p1"].results
    d = attempt.to_dict()
    assert d["filter"]["batch-big"]["TierPreference"] == {
        "code": "UnschedulableAndUnresolvable",
        "reasons": ["node(s) are in a forbidden tier"],
    }
    assert d["normalizedScore"]["web-large"]["TierPreference"] == 100
    assert (
        d["normalizedScore"]["web-small"]["TierPreference"] == 1500 * 100 // 7500
    )  # free millicores, scaled


def test_bad_args_name_the_field(doc_module: types.ModuleType) -> None:
    registry = in_tree_registry()
    doc_module.register(registry)
    doc = yaml.safe_load(_blocks("yaml")[0])
    doc["profiles"][0]["pluginConfig"][0]["args"] = {"forbiddenTier": ["batch"]}
    with pytest.raises(ConfigError, match=r"profiles\[0\]\.pluginConfig\[0\]\.args\.forbiddenTier"):
        run_simulation([], parse_config(doc), registry=registry)
