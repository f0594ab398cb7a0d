"""``kubesched bench --simulate``: the main job timed as a user runs it (no upstream counterpart).

Each measured run is a fresh ``kubesched simulate`` (or ``kubesched ui``) process on one cluster
file, so interpreter start, imports, reading the YAML, scheduling and writing the output all
count, and the peak RSS and CPU seconds are that process's own (``wait4`` ``ru_maxrss``, ``ru_utime``
+ ``ru_stime``; for ``ui``, ``VmHWM`` and ``/proc/PID/stat`` once it is ready):

* ``table`` and ``json``: ``simulate -f FILE [-o json] -v=1`` with standard output to a temporary
  file; end-to-end seconds are wall time from start to exit; load, schedule and output seconds are
  read from the ``-v=1`` phase lines (``loadSeconds``, ``scheduleSeconds``, ``outputSeconds``);
* ``ui``: ``ui -f FILE --port 0``; ready = seconds from start until its page (``GET /``) and
  the pod list the page loads first (``GET /api/v1/pods``) answer, after it printed ``serving URL``; schedule seconds are the ``simulated N pods in S s``
  it prints.

``FILE`` is a cluster file or a name of :data:`~kubesched.modes.bench.simulate_fixture.SIMULATE_FIXTURES`
(generated into a temporary directory first, not timed).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubesched.modes.bench.simulate_fixture import SIMULATE_FIXTURES, write_fixture

#: how a measured run is started: ``table``/``json`` (simulate -o ...), ``ui`` (ui -f)
MODES = ("table", "json", "ui")
_PHASE = re.compile(r"\b(loadSeconds|scheduleSeconds|outputSeconds)=([0-9.]+)")
_SERVING = re.compile(r"kubesched ui: serving (\S+)")


@dataclass
class SimulateRun:
    """One measured process: ``seconds`` end to end (``ui``: until ready); phases from its log
    (0 when not reported); ``peak_rss`` in bytes; ``output_bytes`` written to standard output."""

    mode: str
    file: str
    status: str = "ok"
    error: str = ""
    seconds: float = 0.0
    load_seconds: float = 0.0
    schedule_seconds: float = 0.0
    output_seconds: float = 0.0
    peak_rss: int = 0
    #: CPU seconds (user + system) of the process: less sensitive to other jobs than wall seconds
    cpu_seconds: float = 0.0
    output_bytes: int = 0
    #: SHA-256 of standard output (compare runs of two trees)
    output_sha256: str = ""
    #: the source tree the process ran (``--baseline-tree``), "" for this one
    tree: str = ""

    def to_json(self) -> dict[str, Any]:
        """The ``--output`` entry of this run."""
        return {
            "mode": self.mode,
            "file": self.file,
            "tree": self.tree,
            "status": self.status,
            "error": self.error,
            "seconds": self.seconds,
            "loadSeconds": self.load_seconds,
            "scheduleSeconds": self.schedule_seconds,
            "outputSeconds": self.output_seconds,
            "peakRssBytes": self.peak_rss,
            "cpuSeconds": self.cpu_seconds,
            "outputBytes": self.output_bytes,
            "outputSha256": self.output_sha256,
        }


def resolve_file(file: str, workdir: str) -> str:
    """``file`` itself when it exists, else the shipped fixture of that name written into ``workdir``.
    Raises ValueError naming both when it is neither."""
    if os.path.exists(file):
        return file
    fx = SIMULATE_FIXTURES.get(file)
    if fx is None:
        raise ValueError(f"--simulate {file!r}: no such file and not one of {', '.join(SIMULATE_FIXTURES)}")
    return str(write_fixture(Path(workdir) / (fx.name.replace("/", "_") + ".yaml"), fx))


def _command(python: str) -> list[str]:
    return [python, "-c", "from kubesched.cli.main import main; main()"]


def _env(tree: str | None) -> dict[str, str] | None:
    if not tree:
        return None
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.abspath(tree)
    return env


def run_simulate(
    file: str, output: str, python: str = sys.executable, tree: str | None = None, seed: int = 0
) -> SimulateRun:
    """One ``simulate -f file -o output --seed seed -v=1`` process (see the module docstring),
    started in the file's directory; ``tree``: run that source tree instead (a tree whose
    ``simulate`` has no ``-v`` runs without it, no phases)."""
    run = SimulateRun(output, file, tree=tree or "")
    file = os.path.abspath(file)
    for extra in (["-v=1"], []):
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                [*_command(python), "simulate", "-f", file, "-o", output, "--seed", str(seed), *extra],
                stdout=out,
                stderr=err,
                env=_env(tree),
                cwd=os.path.dirname(file),
            )
            _, status, usage = os.wait4(proc.pid, 0)
            run.seconds = time.perf_counter() - t0
            proc.returncode = os.waitstatus_to_exitcode(status)
            run.peak_rss = usage.ru_maxrss * 1024
            run.cpu_seconds = usage.ru_utime + usage.ru_stime
            run.output_bytes = out.seek(0, os.SEEK_END)
            out.seek(0)
            digest = hashlib.sha256()
            while chunk := out.read(1 << 20):
                digest.update(chunk)
            run.output_sha256 = digest.hexdigest()
            err.seek(0)
            log = err.read().decode("utf-8", "replace")
        if not (proc.returncode == 2 and extra and "'-v'" in log):
            break
    phases = {k: float(v) for k, v in _PHASE.findall(log)}
    run.load_seconds = phases.get("loadSeconds", 0.0)
    run.schedule_seconds = phases.get("scheduleSeconds", 0.0)
    run.output_seconds = phases.get("outputSeconds", 0.0)
    if proc.returncode not in (0, 1):  # 1: some pod ended in Error, the run itself completed
        run.status, run.error = (
            "failed",
            f"exit {proc.returncode}: {log.strip().splitlines()[-1] if log.strip() else ''}",
        )
    return run


def _cpu_seconds(pid: int) -> float:
    """utime + stime of a running process (``/proc/PID/stat``), 0 when unreadable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _vm_hwm(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def run_ui(
    file: str, python: str = sys.executable, tree: str | None = None, seed: int = 0, timeout: float = 1800.0
) -> SimulateRun:
    """One ``ui -f file --port 0 --seed seed`` process, timed until its page answers, then stopped."""
    run = SimulateRun("ui", file, tree=tree or "")
    file = os.path.abspath(file)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [*_command(python), "ui", "-f", file, "--port", "0", "--seed", str(seed)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=_env(tree),
        text=True,
        cwd=os.path.dirname(file),
    )
    try:
        assert proc.stderr is not None
        url = None
        lines = []
        for line in proc.stderr:
            lines.append(line)
            m = _SERVING.search(line)
            if m:
                url = m.group(1)
                break
            if time.perf_counter() - t0 > timeout:
                break
        if url is None:
            run.status, run.error = "failed", (lines[-1].strip() if lines else "ui exited before serving")
            return run
        while True:
            try:
                for path in ("", "api/v1/pods"):  # the page and the pod list it loads first
                    with urllib.request.urlopen(url.rstrip("/") + "/" + path, timeout=60) as resp:  # noqa: S310 - loopback
                        resp.read()
                break
            except OSError:
                if time.perf_counter() - t0 > timeout:
                    run.status, run.error = "failed", f"{url} did not answer"
                    return run
                time.sleep(0.05)
        run.seconds = time.perf_counter() - t0
        for line in lines:
            m = re.search(r"simulated \d+ pods in ([0-9.]+) s", line)
            if m:
                run.schedule_seconds = float(m.group(1))
        run.peak_rss = _vm_hwm(proc.pid)
        run.cpu_seconds = _cpu_seconds(proc.pid)
        return run
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def bench_simulate(
    files: Sequence[str],
    modes: Sequence[str] = MODES,
    repeat: int = 1,
    progress: Callable[[str], None] | None = None,
    baseline_tree: str | None = None,
    seed: int = 0,
) -> list[SimulateRun]:
    """Every mode on every file, ``repeat`` times in turn (modes alternate, so load on the machine
    falls on all of them alike); with ``baseline_tree`` each run of this tree is preceded by the
    same run of that tree (alternating before/after pairs). Every run uses ``seed``. Fixture names
    are generated first."""
    out: list[SimulateRun] = []
    trees: list[str | None] = [baseline_tree, None] if baseline_tree else [None]
    with tempfile.TemporaryDirectory(prefix="kubesched-bench-") as workdir:
        paths = [(f, resolve_file(f, workdir)) for f in files]
        for _ in range(repeat):
            for name, path in paths:
                for mode in modes:
                    for tree in trees:
                        if progress is not None:
                            progress(f"{mode} {name}" + (f" ({tree})" if tree else ""))
                        run = (
                            run_ui(path, tree=tree, seed=seed)
                            if mode == "ui"
                            else run_simulate(path, mode, tree=tree, seed=seed)
                        )
                        run.file = name
                        out.append(run)
    return out
