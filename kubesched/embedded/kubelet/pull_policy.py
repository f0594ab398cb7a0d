"""Containers' ``imagePullPolicy`` as the kubelet model applies it (``Always`` / ``IfNotPresent`` /
``Never``; :meth:`~kubesched.embedded.kubelet.model.KubeletModel.pod_bound` says what each does).

A pod the API server admitted always carries the field (``pkg/apis/core/v1/defaults.go:
SetDefaults_Container``: ``Always`` for a ``:latest`` or untagged image, else ``IfNotPresent``);
a container without it (a trace's pod written by hand) or with any other value is taken as
``IfNotPresent``, the model's behaviour before policies were read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["PULL_POLICIES", "pod_pull_policies", "pull_policy"]

#: the values ``imagePullPolicy`` may take
PULL_POLICIES = ("Always", "IfNotPresent", "Never")


def pull_policy(container: Mapping[str, Any]) -> str:
    """The container's ``imagePullPolicy`` (``IfNotPresent`` when missing or unknown)."""
    policy = container.get("imagePullPolicy")
    return policy if policy in PULL_POLICIES else "IfNotPresent"


def pod_pull_policies(pod: Mapping[str, Any]) -> tuple[str, ...]:
    """The pull policy of each container of ``pod``, init containers first (the order of
    :attr:`kubesched.api.pod.Pod.images`)."""
    spec = pod.get("spec") or {}
    return tuple(
        pull_policy(c)
        for fld in ("initContainers", "containers")
        for c in spec.get(fld) or []
        if isinstance(c, Mapping)
    )
