"""Checks of every loadable kind, applied when objects are loaded (``simulate``, ``serve``, ``ui``)
as the API server applies them on create: an object it would refuse is refused here with a
one-line :class:`~kubesched.errors.ManifestError` naming the field, instead of surfacing later as
a plugin error (``Error running PreFilter plugin "VolumeBinding": ...``) or being silently
ignored (a PodDisruptionBudget whose ``minAvailable`` cannot be read protects nothing).

Each kind is first checked against the field types of the Kubernetes API
(:func:`kubesched.api.shape.check_shape`), then by its row's ``validate`` check in the Kind
registry (:func:`kubesched.api.kinds.validator`; the typed parser the scheduler uses when the row
names no check), which are the functions here, the upstream validation of the fields the
scheduler reads:

- PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode: parsed as the volume plugins
  parse them (quantities of ``spec.capacity`` / ``spec.resources.requests``, node affinity);
  ``volumeBindingMode`` as ``pkg/apis/storage/validation: validateVolumeBindingMode``.
- CSIStorageCapacity: ``capacity`` and ``maximumVolumeSize`` quantities, ``nodeTopology`` selector.
- PodDisruptionBudget: ``pkg/apis/policy/validation/validation.go:
  ValidatePodDisruptionBudgetSpec`` (``minAvailable``/``maxUnavailable`` an integer >= 0 or a
  percentage up to 100 %, not both) and the selector.
- Service, ReplicationController: ``spec.selector`` label keys; ReplicaSet, StatefulSet:
  ``spec.selector`` as a label selector.
- Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, ReplicationController: ``spec.template``
  as a Pod (``core/validation: ValidatePodTemplateSpec``), so that a template the pods' parser
  refuses is reported at the workload's file and name, not later at each pod it would create.
- PriorityClass: ``pkg/apis/scheduling/validation: ValidatePriorityClass`` (a user-defined
  value at most 1,000,000,000).

Errors are not located (``spec.minAvailable: Invalid value: "lots": ...``); the loader prefixes
the file, document and object.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kubesched.api import kinds
from kubesched.api.label_validation import go_quote
from kubesched.api.labels import label_key_error, parse_label_selector
from kubesched.api.pod import Pod
from kubesched.api.quantity import QuantityError, value
from kubesched.api.shape import check_shape
from kubesched.api.storage import StorageClass
from kubesched.errors import ManifestError

__all__ = [
    "MAX_INT32",
    "check_csi_storage_capacity",
    "check_daemon_set",
    "check_job",
    "check_replication_controller",
    "check_workload",
    "check_label_selector",
    "check_loaded_object",
    "check_map_selector",
    "check_pdb",
    "check_pod",
    "check_pod_template",
    "check_priority_class",
    "check_storage_class",
]

#: ``pkg/apis/scheduling``: HighestUserDefinablePriority.
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
_PERCENT = re.compile(r"^[0-9]+%$")
_PERCENT_MSG = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or "
    "'93%', regex used for validation is '[0-9]+%')"
)
_BINDING_MODES = ("Immediate", "WaitForFirstConsumer")


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if type(spec) is dict or isinstance(spec, Mapping) else {}


def _invalid(path: str, raw: Any, message: str) -> ManifestError:
    shown = go_quote(raw) if isinstance(raw, str) else str(raw)
    return ManifestError(path, f"Invalid value: {shown}: {message}")


def _int_or_percent(raw: Any, path: str) -> None:
    """``ValidatePositiveIntOrPercent`` and ``IsNotMoreThan100Percent``."""
    if raw is None:
        return
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        raise _invalid(path, raw, "must be an integer or percentage (e.g '5%')")
    if isinstance(raw, int):
        if raw < 0:
            raise _invalid(path, raw, "must be greater than or equal to 0")
        return
    if not _PERCENT.match(raw):
        raise _invalid(path, raw, _PERCENT_MSG)
    if int(raw[:-1]) > 100:
        raise _invalid(path, raw, "must not be greater than 100%")


def _quantity(raw: Any, path: str) -> None:
    if raw is None:
        return
    try:
        value(raw)
    except QuantityError as e:
        raise ManifestError(path, str(e)) from None


def _map_selector(raw: Any, path: str) -> None:
    """A ``map[string]string`` selector: every key a valid label key."""
    if not isinstance(raw, Mapping):
        return
    for k in sorted(raw, key=str):
        bad = label_key_error(str(k))
        if bad is not None:
            raise ManifestError(path, bad)


def check_storage_class(obj: Mapping[str, Any]) -> None:
    """The parser's checks and ``validateVolumeBindingMode``."""
    StorageClass.from_obj(obj)
    mode = obj.get("volumeBindingMode")
    if mode is not None and mode not in _BINDING_MODES:
        supported = ", ".join(f'"{m}"' for m in _BINDING_MODES)
        raise ManifestError(
            "volumeBindingMode", f"Unsupported value: {go_quote(str(mode))}: supported values: {supported}"
        )


