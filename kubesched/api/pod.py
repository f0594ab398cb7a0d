"""Read-only, parsed view of the scheduling-relevant parts of a Pod manifest.

``Pod.from_manifest(obj)`` parses once: quantities become integers (``cpu`` in
millicores, the rest in base units), selectors/affinity/tolerations are compiled, and
effective requests (``k8s.io/component-helpers/resource/helpers.go`` ``PodRequests``) are precomputed. The
original dict is kept as ``raw``
(never mutated). API-server defaulting that a real cluster applies before the scheduler
ever sees a pod is applied here too (``pkg/apis/core/v1/defaults.go``): a container
request missing for a resource that has a limit defaults to that limit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from kubesched.api.labels import LabelSelector, label_key_error, parse_label_selector, selector_value_error
from kubesched.api.node_selector import (
    NodeSelector,
    PreferredSchedulingTerm,
    parse_node_selector,
    parse_preferred_terms,
    parse_weighted_terms,
)
from kubesched.api.quantity import QuantityError, resource_value
from kubesched.api.resources import NON_ZERO_DEFAULTS, pod_requests
from kubesched.api.shape import parse_checked
from kubesched.api.taints import Toleration, parse_tolerations
from kubesched.api.timestamps import parse_time
from kubesched.errors import ManifestError

DEFAULT_SCHEDULER_NAME = "default-scheduler"
_MISSING = object()


@dataclass(frozen=True, slots=True)
class ContainerPort:
    """A host port claim: ``(host_ip, protocol, host_port)`` with upstream defaults ``0.0.0.0``/``TCP``."""

    host_ip: str
    protocol: str
    host_port: int


@dataclass(frozen=True, slots=True)
class Container:
    """A container's scheduling fields. ``requests``/``limits`` map resource name -> integer amount."""

    name: str
    image: str
    requests: Mapping[str, int]
    limits: Mapping[str, int]
    restart_policy: str | None
    host_ports: tuple[ContainerPort, ...]
    #: ``resources.claims[].name``: entries of ``spec.resourceClaims`` this container uses
    claims: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PodResourceClaim:
    """``v1.PodResourceClaim``: ``spec.resourceClaims[]``. Exactly one of ``resource_claim_name``
    (an existing ResourceClaim in the pod's namespace) and ``resource_claim_template_name`` (a
    ResourceClaimTemplate from which the ResourceClaim controller creates a claim) is non-empty."""

    name: str
    resource_claim_name: str
    resource_claim_template_name: str


