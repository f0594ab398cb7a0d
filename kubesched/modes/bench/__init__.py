"""``kubesched bench``: upstream ``scheduler_perf``-shaped workloads run end to end against the
embedded cluster (see :mod:`kubesched.modes.bench.workloads`, :mod:`kubesched.modes.bench.runner`)."""

from kubesched.modes.bench.runner import WorkloadResult, run_isolated, run_workload
from kubesched.modes.bench.workloads import BenchWorkload, load_workloads, select

__all__ = ["BenchWorkload", "WorkloadResult", "load_workloads", "run_isolated", "run_workload", "select"]
