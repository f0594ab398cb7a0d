"""The embedded cluster: a backend like any API server, behind the same
:class:`~kubesched.client.client.ClusterClient` interface. The in-memory store (:mod:`~kubesched.embedded.store`),
manifests loading, its Kubernetes API over HTTP (:mod:`~kubesched.embedded.apiserver`, ``kubesched serve``),
its controllers (:mod:`~kubesched.embedded.controllers`) and its kubelet model (:mod:`~kubesched.embedded.kubelet`)."""
