"""Harness of the record-and-replay agreement tests (tests/modes/record/test_record_replay_agree*.py).

:func:`record_load` runs one live workload end to end: ``kubesched serve --kubelet`` (the given
nodes, image catalogue and kubelet settings, clock ``speed`` times wall time), one ``kubesched run``
(:class:`run_support.Replica`) with the given profile and flags, a :class:`Recorder` writing the
cluster into ``tmp/rec``, and ``kubesched load`` of the trace at the same speed (a subprocess, its
report in ``tmp/load-report``); then it stops the recorder, the scheduler and the server (also when
something failed) and returns what the tests compare against the replay of the recording.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import yaml
from run_support import Replica, kubesched_command, kubesched_env, wait_for
from serve_support import ServeProcess


@dataclass(frozen=True)
class RecordedLoad:
    """What one :func:`record_load` left: ``live`` (the ``runs`` of the load's ``startup`` report,
    one per scheduler name), ``rec`` (the recording's directory), ``images`` (the catalogue file the
    replay reads too), ``metrics`` (the scheduler's ``/metrics`` text at the end of the load; empty
    unless asked for)."""

    live: list[dict[str, Any]]
    rec: Path
    images: Path
    metrics: str


def serve_kubelet(
    tmp: Path,
    nodes: Sequence[Mapping[str, Any]],
    catalogue: Mapping[str, Any],
    kubelet: Mapping[str, Any],
    speed: float,
) -> tuple[ServeProcess, Path]:
    """Write ``nodes``, the image ``catalogue`` and the ``kubelet`` image-model settings to
    ``tmp/nodes.yaml``, ``images.yaml`` and ``kubelet.yaml``, start ``kubesched serve --kubelet`` on
    them at ``speed`` and wait until it is ready and has written ``tmp/kubeconfig``; the server and
    that path. The server is stopped again when it does not come up (and the error re-raised)."""
    (tmp / "nodes.yaml").write_text(yaml.safe_dump_all(list(nodes)))
    (tmp / "images.yaml").write_text(yaml.safe_dump(dict(catalogue)))
    (tmp / "kubelet.yaml").write_text(yaml.safe_dump(dict(kubelet)))
    kc = tmp / "kubeconfig"
    serve = ServeProcess(
        tmp,
        "-f",
        str(tmp / "nodes.yaml"),
        "--write-kubeconfig",
        str(kc),
        "--kubelet",
        "--kubelet-config",
        str(tmp / "kubelet.yaml"),
        "--images",
        str(tmp / "images.yaml"),
        "--speed",
        str(speed),
    )
    try:
        serve.wait_ready()
        wait_for(kc.exists, 10, "the kubeconfig")
    except BaseException:
        serve.stop()
        raise
    return serve, kc


def load_command(trace: Path, kubeconfig: Path, images: Path, out: Path, *args: str) -> list[str]:
    """The command line of ``kubesched load`` of ``trace`` against ``kubeconfig`` with the image
    catalogue ``images``, its report in ``out``, and ``args`` (``--speed``, ``--timeout``, ...); run
    it with :func:`run_support.kubesched_env`."""
    return kubesched_command(
        "load",
        "--trace",
        str(trace),
        "--kubeconfig",
        str(kubeconfig),
        "--images",
        str(images),
        "--out",
        str(out),
        *args,
    )


def record_load(
    tmp: Path,
    *,
    nodes: Sequence[Mapping[str, Any]],
    catalogue: Mapping[str, Any],
    kubelet: Mapping[str, Any],
    trace: Mapping[str, Any],
    profile: Path,
    run_args: Sequence[str] = (),
    name: str = "replica",
    speed: float = 5,
    load_timeout: float = 60,
    wall_timeout: float = 240,
    read_metrics: bool = False,
) -> RecordedLoad:
    """Serve ``nodes`` with kubelets (``catalogue``: the image catalogue document, ``kubelet``: the
    kubelet image-model settings in camelCase), schedule with ``kubesched run --config profile
    *run_args`` (its status port's log named after ``name``), record the cluster while ``kubesched
    load`` drives ``trace`` (a simple trace document) at ``speed``, ``--timeout load_timeout`` wall
    seconds after the last arrival and at most ``wall_timeout`` wall seconds in all. Raises
    AssertionError when the load fails (its output in the message) and whatever the server or
    scheduler raise when they do not come up."""
    from kubesched.client.kube import KubeClusterClient
    from kubesched.modes.record.log import RecordWriter
    from kubesched.modes.record.recorder import Recorder

    (tmp / "trace.yaml").write_text(yaml.safe_dump(dict(trace)))
    rec = tmp / "rec"
    images = tmp / "images.yaml"
    serve, kc = serve_kubelet(tmp, nodes, catalogue, kubelet, speed)
    replica = None
    metrics = ""
    try:
        shim = SimpleNamespace(tmp=tmp, kubeconfig=str(kc), reader_token=None)
        replica = Replica(shim, profile, *run_args, name=name)  # type: ignore[arg-type]
        replica.wait_ready(60)
        kube = KubeClusterClient.from_kubeconfig(str(kc), qps=50, burst=100)
        recorder = Recorder(kube, RecordWriter(rec), source=str(kc))
        stop = threading.Event()
        thread = threading.Thread(
            target=recorder.run, kwargs={"duration": None, "flush_seconds": 0.5, "stop": stop}
        )
        thread.start()
        try:
            wait_for(lambda: recorder.informers.has_synced(), 30, "the recorder's lists")
            loaded = subprocess.run(
                load_command(
                    tmp / "trace.yaml",
                    kc,
                    images,
                    tmp / "load-report",
                    "--speed",
                    str(speed),
                    "--timeout",
                    str(load_timeout),
                ),
                capture_output=True,
                text=True,
                timeout=wall_timeout,
                env=kubesched_env(),
            )
            assert loaded.returncode == 0, loaded.stderr + loaded.stdout
            if read_metrics:
                metrics = replica.get("/metrics", 5, token=None)[1].decode()
        finally:
            stop.set()
            thread.join(30)
            kube.close()
    finally:
        if replica is not None:
            replica.stop()
        serve.stop()
    live = json.loads((tmp / "load-report" / "report.json").read_text())["runs"]
    return RecordedLoad(live=live, rec=rec, images=images, metrics=metrics)
