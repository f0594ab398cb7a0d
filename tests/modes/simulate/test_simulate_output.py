"""``kubesched simulate`` output as kubectl users expect it: plain columns that never truncate,
``-o wide|name``, ``--no-headers``, plain YAML, ``-f -``, unknown-field warnings and exit codes."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from kubesched.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "cluster.yaml"
LONG = "a-node-name-that-is-much-longer-than-any-terminal-column-would-allow-0001"


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args), input=stdin, catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def _long_names(tmp_path: Path) -> str:
    text = EXAMPLE.read_text().replace("node-a1", LONG)
    p = tmp_path / "long.yaml"
    p.write_text(text)
    return str(p)


def test_piped_table_is_plain_columns_and_never_truncates(tmp_path: Path) -> None:
    code, out, err = run("simulate", "-f", _long_names(tmp_path), "--seed", "7")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["POD", "NODE", "STATUS", "MESSAGE"]
    assert lines[1] == f"shop/web-1             {LONG}   Scheduled"
    assert not any(ch in out for ch in "│┃━─…")
    assert lines[-1] == "6 pods: 3 scheduled, 1 unschedulable, 1 gated, 1 ignored"


def test_no_headers_and_wide() -> None:
    code, out, _ = run("simulate", "-f", str(EXAMPLE), "--seed", "7", "-o", "wide", "--no-headers")
    assert code == 0
    rows = [line.split(None, 6) for line in out.splitlines()]
    assert len(rows) == 6
    assert rows[0] == ["shop/web-1", "node-a1", "Scheduled", "default-scheduler", "0", "<none>"]
    assert rows[5][:6] == ["shop/other-scheduler", "<pending>", "Ignored", "<none>", "0", "<none>"]
    assert rows[5][6] == 'no profile for schedulerName "my-scheduler"'


def test_output_name() -> None:
    code, out, _ = run("simulate", "-f", str(EXAMPLE), "-o", "name")
    assert code == 0
    assert out.splitlines() == [
        "pod/web-1",
        "pod/web-2",
        "pod/trainer-0",
        "pod/batch-big",
        "pod/gated-1",
        "pod/other-scheduler",
    ]


def test_yaml_output_has_no_anchors() -> None:
    code, out, _ = run("simulate", "-f", str(EXAMPLE), "--seed", "7", "-o", "yaml")
    assert code == 0
    assert "&id" not in out and "*id" not in out
    doc = yaml.safe_load(out)
    assert doc["kind"] == "SimulationResult" and len(doc["pods"]) == 6


def test_explain_piped_is_plain_and_whole(tmp_path: Path) -> None:
    code, out, _ = run("simulate", "-f", _long_names(tmp_path), "--seed", "7", "--explain", "shop/web-1")
    assert code == 0
    assert "shop/web-1 — attempt 1: selected " + LONG + " — Filter" in out
    filter_header = next(
        line for line in out.splitlines() if line.startswith("NODE") and "TaintToleration" in line
    )
    assert "NodeResourcesFit" in filter_header and "…" not in filter_header
    assert any(line.startswith(LONG + "   ") for line in out.splitlines())


def test_stdin_manifests() -> None:
    code, out, err = run("simulate", "-f", "-", "-o", "name", stdin=EXAMPLE.read_text())
    assert code == 0, err
    assert out.splitlines()[0] == "pod/web-1"


def test_unknown_fields_warn_and_strict_fails() -> None:
    text = EXAMPLE.read_text().replace("nodeSelector:", "nodeSelecter:", 1)
    code, _, err = run("simulate", "-f", "-", "-o", "name", stdin=text)
    assert code == 0
    assert err.splitlines() == ['warning: STDIN doc 9 (Pod shop/web-2): unknown field "spec.nodeSelecter"']
    code, out, err = run("simulate", "-f", "-", "--strict", stdin=text)
    assert code == 2 and out == ""
    assert err.strip() == 'error: STDIN doc 9 (Pod shop/web-2): unknown field "spec.nodeSelecter"'


def test_pod_errors_exit_1_and_name_file_and_document(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        EXAMPLE.read_text()
        + """---
apiVersion: v1
kind: Pod
metadata: {name: broken, namespace: shop}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1.5.0"}}}]
"""
    )
    code, out, err = run("simulate", "-f", str(bad), "--seed", "7")
    assert code == 1
    assert "shop/broken" in out
    assert err.splitlines()[-2:] == [
        "error: 1 pod(s) ended in Error:",
        f'  {bad} doc 14 (Pod shop/broken): spec.containers[0].resources.requests.cpu: invalid quantity "1.5.0"',
    ]


def test_plugin_class_may_list_plugin_first() -> None:
    from kubesched.framework.interfaces import FilterPlugin, Plugin, ScorePlugin

    class Both(Plugin, FilterPlugin, ScorePlugin):
        NAME = "Both"

        def filter(self, state, pod, node_info):  # type: ignore[no-untyped-def]
            return None

        def score(self, state, pod, node_info):  # type: ignore[no-untyped-def]
            return 7, None

    assert Both.__mro__ == (Both, FilterPlugin, ScorePlugin, Plugin, object)
    assert Both(None, None).score(None, None, None) == (7, None)


def test_explain_of_an_unknown_pod_is_refused_before_the_run() -> None:
    code, out, err = run("simulate", "-f", str(EXAMPLE), "--explain", "shop/nosuch")
    assert code == 2 and out == ""
    assert "pod 'shop/nosuch' not found among the input's pods" in err


def test_pod_errors_are_reported_once() -> None:
    text = (
        EXAMPLE.read_text()
        + """---
apiVersion: v1
kind: Pod
metadata: {name: bad, namespace: shop}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "lots"}}}]
"""
    )
    # a subprocess: pytest's own log handler would hide Python's last-resort stderr lines
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "kubesched.cli.main", "simulate", "-f", "-", "-o", "name"],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    code, err = done.returncode, done.stderr
    assert code == 1
    assert [line for line in err.splitlines() if "spec.containers[0].resources.requests.cpu" in line] == [
        '  STDIN doc 14 (Pod shop/bad): spec.containers[0].resources.requests.cpu: invalid quantity "lots"'
    ]
