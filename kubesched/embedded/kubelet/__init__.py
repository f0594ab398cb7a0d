"""The kubelet image model (used by ``kubesched replay``): per-node image pulls, layers, image
disk, image GC and ``node.status.images`` on a virtual clock; what real kubelets report about
their pulls (``pulled_events``) with the fit of the model to them (``calibrate``); and the
kubelets of ``kubesched serve --kubelet`` built on the model (``live``)."""
