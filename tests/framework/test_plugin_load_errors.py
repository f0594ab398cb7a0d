"""A third-party plugin that cannot be imported or built fails as one error line naming the plugin
and its entry point, never as a traceback."""

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

GROUP = registry_module.ENTRY_POINT_GROUP


def _with_entry_point(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, module_text: str) -> None:
    (tmp_path / "brokenplugin.py").write_text(module_text)
    monkeypatch.syspath_prepend(str(tmp_path))
    ep = EntryPoint("Broken", "brokenplugin:Broken", GROUP)
    monkeypatch.setattr(registry_module, "entry_points", lambda group: [ep] if group == GROUP else [])
    monkeypatch.delitem(sys.modules, "brokenplugin", raising=False)


def _simulate() -> None:
    cfg = parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {"filter": {"enabled": [{"name": "Broken"}]}},
                }
            ],
        }
    )
    objs = [node_manifest("n1"), pod_manifest("p1", cpu="100m")]
    run_simulation([Manifest(o, "t.yaml", i + 1) for i, o in enumerate(objs)], cfg, seed=1)


def test_import_failure_names_plugin_and_entry_point(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _with_entry_point(monkeypatch, tmp_path, "import no_such_dependency_xyz\n")
    with pytest.raises(ConfigError) as e:
        _simulate()
    assert str(e.value) == (
        "profiles[0].plugins: plugin 'Broken' (entry point Broken = 'brokenplugin:Broken' "
        "in group kubesched.plugins): cannot import brokenplugin: No module named 'no_such_dependency_xyz'"
    )


def test_missing_class_and_non_plugin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _with_entry_point(monkeypatch, tmp_path, "class Other: pass\n")
    with pytest.raises(ConfigError) as e:
        _simulate()
    assert str(e.value).endswith("in group kubesched.plugins): module brokenplugin has no attribute 'Broken'")
    _with_entry_point(monkeypatch, tmp_path, "class Broken: pass\n")
    with pytest.raises(ConfigError) as e:
        _simulate()
    assert str(e.value).endswith(
        "brokenplugin:Broken is not a kubesched plugin class (derive it from "
        "kubesched.framework.Plugin and an extension-point interface)"
    )


def test_constructor_failure_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _with_entry_point(
        monkeypatch,
        tmp_path,
        """
from kubesched.framework.interfaces import FilterPlugin, Plugin

class Broken(Plugin, FilterPlugin):
    NAME = "Broken"

    def __init__(self, args=None, handle=None):
        raise KeyError("needs-a-setting")

    def filter(self, state, pod, node_info):
        return None
""",
    )
    with pytest.raises(ConfigError) as e:
        _simulate()
    assert (
        str(e.value) == "profiles[0].pluginConfig: initializing plugin 'Broken': KeyError: 'needs-a-setting'"
    )
