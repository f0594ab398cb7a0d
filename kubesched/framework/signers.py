"""Pod signatures for OpportunisticBatching: the fragment type, the signer names and the signers
several plugins share (``staging/src/k8s.io/kube-scheduler/framework/signers.go`` and
``interface.go``: ``SignFragment``, ``SignPlugin``).

A plugin at PreFilter, Filter, PreScore or Score that implements
:class:`~kubesched.framework.interfaces.SignPlugin` returns the fragments of the pod its verdicts
and scores depend on; two pods with equal signatures must get the same feasibility and scores on
the same nodes in the same state. A plugin that cannot sign a pod returns a non-Success status
(upstream: ``Unschedulable`` with the reason), which makes the pod unsignable. Fragment values are
plain JSON values (str, int, float, bool, None, lists, tuples and mappings of them, or frozen
dataclasses of them); the framework marshals the signature as JSON with sorted keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from kubesched.api.pod import Pod

__all__ = [
    "DYNAMIC_RESOURCES_SIGNER_NAME",
    "HOST_PORTS_SIGNER_NAME",
    "IMAGE_NAMES_SIGNER_NAME",
    "INTER_POD_AFFINITY_SIGNER_NAME",
    "LABELS_SIGNER_NAME",
    "NODE_AFFINITY_SIGNER_NAME",
    "NODE_NAME_SIGNER_NAME",
    "NODE_SELECTOR_SIGNER_NAME",
    "POD_TOPOLOGY_SPREAD_SIGNER_NAME",
    "RESOURCES_SIGNER_NAME",
    "SCHEDULER_NAME_SIGNER_NAME",
    "TOLERATIONS_SIGNER_NAME",
    "VOLUMES_SIGNER_NAME",
    "SignFragment",
    "host_ports_signer",
    "node_affinity_signer",
    "tolerations_signer",
    "volumes_signer",
]

DYNAMIC_RESOURCES_SIGNER_NAME: Final = "v1.Pod.Spec.DynamicResources"
IMAGE_NAMES_SIGNER_NAME: Final = "v1.Pod.Spec.CanonicalImageNames()"
LABELS_SIGNER_NAME: Final = "v1.Pod.Labels"
NODE_NAME_SIGNER_NAME: Final = "v1.Pod.Spec.NodeName"
NODE_AFFINITY_SIGNER_NAME: Final = "v1.Pod.Spec.Affinity.NodeAffinity"
NODE_SELECTOR_SIGNER_NAME: Final = "v1.Pod.Spec.Affinity.NodeSelector"
INTER_POD_AFFINITY_SIGNER_NAME: Final = "v1.Pod.Spec.Affinity.InterPodAffinity"
HOST_PORTS_SIGNER_NAME: Final = "v1.Pod.Spec.HostPorts()"
RESOURCES_SIGNER_NAME: Final = "v1.Pod.Spec.ContainerResourcesAndOverheads()"
SCHEDULER_NAME_SIGNER_NAME: Final = "v1.Pod.Spec.SchedulerName"
TOLERATIONS_SIGNER_NAME: Final = "v1.Pod.Spec.Tolerations"
POD_TOPOLOGY_SPREAD_SIGNER_NAME: Final = "v1.Pod.Spec.PodTopologySpread"
VOLUMES_SIGNER_NAME: Final = "v1.Pod.Spec.Volumes.NonSyntheticSources()"


@dataclass(frozen=True)
class SignFragment:
    """One part of a pod's signature: ``key`` (a signer name, or the plugin's name for a
    plugin-specific part) and a JSON-marshalable ``value``. Fragments of several plugins with the
    same key must carry the same value (the later one is kept)."""

    key: str
    value: Any


def _spec(pod: Pod) -> dict[str, Any]:
    spec = pod.raw.get("spec") if isinstance(pod.raw, dict) else None
    return spec if isinstance(spec, dict) else {}


def host_ports_signer(pod: Pod) -> list[int]:
    """``HostPortsSigner``: the sorted set of the non-zero host ports of the pod's containers and
    init containers."""
    return sorted({p.host_port for p in pod.host_ports if p.host_port})


def node_affinity_signer(pod: Pod) -> Any:
    """``NodeAffinitySigner``: ``spec.affinity.nodeAffinity`` as written (None when absent)."""
    aff = _spec(pod).get("affinity")
    return aff.get("nodeAffinity") if isinstance(aff, dict) else None


def tolerations_signer(pod: Pod) -> list[tuple[str, str, str, str, int | None]]:
    """``TolerationsSigner``: the pod's tolerations as ``(key, operator, value, effect,
    tolerationSeconds)`` ordered by key, then value (a stable sort)."""
    return sorted(
        ((t.key, t.operator, t.value, t.effect, t.toleration_seconds) for t in pod.tolerations),
        key=lambda t: (t[0], t[2]),
    )


def volumes_signer(pod: Pod) -> list[Any]:
    """``VolumesSigner``: the sources of the pod's volumes other than ConfigMap and Secret volumes
    (those do not change scheduling but differ pod by pod), volume names left out."""
    out: list[Any] = []
    for vol in pod.volumes:
        if "configMap" in vol or "secret" in vol:
            continue
        out.append({k: v for k, v in vol.items() if k != "name"})
    return out
