"""``kubesched bench``: upstream ``scheduler_perf``-shaped workloads run end to end against the
embedded cluster (see :mod:`kubesched.bench.workloads`, :mod:`kubesched.bench.runner`)."""

from kubesched.bench.runner import WorkloadResult, run_isolated, run_workload
from kubesched.bench.workloads import Workload, load_workloads, select

__all__ = ["Workload", "WorkloadResult", "load_workloads", "run_isolated", "run_workload", "select"]
