"""A third-party plugin found through the ``kubesched.plugins`` entry-point group is usable from a
config without any change to kubesched (uses the example package in examples/plugins/node-number)."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from kubesched.config.load import parse_config
from kubesched.embedded.manifests import Manifest
from kubesched.errors import ConfigError
from kubesched.framework import registry as registry_module
from kubesched.modes.simulate.run import run_simulation
from kubesched.testing import node_manifest, pod_manifest

EXAMPLE_PKG = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "node-number"


@pytest.fixture
def node_number_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE_PKG))
    ep = EntryPoint("NodeNumber", "kubesched_node_number:NodeNumber", registry_module.ENTRY_POINT_GROUP)

    def fake_entry_points(group: str) -> list[EntryPoint]:
        return [ep] if group == registry_module.ENTRY_POINT_GROUP else []

    monkeypatch.setattr(registry_module, "entry_points", fake_entry_points)
    yield
    sys.modules.pop("kubesched_node_number", None)


def _config(reverse: bool) -> dict:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {
                    "multiPoint": {"disabled": [{"name": "*"}]},
                    "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                    "preFilter": {"enabled": [{"name": "NodeResourcesFit"}]},
                    "filter": {"enabled": [{"name": "NodeResourcesFit"}]},
                    "preScore": {"enabled": [{"name": "NodeNumber"}]},
                    "score": {"enabled": [{"name": "NodeNumber", "weight": 2}]},
                    "bind": {"enabled": [{"name": "DefaultBinder"}]},
                },
                "pluginConfig": [{"name": "NodeNumber", "args": {"reverse": reverse}}],
            }
        ],
    }


def _manifests() -> list[Manifest]:
    objs = [node_manifest(f"node-{i}") for i in range(1, 4)] + [pod_manifest("pod-2", cpu="100m")]
    return [Manifest(o, "test.yaml", i + 1) for i, o in enumerate(objs)]


@pytest.mark.usefixtures("node_number_installed")
@pytest.mark.parametrize(("reverse", "expected"), [(False, {"node-2"}), (True, {"node-1", "node-3"})])
def test_entry_point_plugin_scores(reverse: bool, expected: set[str]) -> None:
    res = run_simulation(_manifests(), parse_config(_config(reverse)), seed=1)
    pod = res.pods[0]
    assert pod.status == "Scheduled" and pod.node in expected
    rec = pod.results[0].to_dict()
    assert rec["score"]["node-2"]["NodeNumber"] == (0 if reverse else 10)
    assert rec["finalScore"]["node-1"]["NodeNumber"] == (20 if reverse else 0)


def test_unknown_plugin_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match='plugin "NodeNumber" does not exist'):
        run_simulation(_manifests(), parse_config(_config(False)), seed=1)