@dataclass(frozen=True, slots=True)
class PodResourceClaimStatus:
    """``v1.PodResourceClaimStatus``: ``status.resourceClaimStatuses[]``, the name of the claim
    generated for a templated entry (``resource_claim_name`` None: no claim is needed)."""

    name: str
    resource_claim_name: str | None


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    """``v1.PodAffinityTerm``; ``label_selector``/``namespace_selector`` ``None`` = nil (match nothing)."""

    label_selector: LabelSelector | None
    namespaces: tuple[str, ...]
    namespace_selector: LabelSelector | None
    topology_key: str
    match_label_keys: tuple[str, ...]
    mismatch_label_keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class WeightedPodAffinityTerm:
    """``v1.WeightedPodAffinityTerm`` (weight 1..100)."""

    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    """``v1.TopologySpreadConstraint`` with upstream defaults (``minDomains`` 1 when unset,
    policies ``None`` when unset: the plugin applies Honor/Ignore)."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None
    min_domains: int | None
    node_affinity_policy: str | None
    node_taints_policy: str | None
    match_label_keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class OwnerReference:
    """``metav1.OwnerReference`` (kind, name, uid, controller flag)."""

    kind: str
    name: str
    uid: str
    controller: bool
    api_version: str = ""


def _resource_list(raw: Any, path: str, tail: str = "") -> dict[str, int]:
    """``raw`` (a ``v1.ResourceList``) as resource name -> integer amount; errors name the field
    ``path + tail`` (joined only when one is raised)."""
    if not raw:
        return {}
    if type(raw) is not dict and not isinstance(raw, Mapping):
        raise ManifestError(path + tail, "must be an object")
    out = {}
    for name, q in raw.items():
        key = name if type(name) is str else str(name)
        try:
            v = resource_value(key, q)
        except QuantityError as e:
            raise ManifestError(f"{path}{tail}.{name}", str(e)) from None
        if v < 0:
            raise ManifestError(f"{path}{tail}.{name}", "must be greater than or equal to 0")
        out[key] = v
    return out


def _container(raw: Any, path: str, init: bool) -> Container:
    if type(raw) is not dict and not isinstance(raw, Mapping):
        raise ManifestError(path, "must be an object")
    res = raw.get("resources") or {}
    if type(res) is not dict and not isinstance(res, Mapping):
        raise ManifestError(f"{path}.resources", "must be an object")
    limits = _resource_list(res.get("limits"), path, ".resources.limits")
    requests = _resource_list(res.get("requests"), path, ".resources.requests")
    for k, v in limits.items():
        requests.setdefault(k, v)
    policy = raw.get("restartPolicy")
    ports = []
    if not init or policy == "Always":
        for j, p in enumerate(raw.get("ports") or []):
            if not isinstance(p, Mapping):
                raise ManifestError(f"{path}.ports[{j}]", "must be an object")
            hp = p.get("hostPort") or 0
            if not isinstance(hp, int) or hp < 0 or hp > 65535:
                raise ManifestError(f"{path}.ports[{j}].hostPort", "must be between 0 and 65535, inclusive")
            if hp > 0:
                ports.append(ContainerPort(p.get("hostIP") or "0.0.0.0", p.get("protocol") or "TCP", hp))
    claims = res.get("claims") or []
    if not isinstance(claims, list):
        raise ManifestError(f"{path}.resources.claims", "must be a list")
    names = []
    for j, c in enumerate(claims):
        if not isinstance(c, Mapping) or not c.get("name"):
            raise ManifestError(f"{path}.resources.claims[{j}].name", "Required value")
        names.append(str(c["name"]))
    return Container(
        str(raw.get("name") or ""),
        str(raw.get("image") or ""),
        requests,
        limits,
        policy,
        tuple(ports),
        tuple(names),
    )


def _pod_resource_claims(raw: Any) -> tuple[PodResourceClaim, ...]:
    """``spec.resourceClaims`` as ``ValidatePodSpec`` (``validatePodResourceClaims``) admits it."""
    if not raw:
        return ()
    if not isinstance(raw, list):
        raise ManifestError("spec.resourceClaims", "must be a list")
    out = []
    seen: set[str] = set()
    for i, c in enumerate(raw):
        path = f"spec.resourceClaims[{i}]"
        if not isinstance(c, Mapping):
            raise ManifestError(path, "must be an object")
        name = str(c.get("name") or "")
        if not name:
            raise ManifestError(f"{path}.name", "Required value")
        if name in seen:
            raise ManifestError(f"{path}.name", f'Duplicate value: "{name}"')
        seen.add(name)
        claim = str(c.get("resourceClaimName") or "")
        template = str(c.get("resourceClaimTemplateName") or "")
        if claim and template:
            raise ManifestError(
                path,
                "Invalid value: at most one of `resourceClaimName` or `resourceClaimTemplateName` may be set",
            )
        if not claim and not template:
            raise ManifestError(
                path, "Invalid value: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
            )
        out.append(PodResourceClaim(name, claim, template))
    return tuple(out)


def _resource_claim_statuses(raw: Any) -> tuple[PodResourceClaimStatus, ...]:
    if not raw:
        return ()
    if not isinstance(raw, list):
        raise ManifestError("status.resourceClaimStatuses", "must be a list")
    out = []
    for i, c in enumerate(raw):
        if not isinstance(c, Mapping) or not c.get("name"):
            raise ManifestError(f"status.resourceClaimStatuses[{i}].name", "Required value")
        rcn = c.get("resourceClaimName")
        out.append(PodResourceClaimStatus(str(c["name"]), None if rcn is None else str(rcn)))
    return tuple(out)


def _affinity_term(raw: Any, path: str) -> PodAffinityTerm:
    if not isinstance(raw, Mapping):
        raise ManifestError(path, "must be an object")
    tk = raw.get("topologyKey")
    if not tk:
        raise ManifestError(f"{path}.topologyKey", "can not be empty")
    bad = label_key_error(str(tk))
    if bad is not None:
        raise ManifestError(f"{path}.topologyKey", bad)
    ns = raw.get("namespaces") or []
    return PodAffinityTerm(
        parse_label_selector(raw.get("labelSelector"), f"{path}.labelSelector"),
        tuple(str(n) for n in ns),
        parse_label_selector(raw.get("namespaceSelector"), f"{path}.namespaceSelector"),
        str(tk),
        tuple(str(k) for k in raw.get("matchLabelKeys") or []),
        tuple(str(k) for k in raw.get("mismatchLabelKeys") or []),
    )


def _term_value_error(raw: Mapping[str, Any]) -> str | None:
    """``newAffinityTerm``'s selector conversion error (``pkg/scheduler/framework/types.go``)."""
    return selector_value_error(raw.get("labelSelector")) or selector_value_error(
        raw.get("namespaceSelector")
    )


