"""Controllers of the embedded cluster: what kube-controller-manager does for the objects the
embedded store holds, one module per upstream ``pkg/controller/<name>`` package."""