def check_csi_storage_capacity(obj: Mapping[str, Any]) -> None:
    """``capacity`` and ``maximumVolumeSize`` quantities, ``nodeTopology`` a label selector."""
    _quantity(obj.get("capacity"), "capacity")
    _quantity(obj.get("maximumVolumeSize"), "maximumVolumeSize")
    parse_label_selector(obj.get("nodeTopology"), "nodeTopology")


def check_pdb(obj: Mapping[str, Any]) -> None:
    """``ValidatePodDisruptionBudgetSpec`` and the selector."""
    spec = _spec(obj)
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        raise ManifestError("spec", "minAvailable and maxUnavailable cannot be both set")
    _int_or_percent(spec.get("minAvailable"), "spec.minAvailable")
    _int_or_percent(spec.get("maxUnavailable"), "spec.maxUnavailable")
    parse_label_selector(spec.get("selector"), "spec.selector")


def check_map_selector(obj: Mapping[str, Any]) -> None:
    """``spec.selector`` as a ``map[string]string`` selector (Service, ReplicationController)."""
    _map_selector(_spec(obj).get("selector"), "spec.selector")


#: the largest value of an int32 field (``spec.replicas``, a Job's counts)
MAX_INT32 = 2**31 - 1


def _nonnegative_int32(spec: Mapping[str, Any], field: str, path: str) -> None:
    """``ValidateNonnegativeField`` on an int32 field (its JSON decoding refuses values past
    2^31 - 1); absent is fine."""
    raw = spec.get(field)
    if raw is None:
        return
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise _invalid(path, raw, "must be an integer")
    if raw < 0:
        raise _invalid(path, raw, "must be greater than or equal to 0")
    if raw > MAX_INT32:
        raise _invalid(path, raw, f"must be a 32-bit integer (at most {MAX_INT32})")


def _int32(raw: Any, path: str) -> None:
    """An int32 field's range (its JSON decoding into the Go type refuses anything past it)."""
    if isinstance(raw, int) and not isinstance(raw, bool) and not -(2**31) <= raw <= MAX_INT32:
        raise _invalid(path, raw, f"must be a 32-bit integer (between {-(2**31)} and {MAX_INT32})")


def _port(raw: Any, path: str, *, optional: bool) -> None:
    """``validation.IsValidPortNum`` (``core/validation: validateContainerPorts``): 1-65535;
    ``containerPort`` is required (0 or absent: ``Required value``), ``hostPort`` 0 is unset."""
    if raw is None or raw == 0:
        if not optional:
            raise ManifestError(path, "Required value")
        return
    if isinstance(raw, bool) or not isinstance(raw, int):
        return
    if not 1 <= raw <= 65535:
        raise _invalid(path, raw, "must be between 1 and 65535, inclusive")


def check_pod(obj: Mapping[str, Any]) -> Pod:
    """A Pod as the API server checks it on create: ``spec.priority`` an int32, each container's
    ``containerPort``/``hostPort`` in 1-65535 (``core/validation: validateContainerPorts``), then
    the scheduler's parser (:meth:`kubesched.api.pod.Pod.from_manifest`: quantities, selectors,
    ...). Raises :class:`ManifestError`, e.g. ``spec.containers[0].ports[0].containerPort:
    Invalid value: 99999999: must be between 1 and 65535, inclusive``. Returns the parsed Pod."""
    spec = _spec(obj)
    _int32(spec.get("priority"), "spec.priority")
    for field in ("initContainers", "containers"):
        containers = spec.get(field)
        if not containers or not isinstance(containers, list):
            continue
        for i, c in enumerate(containers):
            ports = c.get("ports") if type(c) is dict or isinstance(c, Mapping) else None
            if not ports or not isinstance(ports, list):
                continue
            for j, p in enumerate(ports):
                if type(p) is dict or isinstance(p, Mapping):
                    at = f"spec.{field}[{i}].ports[{j}]"
                    _port(p.get("containerPort"), f"{at}.containerPort", optional=False)
                    _port(p.get("hostPort"), f"{at}.hostPort", optional=True)
    return Pod.from_manifest(obj)


