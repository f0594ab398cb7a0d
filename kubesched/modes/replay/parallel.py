"""Running the configs of one replay in parallel: local worker processes
(``kubesched replay --workers N``) or an existing Dask cluster (``--dask-scheduler ADDRESS``,
``dask.distributed``, the optional ``dask`` extra). Every config is one
:func:`~kubesched.modes.replay.run.run_replay` call on the same workload, catalogue, kubelet
settings and seed, so the results equal those of :func:`~kubesched.modes.replay.run.run_replays`
(only ``wallSeconds`` differs); they come back in the order of the configs.

A run's arguments travel to the worker by pickle: the workload, the parsed configs, the
catalogue, the kubelet settings and the planner factories (importable classes or functions).
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.errors import ConfigError
from kubesched.images.catalogue import ImageCatalogue
from kubesched.modes.replay.run import STATUS_UPDATE_SECONDS, ConfigSpec, run_replay
from kubesched.modes.report.result import ReplayResult
from kubesched.prepull.hook import PlannerFactory
from kubesched.trace.workload import Workload

__all__ = ["ReplayJob", "run_parallel", "run_on_dask"]


@dataclass(frozen=True)
class ReplayJob:
    """Everything one worker needs for one config."""

    workload: Workload
    spec: ConfigSpec
    catalogue: ImageCatalogue
    kubelet_config: KubeletImageConfig | None
    seed: int | None
    planners: tuple[PlannerFactory, ...]
    attempt_seconds: float = 0.0
    status_update_seconds: float = STATUS_UPDATE_SECONDS

    def __call__(self) -> ReplayResult:
        return run_replay(
            self.workload,
            self.spec,
            catalogue=self.catalogue,
            kubelet_config=self.kubelet_config,
            seed=self.seed,
            planners=[make() for make in self.planners],
            attempt_seconds=self.attempt_seconds,
            status_update_seconds=self.status_update_seconds,
        )


def _run(job: ReplayJob) -> ReplayResult:
    return job()


def _ignore_interrupts() -> None:
    """Worker initializer: Ctrl-C reaches the whole process group; the parent handles it (and
    stops the workers), so a worker neither prints a traceback nor dies half-way on its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Terminate the pool's worker processes at once (an interrupted replay does not wait for the
    configs still running) and drop the queued ones."""
    for proc in list(getattr(pool, "_processes", {}).values()):  # no public API before Python 3.14
        proc.terminate()
    pool.shutdown(wait=False, cancel_futures=True)


def jobs_for(
    workload: Workload,
    specs: Sequence[ConfigSpec],
    *,
    catalogue: ImageCatalogue,
    kubelet_config: KubeletImageConfig | None = None,
    seed: int | None = 0,
    planners: Sequence[PlannerFactory] = (),
    attempt_seconds: float = 0.0,
) -> list[ReplayJob]:
    """One :class:`ReplayJob` per spec (arguments as :func:`~kubesched.modes.replay.run.run_replays`)."""
    return [
        ReplayJob(workload, spec, catalogue, kubelet_config, seed, tuple(planners), attempt_seconds)
        for spec in specs
    ]


def run_parallel(
    jobs: Sequence[ReplayJob], workers: int, done: Callable[[ReplayResult], object] | None = None
) -> list[ReplayResult]:
    """Run ``jobs`` on ``workers`` local processes (>= 1); ``done(result)`` is called as each run
    ends. Results in job order. A run's exception is raised here; on KeyboardInterrupt (SIGINT,
    or SIGTERM as the CLI raises it) the workers are terminated at once and it is re-raised."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers!r}")
    pool = ProcessPoolExecutor(max_workers=min(workers, max(1, len(jobs))), initializer=_ignore_interrupts)
    try:
        futures = [pool.submit(_run, job) for job in jobs]
        results = []
        for f in futures:
            r = f.result()
            if done is not None:
                done(r)
            results.append(r)
    except BaseException:
        _stop_workers(pool)
        raise
    pool.shutdown(wait=True)
    return results


def run_on_dask(
    jobs: Sequence[ReplayJob],
    address: Any,
    done: Callable[[ReplayResult], object] | None = None,
    *,
    connect_timeout: float = 30.0,
) -> list[ReplayResult]:
    """Run ``jobs`` on the Dask cluster whose scheduler is at ``address`` (``tcp://host:8786``, or
    a ``distributed`` cluster object such as ``LocalCluster``), waiting at most ``connect_timeout``
    seconds to connect. Raises ConfigError (path
    ``--dask-scheduler``) when ``dask.distributed`` is not installed or the scheduler cannot be
    reached."""
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise ConfigError(
            "--dask-scheduler", "needs dask.distributed (pip install 'kubesched[dask]')"
        ) from None
    try:
        client = Client(address, timeout=connect_timeout)
    except OSError as e:
        raise ConfigError("--dask-scheduler", f"cannot reach the Dask scheduler {address}: {e}") from None
    try:
        futures = [client.submit(_run, job, pure=False) for job in jobs]
        index = {f.key: i for i, f in enumerate(futures)}
        results: list[ReplayResult | None] = [None] * len(futures)
        for f in as_completed(futures):
            r = f.result()
            results[index[f.key]] = r
            if done is not None:
                done(r)
        return [r for r in results if r is not None]
    finally:
        client.close()
