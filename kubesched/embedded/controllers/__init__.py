"""The embedded cluster's controllers: what kube-controller-manager (and external provisioners)
do in a real cluster, run against the embedded store through the ``ClusterClient`` interface."""
