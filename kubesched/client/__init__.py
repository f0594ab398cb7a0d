"""Talking to a Kubernetes API server (client-go's role): the :class:`~kubesched.client.client.ClusterClient`
interface every backend implements, the client of a real API server (:mod:`~kubesched.client.kube`,
its connection pool, rate limits and metrics), informers, leader election, the event broadcaster,
write fencing and write-behind, and reading a live cluster into a snapshot."""
