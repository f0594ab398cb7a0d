"""``kubesched replay``: a workload through the scheduler over virtual time with the kubelet
image model; measurements and reports (table, JSON/CSV, HTML)."""