def check_pod_template(obj: Mapping[str, Any]) -> None:
    """``spec.template`` parsed as the pods a controller creates from it are parsed
    (:meth:`kubesched.api.pod.Pod.from_manifest`; ``core/validation: ValidatePodTemplateSpec``);
    absent is fine here (the workload's own check requires it where the API server does). Raises
    :class:`ManifestError` at ``spec.template.<field>``, e.g. ``spec.template.spec.containers:
    Required value``."""
    template = _spec(obj).get("template")
    if template is None:
        return
    if not isinstance(template, Mapping):
        raise ManifestError("spec.template", "must be an object")
    meta = template.get("metadata")
    meta = dict(meta) if isinstance(meta, Mapping) else {}
    meta.setdefault("name", "template")  # the controller names each pod; the template has none
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": template.get("spec")}
    try:
        check_pod(pod)
    except ManifestError as e:
        raise e.under("spec.template") from None


def check_daemon_set(obj: Mapping[str, Any]) -> None:
    """``spec.template`` as a Pod (:func:`check_pod_template`; ``apps/validation:
    ValidateDaemonSetSpec``)."""
    check_pod_template(obj)


def check_workload(obj: Mapping[str, Any]) -> None:
    """``spec.replicas`` (non-negative int32), ``spec.selector`` as a non-empty label selector
    that matches ``spec.template.metadata.labels`` (ReplicaSet, StatefulSet, Deployment:
    ``apps/validation: ValidateReplicaSetSpec`` and its siblings; the controllers would otherwise
    create pods they release at once, without end)."""
    spec = _spec(obj)
    _nonnegative_int32(spec, "replicas", "spec.replicas")
    selector = parse_label_selector(spec.get("selector"), "spec.selector")
    template = spec.get("template")
    meta = template.get("metadata") if isinstance(template, Mapping) else None
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    if selector is None or selector.empty:
        raise _invalid("spec.selector", "{}", "empty selector is invalid for this workload")
    labels = labels if isinstance(labels, Mapping) else {}
    if not selector.matches({str(k): str(v) for k, v in labels.items()}):
        raise ManifestError(
            "spec.template.metadata.labels",
            "Invalid value: the template's labels: `selector` does not match template `labels`",
        )
    check_pod_template(obj)


def check_replication_controller(obj: Mapping[str, Any]) -> None:
    """``spec.replicas`` (non-negative int32) and ``spec.selector`` as a map selector
    (``core/validation: ValidateReplicationControllerSpec``)."""
    _nonnegative_int32(_spec(obj), "replicas", "spec.replicas")
    check_map_selector(obj)
    check_pod_template(obj)


def check_job(obj: Mapping[str, Any]) -> None:
    """``spec.parallelism``, ``spec.completions`` and ``spec.backoffLimit`` non-negative int32
    (``batch/validation: validateJobSpec``)."""
    spec = _spec(obj)
    for field in ("parallelism", "completions", "backoffLimit"):
        _nonnegative_int32(spec, field, f"spec.{field}")
    check_pod_template(obj)


def check_label_selector(obj: Mapping[str, Any]) -> None:
    """``spec.selector`` as a label selector (ReplicaSet, StatefulSet)."""
    parse_label_selector(_spec(obj).get("selector"), "spec.selector")


def check_priority_class(obj: Mapping[str, Any]) -> None:
    """``ValidatePriorityClass``: a user-defined value at most 1,000,000,000."""
    raw = obj.get("value")
    name = str((obj.get("metadata") or {}).get("name") or "")
    if isinstance(raw, int) and raw > HIGHEST_USER_DEFINABLE_PRIORITY and not name.startswith("system-"):
        raise ManifestError(
            "value",
            f"Forbidden: maximum allowed value of a user defined priority is "
            f"{HIGHEST_USER_DEFINABLE_PRIORITY}",
        )


def check_loaded_object(kind: str, obj: Any) -> None:
    """Check ``obj`` of ``kind`` as the API server would on create: field types, then the kind's
    check from the registry (see the module docstring). Raises :class:`ManifestError` with the
    field path (unlocated)."""
    check_shape(obj, kind)
    check = kinds.validator(kind)
    if check is not None and isinstance(obj, Mapping):
        try:
            check(obj)
        except ManifestError:
            raise
        except (TypeError, ValueError, AttributeError, KeyError, IndexError) as e:
            raise ManifestError("", f"cannot be read: {type(e).__name__}: {e}") from None
