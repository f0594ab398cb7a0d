"""Defaults the API server fills into new objects (what a client reads back after a create).

Only the defaults scheduling depends on, from ``pkg/apis/core/v1/defaults.go`` (``SetDefaults_PodSpec``,
``SetDefaults_Container``) and the admission plugins ``Priority``
(``plugin/pkg/admission/priority``) and ``DefaultTolerationSeconds``
(``plugin/pkg/admission/defaulttolerationseconds``), ``LimitRanger``'s defaults
(:mod:`kubesched.embedded.apiserver.limitranger`). ``NamespaceLifecycle`` is
:mod:`kubesched.embedded.apiserver.namespace_lifecycle`. Not modelled: the ``ServiceAccount``
admission plugin (no service account token volume is added to pods: the
embedded kubelets run no containers, and the scheduler does not look at it).
"""

from __future__ import annotations

from typing import Any

from kubesched.embedded.apiserver.limitranger import apply_limit_ranges
from kubesched.embedded.apiserver.status import ApiError
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import NotFoundError

__all__ = ["admit_new_namespace", "admit_new_pod"]

Obj = dict[str, Any]

_DEFAULT_TOLERATIONS = (
    {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
    {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
)


def _image_pull_policy(image: str) -> str:
    tail = image.rsplit("/", 1)[-1]
    if "@" in tail:
        return "IfNotPresent"
    tag = tail.split(":", 1)[1] if ":" in tail else "latest"
    return "Always" if tag == "latest" else "IfNotPresent"


def _default_containers(containers: Any) -> Any:
    if not isinstance(containers, list):
        return containers
    out = []
    for c in containers:
        if isinstance(c, dict):
            c = dict(c)
            if c.get("image") and not c.get("imagePullPolicy"):
                c["imagePullPolicy"] = _image_pull_policy(str(c["image"]))
            c.setdefault("terminationMessagePath", "/dev/termination-log")
            c.setdefault("terminationMessagePolicy", "File")
        out.append(c)
    return out


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def admit_new_pod(pod: Obj, cluster: MemoryCluster) -> Obj:
    """``pod`` with spec defaults, ``spec.priority`` resolved from its PriorityClass (or the
    ``globalDefault`` one, else 0), the default NoExecute tolerations (300 s) added and the
    LimitRange defaults of its namespace (:mod:`kubesched.embedded.apiserver.limitranger`).

    A ``spec.priority`` other than the one resolved is refused as upstream's Priority admission
    refuses it (``plugin/pkg/admission/priority/admission.go: admitPod``).

    Raises ApiError 403 (``pods "web" is forbidden: no PriorityClass with name X was found``;
    ``pods "web" is forbidden: the integer value of priority (5) must not be provided in pod spec;
    priority admission controller computed 0 from the given PriorityClass name``)."""
    pod_spec = pod.get("spec") or {}
    spec = dict(pod_spec)
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("enableServiceLinks", True)
    for field in ("containers", "initContainers"):
        if field in spec:
            spec[field] = _default_containers(spec[field])
    class_name = spec.get("priorityClassName")
    if class_name:
        try:
            pc = cluster.get("PriorityClass", None, class_name)
        except NotFoundError:
            name = (pod.get("metadata") or {}).get("name") or (pod.get("metadata") or {}).get(
                "generateName", ""
            )
            raise ApiError(
                403,
                f'pods "{name}" is forbidden: no PriorityClass with name {class_name} was found',
                "Forbidden",
            ) from None
        spec["priority"] = int(pc.get("value", 0))
        spec.setdefault("preemptionPolicy", pc.get("preemptionPolicy") or "PreemptLowerPriority")
    elif "priority" not in spec or _is_int(spec["priority"]):
        # a wrongly typed priority is the decoder's to refuse (the store may hold one as sent)
        default = next((pc for pc in cluster.list("PriorityClass").items if pc.get("globalDefault")), None)
        if default is not None:
            spec["priorityClassName"] = default["metadata"]["name"]
            spec["priority"] = int(default.get("value", 0))
            spec.setdefault("preemptionPolicy", default.get("preemptionPolicy") or "PreemptLowerPriority")
        else:
            spec["priority"] = 0
    if _is_int(pod_spec.get("priority")) and pod_spec["priority"] != spec["priority"]:
        name = (pod.get("metadata") or {}).get("name") or (pod.get("metadata") or {}).get("generateName", "")
        raise ApiError(
            403,
            f'pods "{name}" is forbidden: the integer value of priority ({pod_spec["priority"]}) must not '
            f"be provided in pod spec; priority admission controller computed {spec['priority']} from "
            "the given PriorityClass name",
            "Forbidden",
        )
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    tolerations = list(spec.get("tolerations") or [])
    for default_tol in _DEFAULT_TOLERATIONS:
        if not any(
            t.get("key") == default_tol["key"] and t.get("effect") in (None, "", "NoExecute")
            for t in tolerations
            if isinstance(t, dict)
        ):
            tolerations.append(dict(default_tol))
    spec["tolerations"] = tolerations
    return apply_limit_ranges({**pod, "spec": spec}, cluster)


def admit_new_namespace(ns: Obj) -> Obj:
    """``ns`` with ``spec.finalizers: [kubernetes]`` and ``status.phase: Active``."""
    spec = dict(ns.get("spec") or {})
    spec.setdefault("finalizers", ["kubernetes"])
    status = dict(ns.get("status") or {})
    status.setdefault("phase", "Active")
    return {**ns, "spec": spec, "status": status}
