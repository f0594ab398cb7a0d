"""``kubesched startup``: pod start-up decomposed from a live cluster's pods, conditions and
kubelet Events, in the replay's report format."""
