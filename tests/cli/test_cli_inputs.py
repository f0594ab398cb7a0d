"""What simulate says about unusual inputs: an empty special file, a directory whose manifests are
all in subdirectories, a snapshot it wrote itself, ``--explain`` of a workload's pod, counts in the
summary line, YAML error positions. Each case asserts the exact lines and exit code."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import CLUSTER
from click.testing import CliRunner

from kubesched.cli.main import main


def _run(args: list[str], stdin: str | None = None) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, args, input=stdin)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.stdout, r.stderr


def test_an_empty_special_file_is_read_as_empty_input() -> None:
    code, out, err = _run(["simulate", "-f", "/dev/null"])
    assert (code, err) == (0, "warning: no objects found in /dev/null\n")
    assert out.splitlines()[-1] == "0 pods: none"
    # the same as an empty standard input
    assert _run(["simulate", "-f", "-"], stdin="")[:2] == (0, out)


def test_a_missing_file_is_still_refused(tmp_path: Path) -> None:
    code, out, err = _run(["simulate", "-f", str(tmp_path / "missing.yaml")])
    assert (code, err) == (2, f"error: {tmp_path / 'missing.yaml'}: no such file or directory\n")


def test_subdirectories_skipped_without_recursive_are_warned_about_once(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "cluster.yaml").write_text(Path(CLUSTER).read_text())
    (tmp_path / "a" / "b" / "more.yaml").write_text(
        "kind: Namespace\napiVersion: v1\nmetadata: {name: more}\n"
    )
    code, out, err = _run(["simulate", "-f", str(tmp_path)])
    assert (code, err.splitlines()) == (
        0,
        [
            f"warning: {tmp_path}: subdirectories skipped (-R/--recursive reads them)",
            f"warning: no objects found in {tmp_path}",
        ],
    )
    code, out, err = _run(["simulate", "-R", "-f", str(tmp_path)])
    assert code == 0 and "subdirectories skipped" not in err


def test_a_directory_without_subdirectories_is_not_warned_about(tmp_path: Path) -> None:
    (tmp_path / "cluster.yaml").write_text(Path(CLUSTER).read_text())
    (tmp_path / "empty").mkdir()
    code, out, err = _run(["simulate", "-f", str(tmp_path)])
    assert (code, err) == (0, "")


DAEMON_SET = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: a, image: busybox}]}
"""


def test_a_snapshot_simulate_wrote_loads_without_warnings(tmp_path: Path) -> None:
    """The DaemonSet's ControllerRevision is kept as an object (as kube-scheduler-simulator keeps
    every object), and reading it back neither warns nor makes a second revision."""
    (tmp_path / "ds.yaml").write_text(DAEMON_SET)
    snap, again = tmp_path / "snap.yaml", tmp_path / "again.yaml"
    code, out, err = _run(["simulate", "-f", str(tmp_path / "ds.yaml"), "--write-snapshot", str(snap)])
    assert code == 0 and snap.read_text().count("kind: ControllerRevision") == 1
    code, out, err = _run(["simulate", "-f", str(snap), "--write-snapshot", str(again)])
    assert (code, err) == (0, "")
    assert again.read_text().count("kind: ControllerRevision") == 1


def test_serve_loads_a_snapshot_simulate_wrote_without_warnings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ds.yaml").write_text(DAEMON_SET)
    snap = tmp_path / "snap.yaml"
    assert _run(["simulate", "-f", str(tmp_path / "ds.yaml"), "--write-snapshot", str(snap)])[0] == 0
    monkeypatch.setattr("kubesched.cli.serve.serve_forever", lambda handle: handle.stop())
    code, out, err = _run(["serve", "-f", str(snap), "--port", "0"])
    assert code == 0 and len(err.splitlines()) == 1, err
    assert err.startswith(
        "serving the embedded cluster (1 ControllerRevision, 1 DaemonSet, 4 Namespace, 1 Node, 1 Pod) at "
    )


