"""Every command, every option that takes a path, a port or a file: bad paths, busy ports and
malformed files each end in one ``error:`` line naming the flag or the file, exit 2, no traceback.

The commands and options are found by walking the click command tree, so a new command or option
is swept without being listed here. What a new command must provide is in ``BASE``
(tests/cli_support.py): the
arguments that make it otherwise valid (so that the option under test is what fails). A command
missing from it fails :func:`test_every_command_has_base_arguments`. Options a command reads only
after it connects somewhere are listed in :data:`NOT_READ_BEFORE_CONNECTING` with the reason.

In-process (click's CliRunner); the servers' blocking calls are replaced by a function that fails
the test, so a bad input that is not refused cannot hang the sweep. The interrupt cases (signals)
run subprocesses in test_cli_interrupts.py.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import click
import pytest
from cli_support import BASE, base_args, commands, make_inputs
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.cli.paths import OutputDir, OutputFile

#: (command, option) -> the base arguments instead of :data:`BASE` when that option is swept (the
#: option replaces one of the base arguments that excludes it).
OPTION_BASE: dict[tuple[str, str], list[str]] = {
    ("images calibrate", "--kubeconfig"): [],
    ("ui", "--kubeconfig"): ["--port", "0"],
    ("bench", "--baseline-tree"): ["--simulate", "SimulateSpreading/200Nodes_2000Pods"],
}

#: (command, option) -> why the sweep does not feed it a malformed file: the file is read only
#: after the command has connected to a server (covered by the tests of that server's mode).
NOT_READ_BEFORE_CONNECTING: dict[tuple[str, str], str] = {
    ("run", "--tls-cert-file"): "read when run starts serving (tests/modes/run/test_run_secure_port.py)",
    (
        "run",
        "--tls-private-key-file",
    ): "read when run starts serving (tests/modes/run/test_run_secure_port.py)",
    ("run", "--authentication-kubeconfig"): "delegation, read when serving (tests/serving)",
    ("run", "--authorization-kubeconfig"): "delegation, read when serving (tests/serving)",
    ("run", "--client-ca-file"): "delegation, read when serving (tests/serving)",
    ("run", "--requestheader-client-ca-file"): "delegation, read when serving (tests/serving)",
    ("run", "--prepull-catalogue"): "read with the pre-pull planner, after the client is built",
    ("run", "--prepull-registry-settings"): "read with the pre-pull planner, after the client is built",
    ("images layers", "--registry-settings"): "the only input of a registry request",
    ("images calibrate", "--registry-settings"): "read only for images missing from the catalogue",
    (
        "images estimate",
        "--registry-settings",
    ): "read only when the registry is asked (not with --no-registry)",
    ("ui", "--tls-cert-file"): "needs --tls-private-key-file; covered with it in tests/ui",
    ("ui", "--tls-private-key-file"): "needs --tls-cert-file; covered with it in tests/ui",
    ("serve", "--kubelet-config"): "needs --kubelet (a usage error without it, swept as such)",
    ("serve", "--images"): "needs --kubelet (a usage error without it, swept as such)",
    ("images calibrate", "--events"): "any text is accepted: lines without a kubelet message are skipped",
}

#: case -> (file name, content) of the malformed inputs
FILES: dict[str, tuple[str, bytes]] = {
    "malformed": ("bad.yaml", b"a: [1\nb: 2\n"),
    "json": ("bad.json", b'{"a": [1,\n'),
    "wrong-type": ("list.yaml", b"- 1\n- 2\n"),
    "binary": ("binary.yaml", b"\xff\xfe\x00junk"),
}


def _flag(p: click.Parameter) -> str:
    return max(p.opts, key=len)


def _options(kind: str) -> list[tuple[str, str]]:
    """(command, flag) of every option of ``kind``: output (OutputFile/OutputDir), input (a
    click.Path that must be a file), port."""
    out = []
    for path, cmd in commands():
        for p in cmd.params:
            if not isinstance(p, click.Option):
                continue
            t = p.type
            if kind == "output" and isinstance(t, OutputFile | OutputDir):
                out.append((path, _flag(p)))
            elif kind == "input" and isinstance(t, click.Path) and not isinstance(t, OutputFile):
                out.append((path, _flag(p)))
            elif kind == "port" and p.name is not None and p.name.endswith("port"):
                out.append((path, _flag(p)))
    return out


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Files the base arguments name; the servers' blocking calls fail the test if reached."""

    def reached(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the command started serving instead of refusing its input")

    monkeypatch.setattr("kubesched.cli.serve.serve_forever", reached)
    monkeypatch.setattr("kubesched.ui.server.UiServer.serve_forever", reached)
    monkeypatch.setattr("kubesched.scheduler.core.Scheduler.start", reached)
    return make_inputs(tmp_path)


def _base(command: str, env: dict[str, str], flag: str = "") -> list[str]:
    return base_args(command, env, OPTION_BASE, flag)


def _invoke(args: list[str]) -> tuple[int, str]:
    r = CliRunner().invoke(main, args)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.output


def _assert_one_line(code: int, out: str, *needles: str) -> None:
    assert "Traceback" not in out, out
    lines = out.strip().splitlines()
    assert code == 2, out
    assert len(lines) == 1 and lines[0].startswith("error: "), out
    for n in needles:
        assert n in lines[0], (n, out)


def test_every_command_has_base_arguments() -> None:
    found = {path for path, _ in commands()}
    assert sorted(found - set(BASE)) == [], (
        "add the new command's valid arguments to BASE (tests/cli_support.py)"
    )
    assert sorted(set(BASE) - found) == []


def test_the_sweep_finds_the_options() -> None:
    """The walk sees the options the issue of each kind is about (a guard against a walk that
    silently finds nothing)."""
    assert {
        ("replay", "--out"),
        ("bench", "--output"),
        ("serve", "--write-kubeconfig"),
        ("startup", "--out"),
        ("snapshot", "--output"),
        ("simulate", "--write-snapshot"),
        ("trace snapshot", "--output"),
        ("images calibrate", "--output"),
        ("run", "--write-config-to"),
    } <= set(_options("output"))
    assert {
        ("bench", "--config"),
        ("replay", "--kubelet"),
        ("images estimate", "--kubelet"),
        ("replay", "--config"),
    } <= set(_options("input"))
    assert {("serve", "--port"), ("ui", "--port"), ("run", "--secure-port"), ("run", "--port")} <= set(
        _options("port")
    )


@pytest.mark.parametrize(("command", "flag"), _options("output"))
@pytest.mark.parametrize("case", ["under-a-file", "a-directory-or-file", "missing-parent"])
def test_bad_output_paths(env: dict[str, str], command: str, flag: str, case: str) -> None:
    tmp = Path(env["tmp"])
    is_dir = any(
        isinstance(p.type, OutputDir)
        for _, cmd in commands()
        for p in cmd.params
        if isinstance(p, click.Option) and _flag(p) == flag and _command_of(cmd) == command
    )
    if case == "under-a-file":
        bad, problem = tmp / "afile" / "x", f"{tmp / 'afile'} is a file, not a directory"
    elif case == "a-directory-or-file":
        bad, problem = (tmp / "afile", "is a file, not a directory") if is_dir else (tmp, "is a directory")
    else:
        if is_dir:
            pytest.skip("missing parent directories are created")
        bad, problem = tmp / "no" / "x", f"directory {tmp / 'no'} does not exist"
    code, out = _invoke(command.split() + _base(command, env, flag) + [flag, str(bad)])
    _assert_one_line(code, out, f"error: {flag} {bad}: {problem}")


def _command_of(target: click.Command) -> str:
    return next(path for path, cmd in commands() if cmd is target)


@pytest.mark.parametrize(
    ("command", "flag"), [c for c in _options("input") if c not in NOT_READ_BEFORE_CONNECTING]
)
@pytest.mark.parametrize("case", ["malformed", "json", "wrong-type", "binary", "missing", "directory"])
def test_bad_input_files(env: dict[str, str], command: str, flag: str, case: str) -> None:
    """Malformed YAML, malformed JSON, a document of the wrong type (a list of numbers), bytes that
    are not UTF-8, a missing file and a directory (of junk, for options that take directories)."""
    tmp = Path(env["tmp"])
    if case in FILES:
        name, content = FILES[case]
        bad = tmp / name
        bad.write_bytes(content)
    elif case == "missing":
        bad = tmp / "missing.yaml"
    else:
        bad = tmp
    code, out = _invoke(command.split() + _base(command, env, flag) + [flag, str(bad)])
    _assert_one_line(code, out, str(bad) if case != "directory" else str(tmp))


@pytest.mark.parametrize(("command", "flag"), _options("port"))
def test_busy_ports(env: dict[str, str], command: str, flag: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        code, out = _invoke(command.split() + _base(command, env) + [flag, str(port)])
    address_flag = "--bind-address" if command == "run" else "--address"
    _assert_one_line(
        code,
        out,
        f"error: cannot listen on 127.0.0.1:{port} ({address_flag}, {flag}): Address already in use",
    )


def _float_options() -> list[tuple[str, str]]:
    """(command, flag) of every option whose type is a float (FiniteFloat, FloatRange, click.FLOAT)
    or a duration."""
    from kubesched.cli.units import Seconds

    return [
        (path, _flag(p))
        for path, cmd in commands()
        for p in cmd.params
        if isinstance(p, click.Option)
        and isinstance(p.type, click.types.FloatParamType | click.FloatRange | Seconds)
    ]


def test_the_sweep_finds_the_float_options() -> None:
    from kubesched.cli.units import FiniteFloat

    floats = _float_options()
    assert {
        ("serve", "--speed"),
        ("serve", "--bookmark-interval"),
        ("replay", "--arrival-scale"),
        ("replay", "--attempt-seconds"),
        ("replay", "--zipf-s"),
        ("run", "--kube-api-qps"),
    } <= set(floats)
    plain = [
        (path, _flag(p))
        for path, cmd in commands()
        for p in cmd.params
        if isinstance(p, click.Option)
        and isinstance(p.type, click.types.FloatParamType)
        and not isinstance(p.type, FiniteFloat)
    ]
    assert plain == [], "every float flag uses kubesched.cli.units.FiniteFloat"


@pytest.mark.parametrize(("command", "flag"), _float_options())
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e308"])
def test_non_finite_floats(env: dict[str, str], command: str, flag: str, value: str) -> None:
    """``nan``, ``inf`` and a number too large for the flag are one usage error naming the flag (a
    duration has no upper bound)."""
    if value == "1e308" and not any(
        isinstance(p.type, click.FloatRange)
        for path, cmd in commands()
        if path == command
        for p in cmd.params
        if isinstance(p, click.Option) and _flag(p) == flag
    ):
        pytest.skip("durations have no upper bound")
    code, out = _invoke(command.split() + _base(command, env, flag) + [f"{flag}={value}"])
    _assert_one_line(code, out, f"error: Invalid value for '{flag}': ")


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["serve", "--kubelet", "--speed", "inf"],
            "error: Invalid value for '--speed': 'inf' is not a finite number.",
        ),
        (
            ["serve", "--kubelet", "--speed", "1e308"],
            "error: Invalid value for '--speed': 1e+308 is not in the range 0<x<=10000.",
        ),
        (
            ["serve", "--bookmark-interval", "nan"],
            "error: Invalid value for '--bookmark-interval': 'nan' is not a finite number.",
        ),
        (["replay", "--zipf-s", "inf"], "error: Invalid value for '--zipf-s': 'inf' is not a finite number."),
        (
            ["replay", "--attempt-seconds", "nan"],
            "error: Invalid value for '--attempt-seconds': 'nan' is not a finite number.",
        ),
        (
            ["run", "--kube-api-qps", "nan"],
            "error: Invalid value for '--kube-api-qps': 'nan' is not a finite number.",
        ),
        (
            ["record", "--duration", "inf"],
            "error: Invalid value for '--duration': 'inf' is not a finite duration.",
        ),
    ],
)
def test_non_finite_float_lines(env: dict[str, str], args: list[str], line: str) -> None:
    code, out = _invoke(args[:1] + _base(args[0], env) + args[1:])
    assert (code, out.strip()) == (2, line)


