"""Resource arithmetic: the ``Resource`` struct (``pkg/scheduler/framework/types.go`` ``Resource``) and
effective pod requests (``k8s.io/component-helpers/resource/helpers.go`` ``PodRequests``).

Amounts are integers: ``cpu`` in millicores, everything else in base units (bytes for
memory/ephemeral-storage/hugepages, counts for ``pods`` and extended resources).
Follows ``pkg/scheduler/framework/types.go`` (``Resource``) and
``k8s.io/component-helpers/resource/helpers.go`` (``PodRequests``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

#: ``DefaultMilliCPURequest`` (millicores) used for non-zero requests.
DEFAULT_MILLI_CPU_REQUEST = 100
#: ``DefaultMemoryRequest`` (bytes) used for non-zero requests.
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
NON_ZERO_DEFAULTS: Mapping[str, int] = {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST}


def is_extended_resource(name: str) -> bool:
    """``IsExtendedResourceName``: a ``domain/name`` resource outside ``kubernetes.io/``, not ``requests.*``."""
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def is_hugepages(name: str) -> bool:
    """True for ``hugepages-<size>``."""
    return name.startswith("hugepages-")


def is_attachable_volumes(name: str) -> bool:
    """True for ``attachable-volumes-*``."""
    return name.startswith("attachable-volumes-")


def is_scalar_resource(name: str) -> bool:
    """``IsScalarResourceName``: extended, hugepages, attachable volumes, or other prefixed native names."""
    return is_extended_resource(name) or is_hugepages(name) or is_attachable_volumes(name) or "/" in name


class Resource:
    """``framework.Resource``: milli_cpu (millicores), memory and ephemeral_storage (bytes),
    allowed_pod_number (count) and scalar resources (name -> integer amount)."""

    __slots__ = ("milli_cpu", "memory", "ephemeral_storage", "allowed_pod_number", "scalar")

    def __init__(
        self,
        milli_cpu: int = 0,
        memory: int = 0,
        ephemeral_storage: int = 0,
        allowed_pod_number: int = 0,
        scalar: dict[str, int] | None = None,
    ) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pod_number = allowed_pod_number
        self.scalar: dict[str, int] = scalar if scalar is not None else {}

    @classmethod
    def from_list(cls, rl: Mapping[str, int]) -> Resource:
        """Build from a parsed ResourceList (``cpu`` already in millicores)."""
        r = cls()
        r.add_list(rl)
        return r

    def add_list(self, rl: Mapping[str, int], sign: int = 1) -> None:
        """Add (``sign=1``) or subtract (``sign=-1``) a parsed ResourceList."""
        for name, q in rl.items():
            if name == CPU:
                self.milli_cpu += sign * q
            elif name == MEMORY:
                self.memory += sign * q
            elif name == EPHEMERAL_STORAGE:
                self.ephemeral_storage += sign * q
            elif name == PODS:
                self.allowed_pod_number += sign * q
            elif is_scalar_resource(name):
                self.scalar[name] = self.scalar.get(name, 0) + sign * q

    def get(self, name: str) -> int:
        """The amount of ``name`` (0 if absent)."""
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def has(self, name: str) -> bool:
        """True if ``name`` is tracked (native names always are; scalars when present)."""
        return name in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) or name in self.scalar

    def clone(self) -> Resource:
        """A deep copy."""
        return Resource(
            self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number, dict(self.scalar)
        )

    def as_dict(self) -> dict[str, int]:
        """The non-zero amounts as a ResourceList-shaped dict."""
        d = {
            CPU: self.milli_cpu,
            MEMORY: self.memory,
            EPHEMERAL_STORAGE: self.ephemeral_storage,
            PODS: self.allowed_pod_number,
            **self.scalar,
        }
        return {k: v for k, v in d.items() if v}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Resource) and self.as_dict() == other.as_dict()

    def __repr__(self) -> str:
        return f"Resource({self.as_dict()})"


def add_into(acc: dict[str, int], rl: Mapping[str, int]) -> None:
    """``acc += rl`` element-wise."""
    for k, v in rl.items():
        acc[k] = acc.get(k, 0) + v


def _apply_non_missing(r: Mapping[str, int], non_missing: Mapping[str, int] | None) -> Mapping[str, int]:
    if not non_missing:
        return r
    out = dict(r)
    for k, v in non_missing.items():
        if k not in out:
            out[k] = v
    return out


def pod_requests(
    containers: Iterable[tuple[Mapping[str, int], str | None]],
    init_containers: Iterable[tuple[Mapping[str, int], str | None]],
    pod_level: Mapping[str, int] | None,
    overhead: Mapping[str, int] | None,
    non_missing: Mapping[str, int] | None = None,
) -> dict[str, int]:
    """Effective pod requests (``k8s.io/component-helpers/resource/helpers.go`` ``PodRequests``,
    ``resource.PodRequests``).

    ``containers``/``init_containers`` are ``(requests, restartPolicy)`` pairs in declaration
    order; ``pod_level`` is ``spec.resources.requests`` (or ``None``); ``overhead`` is
    ``spec.overhead``. ``non_missing`` gives per-container defaults for absent keys (used for
    non-zero requests). When pod-level requests are set, defaults apply only to resources
    missing at both container and pod level.
    """
    if (
        not pod_level
        and not overhead
        and type(containers) is list
        and len(containers) == 1
        and type(init_containers) is list
        and not init_containers
    ):
        # one container, nothing else: its requests with the defaults for what it leaves out
        return dict(_apply_non_missing(containers[0][0], non_missing))
    pod_level_set = bool(pod_level) and any(k in (CPU, MEMORY) or is_hugepages(k) for k in (pod_level or {}))
    container_defaults = non_missing
    if pod_level_set and non_missing:
        container_defaults = {k: v for k, v in non_missing.items() if k not in (pod_level or {})}
    reqs: dict[str, int] = {}
    for r, _ in containers:
        add_into(reqs, _apply_non_missing(r, container_defaults))
    sidecar_sum: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for r, policy in init_containers:
        rr = _apply_non_missing(r, container_defaults)
        if policy == "Always":
            add_into(reqs, rr)
            add_into(sidecar_sum, rr)
            use = dict(sidecar_sum)
        else:
            use = dict(rr)
            add_into(use, sidecar_sum)
        for k, v in use.items():
            init_max[k] = max(init_max.get(k, v), v)
    for k, v in init_max.items():
        reqs[k] = max(reqs.get(k, v), v)
    if pod_level_set and pod_level:
        for name, q in pod_level.items():
            if name in (CPU, MEMORY) or is_hugepages(name):
                reqs[name] = q
    if overhead:
        add_into(reqs, overhead)
    return reqs