DEPLOYMENT = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: a, image: nginx, resources: {requests: {cpu: "1"}}}]}
"""


def test_explain_names_a_pod_a_workload_created(tmp_path: Path) -> None:
    (tmp_path / "dep.yaml").write_text(DEPLOYMENT)
    code, out, err = _run(["simulate", "-f", str(tmp_path / "dep.yaml"), "-o", "name"])
    assert (code, out) == (0, "pod/web-6648c5c6d8-q7rcl\n")
    code, out, err = _run(
        ["simulate", "-f", str(tmp_path / "dep.yaml"), "--explain", "shop/web-6648c5c6d8-q7rcl"]
    )
    assert (code, err) == (0, "")
    assert out.splitlines()[:4] == [
        "POD                         NODE      STATUS      MESSAGE",
        "shop/web-6648c5c6d8-q7rcl   n1        Scheduled",
        "1 pod: 1 scheduled",
        "shop/web-6648c5c6d8-q7rcl — attempt 1: selected n1 — PreFilter",
    ]
    code, out, err = _run(["simulate", "-f", str(tmp_path / "dep.yaml"), "--explain", "shop/nope"])
    assert (code, err) == (
        2,
        "error: Invalid value for --explain: pod 'shop/nope' not found among the simulated pods\n",
    )


def test_explain_without_workloads_is_refused_before_the_run(tmp_path: Path) -> None:
    code, out, err = _run(["simulate", "-f", CLUSTER, "--explain", "shop/nope"])
    assert (code, out, err) == (
        2,
        "",
        "error: Invalid value for --explain: pod 'shop/nope' not found among the input's pods\n",
    )


def test_a_yaml_syntax_error_names_the_line_of_the_unclosed_brace(tmp_path: Path) -> None:
    """PyYAML notices an unclosed ``{`` at the next key (line 4); the line holding it (3) is named
    too, where kubectl says ``line 3``."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x\nspec:\n  containers: []\n")
    code, out, err = _run(["simulate", "-f", str(bad)])
    assert (code, out, err) == (
        2,
        "",
        f"error: {bad} doc 1: invalid YAML: did not find expected ',' or '}}' (line 4, column 5), "
        "while parsing a flow mapping started at line 3, column 11\n",
    )


SERVE_NODES = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: lots}}
"""

SERVE_PODS = """\
apiVersion: v1
kind: Pod
metadata: {name: good1}
spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: bad1}
spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: four}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: bad2}
spec: {containers: [{name: c, image: nginx, ports: [{containerPort: 99999999}]}]}
---
apiVersion: v1
kind: Pod
metadata: {name: good1}
spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: good2}
spec: {containers: [{name: c, image: nginx}]}
"""


def test_serve_reports_each_invalid_object_once_and_serves_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kubernetes import client as k8s

    nodes, pods = tmp_path / "nodes.yaml", tmp_path / "badpods.yaml"
    nodes.write_text(SERVE_NODES)
    pods.write_text(SERVE_PODS)
    served: dict[str, list[str]] = {}

    def listed(handle: object) -> None:
        api = k8s.ApiClient(k8s.Configuration(host=handle.url))  # type: ignore[attr-defined]
        core = k8s.CoreV1Api(api)
        served["pods"] = [p.metadata.name for p in core.list_namespaced_pod("default").items]
        served["nodes"] = [n.metadata.name for n in core.list_node().items]
        handle.stop()  # type: ignore[attr-defined]

    monkeypatch.setattr("kubesched.cli.serve.serve_forever", listed)
    code, out, err = _run(["serve", "-f", str(nodes), "-f", str(pods), "--port", "0"])
    lines = err.splitlines()
    assert (code, lines[:-1]) == (
        0,
        [
            f'error: not served: {nodes} doc 2 (Node n2): status.allocatable.cpu: invalid quantity "lots"',
            f"error: not served: {pods} doc 2 (Pod default/bad1): spec.containers[0].resources.requests.cpu: "
            'invalid quantity "four"',
            f"error: not served: {pods} doc 3 (Pod default/bad2): spec.containers[0].ports[0].containerPort: "
            "Invalid value: 99999999: must be between 1 and 65535, inclusive",
            f"error: not served: {pods} doc 4 (Pod default/good1): metadata.name: duplicate of {pods} doc 1 "
            "(Pod default/good1)",
        ],
    )
    assert lines[-1].startswith(
        "serving the embedded cluster (4 Namespace, 1 Node, 2 Pod) at http://127.0.0.1:"
    )
    assert served == {"pods": ["good1", "good2"], "nodes": ["n1"]}


def test_serve_still_refuses_a_file_that_does_not_parse(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Pod\nmetadata: {name: [\n")
    code, out, err = _run(["serve", "-f", str(bad), "--port", "0"])
    assert (code, err) == (
        2,
        f"error: {bad} doc 1: invalid YAML: did not find expected node content (line 3, column 1)\n",
    )