@pytest.mark.parametrize("stale", ["needs --validate=false", "no OpenAPI schema", "not protobuf"])
def test_help_makes_no_stale_claims(stale: str) -> None:
    """serve serves the OpenAPI schemas and decodes protobuf bodies: no help text says otherwise."""
    for path, _ in commands():
        code, out = _invoke([*path.split(), "--help"])
        assert code == 0 and stale not in " ".join(out.split()), (path, stale)
    code, out = _invoke(["serve", "--help"])
    assert "the v1.35 OpenAPI v2 and v3 schemas are served" in " ".join(out.split())


def test_help_texts_are_plain_text() -> None:
    """Help is read in a terminal: no reStructuredText literal markup (double backticks) shows."""
    leaves = [path for path, _ in commands()]
    groups = {path.rsplit(" ", 1)[0] for path in leaves if " " in path}
    marked = [
        path for path in ["", *sorted(groups), *leaves] if "``" in _invoke([*path.split(), "--help"])[1]
    ]
    assert marked == []


def test_serve_refuses_a_kubeconfig_in_a_missing_directory(tmp_path: Path) -> None:
    """As simulate's --write-snapshot: the kubeconfig's directory is checked, never created, and
    nothing is served (the port flag would be busy-checked after it)."""
    missing = tmp_path / "nonexistent" / "dir"
    code, out = _invoke(["serve", "--port", "0", "--write-kubeconfig", str(missing / "kc")])
    assert (code, out) == (
        2,
        f"error: --write-kubeconfig {missing / 'kc'}: directory {missing} does not exist\n",
    )
    assert not missing.parent.exists()
    code, out = _invoke(["simulate", "-f", "x.yaml", "--write-snapshot", str(missing / "x.yaml")])
    assert (code, out) == (
        2,
        f"error: --write-snapshot {missing / 'x.yaml'}: directory {missing} does not exist\n",
    )
