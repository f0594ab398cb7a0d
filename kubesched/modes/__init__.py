"""kubesched's run modes over the one scheduler: ``simulate`` (run a cluster file until quiet),
``replay`` (a trace over virtual time with the kubelet image model) and ``bench``
(``scheduler_perf``-shaped workloads)."""
