"""Simulation models driven by the replay: image names, the image catalogue and image
assignment, and the per-node kubelet image model (pulls, layers, disk, image GC, status images)."""