def _affinity_terms(raw: Any, path: str) -> tuple[tuple[PodAffinityTerm, ...], str | None]:
    """The terms and, when a selector value cannot be converted, ``((), error)``: upstream's
    ``getAffinityTerms`` drops the whole list at its first bad term."""
    if not raw:
        return (), None
    if not isinstance(raw, list):
        raise ManifestError(path, "must be a list")
    terms = tuple(_affinity_term(t, f"{path}[{i}]") for i, t in enumerate(raw))
    for t in raw:
        err = _term_value_error(t)
        if err is not None:
            return (), err
    return terms, None


def _weighted_terms(raw: Any, path: str) -> tuple[tuple[WeightedPodAffinityTerm, ...], str | None]:
    """Like :func:`_affinity_terms` for weighted terms (``getWeightedAffinityTerms``)."""
    if not raw:
        return (), None
    terms = tuple(
        WeightedPodAffinityTerm(w, term)
        for w, term in parse_weighted_terms(raw, path, "podAffinityTerm", _affinity_term)
    )
    for t in raw or ():
        err = _term_value_error(t.get("podAffinityTerm") or {})
        if err is not None:
            return (), err
    return terms, None


def _spread_constraints(raw: Any, path: str) -> tuple[TopologySpreadConstraint, ...]:
    if not raw:
        return ()
    if not isinstance(raw, list):
        raise ManifestError(path, "must be a list")
    out = []
    for i, c in enumerate(raw):
        p = f"{path}[{i}]"
        if not isinstance(c, Mapping):
            raise ManifestError(p, "must be an object")
        ms = c.get("maxSkew")
        if not isinstance(ms, int) or isinstance(ms, bool) or ms <= 0:
            raise ManifestError(f"{p}.maxSkew", "must be greater than zero")
        if not c.get("topologyKey"):
            raise ManifestError(f"{p}.topologyKey", "can not be empty")
        bad = label_key_error(str(c["topologyKey"]))
        if bad is not None:
            raise ManifestError(f"{p}.topologyKey", bad)
        wu = c.get("whenUnsatisfiable")
        if wu not in ("DoNotSchedule", "ScheduleAnyway"):
            raise ManifestError(f"{p}.whenUnsatisfiable", f'Unsupported value: "{wu}"')
        md = c.get("minDomains")
        if md is not None and (not isinstance(md, int) or md <= 0):
            raise ManifestError(f"{p}.minDomains", "must be greater than zero")
        for pol in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            if c.get(pol) not in (None, "Honor", "Ignore"):
                raise ManifestError(f"{p}.{pol}", f'Unsupported value: "{c.get(pol)}"')
        out.append(
            TopologySpreadConstraint(
                ms,
                str(c["topologyKey"]),
                wu,
                parse_label_selector(c.get("labelSelector"), f"{p}.labelSelector"),
                md,
                c.get("nodeAffinityPolicy"),
                c.get("nodeTaintsPolicy"),
                tuple(str(k) for k in c.get("matchLabelKeys") or []),
            )
        )
    return tuple(out)


