"""One-line errors (exit 2) of ``run``, ``serve``, ``replay`` and ``bench``: bad kubeconfig
content, TLS certificate/key files, config files named in config errors, listen errors."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.serving.tls import self_signed_pem

TYPO_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      enabled: [{name: ImageLocalty}]
"""


def _invoke(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.output


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Path:
    from kubesched.embedded.apiserver import write_kubeconfig

    return write_kubeconfig(tmp_path / "kc", "http://127.0.0.1:1")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            "- a\n- b\n",
            "--kubeconfig: not a kubeconfig: expected a mapping with clusters, contexts and users, got a list",
        ),
        (
            "just text\n",
            "--kubeconfig: not a kubeconfig: expected a mapping with clusters, contexts and users, "
            "got a string",
        ),
        (
            "{",
            "--kubeconfig: invalid YAML (line 1, column 2): expected the node content, but found '<stream end>'",
        ),
        ("clusters: 3\n", "--kubeconfig: clusters: must be a list of {name, cluster} entries"),
        ("users: [{name: u, user: []}]\n", "--kubeconfig: users[0].user: must be a mapping"),
        ("", "--kubeconfig: the file is empty"),
    ],
)
def test_bad_kubeconfig_content(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "kc.yaml"
    path.write_text(content)
    code, out = _invoke("run", "--kubeconfig", str(path), "--secure-port", "0")
    assert (code, out) == (2, f"error: {path}: {message}\n")


def test_tls_file_errors_name_the_flags(tmp_path: Path, kubeconfig: Path) -> None:
    text = tmp_path / "hostname"
    text.write_text("myhost\n")
    cert, key = self_signed_pem("a")
    _, other_key = self_signed_pem("b")
    (tmp_path / "c.pem").write_bytes(cert)
    (tmp_path / "k.pem").write_bytes(key)
    (tmp_path / "k2.pem").write_bytes(other_key)
    base = ["run", "--kubeconfig", str(kubeconfig), "--leader-elect=false"]
    code, out = _invoke(*base, "--tls-cert-file", str(text), "--tls-private-key-file", str(text))
    assert (code, out) == (2, f"error: --tls-cert-file: {text}: no PEM certificate found\n")
    code, out = _invoke(
        *base, "--tls-cert-file", str(tmp_path / "c.pem"), "--tls-private-key-file", str(text)
    )
    assert (code, out) == (2, f"error: --tls-private-key-file: {text}: no PEM private key found\n")
    code, out = _invoke(
        *base, "--tls-cert-file", str(tmp_path / "c.pem"), "--tls-private-key-file", str(tmp_path / "k2.pem")
    )
    assert (code, out) == (
        2,
        f"error: --tls-private-key-file: {tmp_path / 'k2.pem'} does not match the certificate "
        f"of --tls-cert-file {tmp_path / 'c.pem'}\n",
    )
    code, out = _invoke(
        *base,
        "--tls-cert-file",
        str(tmp_path / "nope.pem"),
        "--tls-private-key-file",
        str(tmp_path / "k.pem"),
    )
    assert (code, out) == (
        2,
        f"error: --tls-cert-file: cannot read {tmp_path / 'nope.pem'}: No such file or directory\n",
    )


def test_run_config_errors_name_the_file(tmp_path: Path, kubeconfig: Path) -> None:
    cfg = tmp_path / "typo.yaml"
    cfg.write_text(TYPO_CONFIG)
    code, out = _invoke("run", "--kubeconfig", str(kubeconfig), "--config", str(cfg), "--secure-port", "0")
    assert (code, out) == (2, f'error: {cfg}: profiles[0].plugins: plugin "ImageLocalty" does not exist\n')


def test_replay_checks_configs_before_loading_the_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kubesched.trace.load as trace_input

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the trace was loaded before the config was checked")

    monkeypatch.setattr(trace_input, "load_workload", never)
    cfg = tmp_path / "typo.yaml"
    cfg.write_text(TYPO_CONFIG)
    trace = tmp_path / "trace.yaml"
    trace.write_text("nodes: []\npods: []\n")
    code, out = _invoke("replay", "--trace", str(trace), "--config", str(cfg), "--out", str(tmp_path / "out"))
    assert (code, out) == (2, f'error: {cfg}: profiles[0].plugins: plugin "ImageLocalty" does not exist\n')


def test_bench_config_errors_name_the_file(tmp_path: Path) -> None:
    cfg = tmp_path / "list.yaml"
    cfg.write_text("- {}\n")
    assert _invoke("bench", "--config", str(cfg)) == (2, f"error: {cfg}: [0].name: required\n")
    cfg.write_text("{}\n")
    assert _invoke("bench", "--config", str(cfg)) == (2, f"error: {cfg}: must be a list of test cases\n")


def test_serve_listen_error_is_one_line_exit_2() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        code, out = _invoke("serve", "--port", str(port))
    assert (code, out) == (
        2,
        f"error: cannot listen on 127.0.0.1:{port} (--address, --port): Address already in use\n",
    )
