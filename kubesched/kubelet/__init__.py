"""The kubelet image model (used by ``kubesched replay``): per-node image pulls, layers, image
disk, image GC and ``node.status.images`` on a virtual clock."""
