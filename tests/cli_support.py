"""Support for the command tests: every command found by walking the click tree, and the
arguments that make each one valid (so that the option or signal under test is what it meets)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import click

from kubesched.cli.main import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CLUSTER = str(EXAMPLES / "cluster.yaml")

#: Arguments that make each command valid apart from the option under test. ``{tmp}`` is the
#: test's temporary directory; ``{cluster}`` the example snapshot; ``{trace}`` a small simple trace;
#: ``{events}`` a kubelet Pulled event line; ``{kubeconfig}`` a kubeconfig of a closed port.
BASE: dict[str, list[str]] = {
    "bench": ["SchedulingBasic/500Nodes_10000Pods", "--in-process"],
    "images calibrate": ["--events", "{events}"],
    "images estimate": ["busybox:1.36", "--no-registry"],
    "images layers": ["busybox:1.36"],
    "load": ["--trace", "{trace}", "--kubeconfig", "{kubeconfig}", "--out", "{tmp}/load"],
    "record": ["--kubeconfig", "{kubeconfig}", "--out", "{tmp}/record"],
    "replay": ["--trace", "{trace}", "--out", "{tmp}/replay", "--no-html"],
    "run": [
        "--kubeconfig",
        "{kubeconfig}",
        "--secure-port",
        "0",
        "--cpu-affinity",
        "none",
        "--leader-elect=false",
    ],
    "serve": ["--port", "0"],
    "simulate": ["-f", "{cluster}"],
    "snapshot": ["--kubeconfig", "{kubeconfig}"],
    "startup": ["--kubeconfig", "{kubeconfig}", "--out", "{tmp}/startup"],
    "trace snapshot": ["{tmp}"],
    "ui": ["-f", "{cluster}", "--port", "0"],
}


def commands(group: click.Group = main, prefix: str = "") -> Iterator[tuple[str, click.Command]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        assert cmd is not None
        path = f"{prefix} {name}".strip()
        if isinstance(cmd, click.Group):
            yield from commands(cmd, path)
        else:
            yield path, cmd


def make_inputs(tmp_path: Path) -> dict[str, str]:
    """The files :data:`BASE` names, written under ``tmp_path``: ``{tmp}``, ``{trace}`` (a two-node
    simple trace), ``{events}`` (one kubelet Pulled message), ``{kubeconfig}`` (a closed port),
    ``{cluster}`` (examples/cluster.yaml); and ``afile``, a file where a directory is expected."""
    trace = tmp_path / "trace.yaml"
    trace.write_text(
        "nodes: [{name: n, cpu: '4', memory: 8Gi, count: 2}]\n"
        "pods: [{name: p, arrival: 0, duration: 60, cpu: 500m, memory: 1Gi, image: redis}]\n"
    )
    events = tmp_path / "events.txt"
    events.write_text(
        'Successfully pulled image "redis:7" in 1.2s (1.2s including waiting). Image size: 40000000 bytes.\n'
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    from kubesched.embedded.apiserver.kubeconfig import write_kubeconfig

    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", f"http://127.0.0.1:{closed}")
    (tmp_path / "afile").write_text("x")
    return {
        "tmp": str(tmp_path),
        "trace": str(trace),
        "events": str(events),
        "kubeconfig": str(kubeconfig),
        "cluster": CLUSTER,
    }


def base_args(
    command: str,
    inputs: dict[str, str],
    overrides: dict[tuple[str, str], list[str]] | None = None,
    flag: str = "",
) -> list[str]:
    """:data:`BASE` of ``command`` with the inputs filled in (``overrides[(command, flag)]`` instead
    when given)."""
    args = (overrides or {}).get((command, flag), BASE[command])
    return [a.format(**inputs) for a in args]