class Pod:
    """Parsed view of a Pod. Attributes are read-only by convention; ``raw`` is the manifest.

    Amounts: ``requests`` / ``non_zero_requests`` map resource name -> int (``cpu`` millicores,
    others bytes or counts). ``priority`` defaults to 0 (``spec.priority`` is set by the
    API server's Priority admission from ``priorityClassName``; kubesched reads the resolved value).
    """

    __slots__ = (
        "raw",
        "namespace",
        "name",
        "uid",
        "key",
        "labels",
        "annotations",
        "resource_version",
        "node_name",
        "scheduler_name",
        "priority",
        "preemption_policy",
        "containers",
        "init_containers",
        "overhead",
        "pod_level_requests",
        "tolerations",
        "node_selector",
        "required_node_affinity",
        "preferred_node_affinity",
        "pod_affinity_required",
        "pod_affinity_preferred",
        "pod_anti_affinity_required",
        "pod_anti_affinity_preferred",
        "topology_spread_constraints",
        "scheduling_gates",
        "deletion_timestamp",
        "creation_timestamp",
        "start_time",
        "nominated_node_name",
        "phase",
        "owner_references",
        "volumes",
        "pvc_names",
        "host_ports",
        "images",
        "requests",
        "non_zero_requests",
        "has_affinity",
        "resource_claims",
        "resource_claim_statuses",
        "conditions",
        "affinity_parse_error",
    )

    raw: dict[str, Any]
    namespace: str
    name: str
    uid: str
    key: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    resource_version: str
    node_name: str
    scheduler_name: str
    priority: int
    preemption_policy: str
    containers: tuple[Container, ...]
    init_containers: tuple[Container, ...]
    overhead: Mapping[str, int]
    pod_level_requests: Mapping[str, int]
    tolerations: tuple[Toleration, ...]
    node_selector: Mapping[str, str]
    required_node_affinity: NodeSelector | None
    preferred_node_affinity: tuple[PreferredSchedulingTerm, ...]
    pod_affinity_required: tuple[PodAffinityTerm, ...]
    pod_affinity_preferred: tuple[WeightedPodAffinityTerm, ...]
    pod_anti_affinity_required: tuple[PodAffinityTerm, ...]
    pod_anti_affinity_preferred: tuple[WeightedPodAffinityTerm, ...]
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...]
    scheduling_gates: tuple[str, ...]
    deletion_timestamp: str | None
    creation_timestamp: str | None
    start_time: float | None
    nominated_node_name: str
    phase: str
    owner_references: tuple[OwnerReference, ...]
    volumes: tuple[Mapping[str, Any], ...]
    pvc_names: tuple[str, ...]
    host_ports: tuple[ContainerPort, ...]
    images: tuple[str, ...]
    requests: Mapping[str, int]
    non_zero_requests: Mapping[str, int]
    has_affinity: bool
    #: ``spec.resourceClaims``
    resource_claims: tuple[PodResourceClaim, ...]
    #: ``status.resourceClaimStatuses`` (written by the ResourceClaim controller)
    resource_claim_statuses: tuple[PodResourceClaimStatus, ...]
    conditions: tuple[Mapping[str, Any], ...]
    #: upstream ``PodInfo.Update``'s aggregate error when a pod (anti-)affinity selector value
    #: cannot be converted (those term lists are then empty), e.g.
    #: ``requiredAffinityTerms: values[0][app]: Invalid value: "{{.bad}}": ...``; None when all parse
    affinity_parse_error: str | None

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> Pod:
        """Parse a Pod manifest dict. Raises :class:`ManifestError` with a field path such as
        ``spec.containers[0].resources.requests.cpu: invalid quantity "1.5.0"`` (field types are
        checked first, :func:`kubesched.api.shape.check_shape`)."""
        return parse_checked("Pod", obj, cls._parse)

    @classmethod
    def _parse(cls, obj: Mapping[str, Any]) -> Pod:
        p = cls.__new__(cls)
        meta = obj.get("metadata")
        if type(meta) is not dict and not isinstance(meta, Mapping):
            raise ManifestError("metadata", "required")
        if not meta.get("name"):
            raise ManifestError("metadata.name", "required")
        spec = obj.get("spec")
        if type(spec) is not dict and not isinstance(spec, Mapping):
            raise ManifestError("spec", "required")
        status = obj.get("status") or {}
        p.raw = obj  # type: ignore[assignment]
        p.namespace = str(meta.get("namespace") or "default")
        p.name = str(meta["name"])
        p.key = f"{p.namespace}/{p.name}"
        p.uid = str(meta.get("uid") or p.key)
        p.labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
        p.annotations = dict(meta.get("annotations") or {})
        p.resource_version = str(meta.get("resourceVersion") or "")
        p.deletion_timestamp = meta.get("deletionTimestamp")
        p.creation_timestamp = meta.get("creationTimestamp")
        refs = meta.get("ownerReferences")
        p.owner_references = (
            tuple(
                OwnerReference(
                    str(o.get("kind", "")),
                    str(o.get("name", "")),
                    str(o.get("uid", "")),
                    bool(o.get("controller")),
                    str(o.get("apiVersion", "")),
                )
                for o in refs
                if isinstance(o, Mapping)
            )
            if refs
            else ()
        )
        p.node_name = str(spec.get("nodeName") or "")
        p.scheduler_name = str(spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME)
        prio = spec.get("priority", 0)
        if prio is None:
            prio = 0
        if not isinstance(prio, int) or isinstance(prio, bool):
            raise ManifestError("spec.priority", "must be an integer")
        p.priority = prio
        pp = spec.get("preemptionPolicy") or "PreemptLowerPriority"
        if pp not in ("PreemptLowerPriority", "Never"):
            raise ManifestError("spec.preemptionPolicy", f'Unsupported value: "{pp}"')
        p.preemption_policy = pp
        cs = spec.get("containers")
        if not isinstance(cs, list) or not cs:
            raise ManifestError("spec.containers", "Required value")
        p.containers = tuple(_container(c, f"spec.containers[{i}]", False) for i, c in enumerate(cs))
        ics = spec.get("initContainers") or []
        if not isinstance(ics, list):
            raise ManifestError("spec.initContainers", "must be a list")
        p.init_containers = tuple(_container(c, f"spec.initContainers[{i}]", True) for i, c in enumerate(ics))
        p.overhead = _resource_list(spec.get("overhead"), "spec.overhead")
        pres = spec.get("resources")
        if not pres:
            p.pod_level_requests = {}
        else:
            is_map = isinstance(pres, Mapping)
            p.pod_level_requests = _resource_list(
                pres.get("requests") if is_map else None, "spec.resources.requests"
            )
            if is_map:
                for k, v in _resource_list(pres.get("limits"), "spec.resources.limits").items():
                    if k in ("cpu", "memory") or k.startswith("hugepages-"):
                        p.pod_level_requests.setdefault(k, v)
        p.tolerations = parse_tolerations(spec.get("tolerations"), "spec.tolerations")
        ns = spec.get("nodeSelector") or {}
        if type(ns) is not dict and not isinstance(ns, Mapping):
            raise ManifestError("spec.nodeSelector", "must be an object")
        p.node_selector = {str(k): str(v) for k, v in ns.items()} if ns else {}
        aff = spec.get("affinity") or {}
        if type(aff) is not dict and not isinstance(aff, Mapping):
            raise ManifestError("spec.affinity", "must be an object")
        if aff:
            cls._parse_affinity(p, aff)
        else:
            p.required_node_affinity = None
            p.preferred_node_affinity = ()
            p.pod_affinity_required = p.pod_anti_affinity_required = ()
            p.pod_affinity_preferred = p.pod_anti_affinity_preferred = ()
            p.affinity_parse_error = None
            p.has_affinity = False
        p.topology_spread_constraints = _spread_constraints(
            spec.get("topologySpreadConstraints"), "spec.topologySpreadConstraints"
        )
        gates = spec.get("schedulingGates")
        p.scheduling_gates = (
            tuple(str(g.get("name", "")) for g in gates if isinstance(g, Mapping)) if gates else ()
        )
        vols = spec.get("volumes") or []
        if not isinstance(vols, list):
            raise ManifestError("spec.volumes", "must be a list")
        if vols:
            p.volumes = tuple(v for v in vols if isinstance(v, Mapping))
            p.pvc_names = tuple(
                str(v["persistentVolumeClaim"].get("claimName", ""))
                for v in p.volumes
                if isinstance(v.get("persistentVolumeClaim"), Mapping)
            )
        else:
            p.volumes = p.pvc_names = ()
        p.resource_claims = _pod_resource_claims(spec.get("resourceClaims"))
        p.resource_claim_statuses = _resource_claim_statuses(status.get("resourceClaimStatuses"))
        if len(p.containers) == 1 and not p.init_containers:
            p.host_ports = p.containers[0].host_ports
            p.images = (p.containers[0].image,)
        else:
            p.host_ports = tuple(hp for c in p.containers + p.init_containers for hp in c.host_ports)
            p.images = tuple(c.image for c in p.init_containers + p.containers)
        p.nominated_node_name = str(status.get("nominatedNodeName") or "")
        p.phase = str(status.get("phase") or "")
        conditions = status.get("conditions")
        p.conditions = tuple(c for c in conditions if isinstance(c, Mapping)) if conditions else ()
        try:
            p.start_time = parse_time(status.get("startTime"))
        except ValueError as e:
            raise ManifestError("status.startTime", str(e)) from None
        cont = [(c.requests, c.restart_policy) for c in p.containers]
        init = [(c.requests, c.restart_policy) for c in p.init_containers]
        p.requests = pod_requests(cont, init, p.pod_level_requests, p.overhead)
        p.non_zero_requests = pod_requests(cont, init, p.pod_level_requests, p.overhead, NON_ZERO_DEFAULTS)
        return p

    @staticmethod
    def _parse_affinity(p: Pod, aff: Mapping[str, Any]) -> None:
        """``spec.affinity`` (a non-empty mapping) into ``p``'s affinity attributes."""
        na = aff.get("nodeAffinity") or {}
        pa = aff.get("podAffinity") or {}
        paa = aff.get("podAntiAffinity") or {}
        base = "spec.affinity"
        p.required_node_affinity = parse_node_selector(
            na.get("requiredDuringSchedulingIgnoredDuringExecution"),
            f"{base}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
        )
        p.preferred_node_affinity = parse_preferred_terms(
            na.get("preferredDuringSchedulingIgnoredDuringExecution"),
            f"{base}.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution",
        )
        p.pod_affinity_required, e1 = _affinity_terms(
            pa.get("requiredDuringSchedulingIgnoredDuringExecution"),
            f"{base}.podAffinity.requiredDuringSchedulingIgnoredDuringExecution",
        )
        p.pod_anti_affinity_required, e2 = _affinity_terms(
            paa.get("requiredDuringSchedulingIgnoredDuringExecution"),
            f"{base}.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution",
        )
        p.pod_affinity_preferred, e3 = _weighted_terms(
            pa.get("preferredDuringSchedulingIgnoredDuringExecution"),
            f"{base}.podAffinity.preferredDuringSchedulingIgnoredDuringExecution",
        )
        p.pod_anti_affinity_preferred, e4 = _weighted_terms(
            paa.get("preferredDuringSchedulingIgnoredDuringExecution"),
            f"{base}.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution",
        )
        errs = [
            f"{what}: {e}"
            for what, e in (
                ("requiredAffinityTerms", e1),
                ("requiredAntiAffinityTerms", e2),
                ("preferredAffinityTerms", e3),
                ("preferredAntiAffinityTerms", e4),
            )
            if e is not None
        ]
        p.affinity_parse_error = (
            (errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]") if errs else None
        )
        p.has_affinity = bool(
            p.pod_affinity_required
            or p.pod_affinity_preferred
            or p.pod_anti_affinity_required
            or p.pod_anti_affinity_preferred
        )

    def with_node_name(self, node_name: str) -> Pod:
        """A shallow copy bound to ``node_name`` (what the scheduler cache *assumes*)."""
        q = _copy_pod(self)
        q.node_name = node_name
        return q

    def rebound(self, obj: Mapping[str, Any]) -> Pod | None:
        """This pod's view of ``obj`` when ``obj`` is the same pod after a binding: it differs only
        in ``spec.nodeName``, ``metadata.resourceVersion``/``managedFields`` and ``status`` (what
        ``pods/binding`` changes). Returns None when anything else changed, so the caller parses
        ``obj`` in full. Saves re-parsing every bound pod (spec, quantities, affinity)."""
        spec = obj.get("spec")
        meta = obj.get("metadata")
        old_meta = self.raw.get("metadata") or {}
        # plain dicts (every stored object) skip the Mapping ABC's instance check
        if (
            (type(spec) is not dict and not isinstance(spec, Mapping))
            or (type(meta) is not dict and not isinstance(meta, Mapping))
            or not spec.get("nodeName")
        ):
            return None
        old_spec = self.raw.get("spec") or {}
        if len(spec) != len(old_spec) + (0 if "nodeName" in old_spec else 1):
            return None
        for k, v in spec.items():
            if k != "nodeName":
                o = old_spec.get(k, _MISSING)
                if o is not v and o != v:
                    return None
        for k in (
            "name",
            "namespace",
            "uid",
            "labels",
            "annotations",
            "deletionTimestamp",
            "ownerReferences",
        ):
            v = meta.get(k)
            o = old_meta.get(k)
            if o is not v and o != v:
                return None
        status = obj.get("status") or {}
        if (type(status) is not dict and not isinstance(status, Mapping)) or status.get("startTime") != (
            self.raw.get("status") or {}
        ).get("startTime"):
            return None
        q = self.with_node_name(str(spec["nodeName"]))
        q.raw = obj  # type: ignore[assignment]
        q.resource_version = str(meta.get("resourceVersion") or "")
        q.nominated_node_name = str(status.get("nominatedNodeName") or "")
        q.phase = str(status.get("phase") or "")
        conditions = status.get("conditions")
        q.conditions = (
            tuple(c for c in conditions if type(c) is dict or isinstance(c, Mapping)) if conditions else ()
        )
        try:
            q.resource_claim_statuses = _resource_claim_statuses(status.get("resourceClaimStatuses"))
        except ManifestError:
            return None
        return q

    def stored_as(self, obj: Mapping[str, Any]) -> Pod | None:
        """This pod's view of ``obj`` when ``obj`` is the copy an API server stored of the manifest
        this pod was parsed from: the very same ``spec`` object, and ``metadata``/``status`` that
        differ at most in what creation fills in (``uid``, ``resourceVersion``,
        ``creationTimestamp``, ``generation``, the defaulted ``namespace`` and ``status.phase``;
        ``apiVersion`` is not read). Returns None otherwise, so the caller parses ``obj`` in full.
        Saves parsing every loaded pod twice (once to check the input, once from the store)."""
        spec = obj.get("spec")
        if spec is None or spec is not self.raw.get("spec"):
            return None
        meta = obj.get("metadata")
        old_meta = self.raw.get("metadata")
        status = obj.get("status") or {}
        old_status = self.raw.get("status") or {}
        if (
            not isinstance(meta, Mapping)
            or not isinstance(old_meta, Mapping)
            or not isinstance(status, Mapping)
        ):
            return None
        if str(meta.get("namespace") or "default") != self.namespace:
            return None
        if _without(meta, _STORE_META) != _without(old_meta, _STORE_META):
            return None
        if status is not old_status and _without(status, ("phase",)) != _without(old_status, ("phase",)):
            return None
        q = _copy_pod(self)
        q.raw = obj  # type: ignore[assignment]
        q.uid = str(meta.get("uid") or q.key)
        q.resource_version = str(meta.get("resourceVersion") or "")
        q.creation_timestamp = meta.get("creationTimestamp")
        q.phase = str(status.get("phase") or "")
        return q

    def with_nominated_node_name(self, node_name: str) -> Pod:
        """A shallow copy with ``status.nominatedNodeName`` replaced."""
        q = self.with_node_name(self.node_name)
        q.nominated_node_name = node_name
        return q

    @property
    def is_terminal(self) -> bool:
        """``Succeeded`` or ``Failed`` (ignored by the scheduler's pod informer)."""
        return self.phase in ("Succeeded", "Failed")

    def __repr__(self) -> str:
        return f"Pod({self.key}{' on ' + self.node_name if self.node_name else ''})"


def _slot_copier(cls: type[Pod]) -> Callable[[Pod], Pod]:
    """A function copying every slot of ``cls`` into a new instance: one straight-line function
    (generated once, as ``dataclasses`` generates ``__init__``), about a quarter of the cost of a
    ``getattr``/``setattr`` loop over the 42 slots, for the copy made at every assume and bind."""
    body = "\n".join(f"    q.{name} = self.{name}" for name in cls.__slots__)
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    exec(f"def copy(self):\n    q = _new(_cls)\n{body}\n    return q\n", namespace)  # noqa: S102 - slot names only
    return cast("Callable[[Pod], Pod]", namespace["copy"])


_copy_pod = _slot_copier(Pod)

#: metadata fields an API server fills in when it stores a new object (:meth:`Pod.stored_as`)
_STORE_META = ("uid", "resourceVersion", "creationTimestamp", "generation", "namespace")


def _without(d: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in keys}
