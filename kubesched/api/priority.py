"""Pod priority as the API server's Priority admission plugin resolves it
(``plugin/pkg/admission/priority/admission.go``): ``spec.priorityClassName`` -> the class's
``value`` (and ``preemptionPolicy``), else the ``globalDefault`` class, else 0. Used where
manifests reach the scheduler without passing an API server (``kubesched simulate``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.errors import ManifestError


def admit_priority(pod: Mapping[str, Any], classes: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Return ``pod`` with ``spec.priority``/``spec.preemptionPolicy`` resolved.

    A pod that already carries ``spec.priority`` (e.g. read from a real cluster) is returned
    unchanged. ``classes`` maps PriorityClass name -> object. Raises :class:`ManifestError`
    ``spec.priorityClassName: no PriorityClass with name X was found`` for an unknown class.
    """
    spec = pod.get("spec")
    if not isinstance(spec, Mapping) or spec.get("priority") is not None:
        return dict(pod)
    name = spec.get("priorityClassName")
    pc: Mapping[str, Any] | None
    if name:
        pc = classes.get(str(name))
        if pc is None:
            raise ManifestError("spec.priorityClassName", f"no PriorityClass with name {name} was found")
    else:
        pc = next((c for c in classes.values() if c.get("globalDefault")), None)
    if pc is None:
        return dict(pod)
    value = pc.get("value", 0)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ManifestError("value", "must be an integer", where=f"PriorityClass {name}")
    new_spec = {**spec, "priority": value}
    if not name:
        new_spec["priorityClassName"] = (pc.get("metadata") or {}).get("name")
    if "preemptionPolicy" not in spec and pc.get("preemptionPolicy"):
        new_spec["preemptionPolicy"] = pc["preemptionPolicy"]
    return {**pod, "spec": new_spec}
