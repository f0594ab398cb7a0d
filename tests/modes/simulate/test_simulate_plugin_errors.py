"""An error only a plugin finds is reported once, at the file, document and object the pod came
from (a workload's pod: at its workload), and every other pod is still scheduled."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.api.pod import Pod
from kubesched.api.quantity import QuantityError, value
from kubesched.cli.main import main
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import PreFilterPlugin, PreFilterResult
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.registry import Registry
from kubesched.framework.status import Status
from kubesched.plugins import IN_TREE

ANNOTATION = "example.com/scratch"


class Scratch(PreFilterPlugin):
    """An out-of-tree plugin reading a quantity from an annotation no load check knows of."""

    NAME = "Scratch"

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        raw = pod.annotations.get(ANNOTATION)
        if raw is not None:
            try:
                value(raw)
            except QuantityError as e:
                return None, Status.as_status(ValueError(f"metadata.annotations[{ANNOTATION}]: {e}"))
        return None, None


NODE = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
POD = """apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: shop, annotations: {example.com/scratch: "%s"}}
spec:
  containers: [{name: c, image: nginx}]
"""
CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    preFilter:
      enabled: [{name: Scratch}]
"""


@pytest.fixture(autouse=True)
def scratch_plugin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``Scratch`` installed as a third-party plugin would be (beside the in-tree ones)."""

    def registry() -> Registry:
        r = Registry(IN_TREE, load_entry_points=False)
        r.register(Scratch)
        return r

    monkeypatch.setattr("kubesched.scheduler.factory.in_tree_registry", registry)
    yield


def _simulate(tmp_path: Path, text: str) -> tuple[Path, int, str, str]:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(text)
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    r = CliRunner().invoke(
        main, ["simulate", "-f", str(cluster), "--config", str(config), "--seed", "1"], catch_exceptions=False
    )
    return cluster, r.exit_code, r.stdout, r.stderr


def test_a_pod_a_plugin_fails_on_is_reported_once_with_its_file(tmp_path: Path) -> None:
    text = "---\n".join([NODE, POD % ("first", "1Gi"), POD % ("odd", "big"), POD % ("last", "2Gi")])
    f, code, out, err = _simulate(tmp_path, text)
    line = (
        f'{f} doc 3 (Pod shop/odd): running PreFilter plugin "Scratch": '
        f'metadata.annotations[{ANNOTATION}]: invalid quantity "big"'
    )
    assert code == 1
    assert out.splitlines() == [
        "POD          NODE        STATUS      MESSAGE",
        "shop/first   n1          Scheduled",
        f"shop/odd     <pending>   Error       {line}",
        "shop/last    n1          Scheduled",
        "3 pods: 2 scheduled, 1 error",
    ]
    assert err.splitlines() == ["error: 1 pod(s) ended in Error:", f"  {line}"]


def test_a_workload_pod_a_plugin_fails_on_names_its_workload(tmp_path: Path) -> None:
    deploy = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {example.com/scratch: "lots"}}
    spec:
      containers: [{name: c, image: nginx}]
"""
    f, code, out, err = _simulate(tmp_path, "---\n".join([NODE, POD % ("ok", "1"), deploy]))
    rows = out.splitlines()
    assert code == 1
    assert rows[1] == "shop/ok                    n1          Scheduled"
    pod = rows[2].split()[0]
    assert pod.startswith("shop/web-")
    assert err.splitlines() == [
        "error: 1 pod(s) ended in Error:",
        f'  {f} doc 3 ({"Pod " + pod} of Deployment shop/web): running PreFilter plugin "Scratch": '
        f'metadata.annotations[{ANNOTATION}]: invalid quantity "lots"',
    ]
