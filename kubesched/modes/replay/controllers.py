"""The workload controllers of a replay: the Deployments, ReplicaSets, Jobs, DaemonSets and
StatefulSets of a trace's ``objects`` get their pods over virtual time from the same controllers
``serve`` runs (:func:`~kubesched.embedded.controllers.manager.start_workload_controllers`, on the
replay's :class:`~kubesched.clock.VirtualClock`), so a Job runs its completions, a ReplicaSet
replaces a pod the scheduler preempted and a DaemonSet gets a pod on every node that joins.

What the replay's kubelet does with those pods (the trace's own pods are measured and deleted as
before, :mod:`kubesched.modes.replay.run`):

* a controller's pod is measured like a trace pod from its creation (its arrival) and gets a
  timeline; its container start writes ``status`` ``Running`` with the ``Ready`` condition
  (``kubesched.embedded.kubelet.pod_status.running_status``: StatefulSets and Deployments count
  ready pods);
* it runs for the seconds of its annotation ``kubesched.io/run-seconds`` (the convention of
  ``serve --kubelet``'s kubelets, :data:`~kubesched.embedded.kubelet.live.RUN_SECONDS_ANNOTATION`;
  without it, until the replay ends), then ends ``Succeeded`` -- or ``Failed`` with the exit code
  of its annotation ``kubesched.io/exit-code`` when that is not 0
  (:data:`~kubesched.embedded.kubelet.live.EXIT_CODE_ANNOTATION`) -- and stays in the store as a
  finished pod does, so its Job counts it (and its ``podFailurePolicy`` matches the exit code);
* a graceful deletion (a controller scaling down, a Job's remaining pods once it is done, the
  garbage collector) stops its containers at once and removes the pod when its grace period is
  over (the replay has no kubelet to confirm it); it is ``preempted`` only when the scheduler
  deleted it (``DisruptionTarget`` condition with reason ``PreemptionByScheduler``).

Pods get their ``spec.priority`` from their PriorityClass (the trace's objects) as in
``simulate``. Every container image of a workload's pod template must be in the catalogue, as for
the trace's pods (:func:`check_workload_images`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.api.priority import admit_priority
from kubesched.api.timestamps import parse_rfc3339
from kubesched.clock import Clock
from kubesched.embedded.controllers.manager import WORKLOAD_KINDS, start_workload_controllers
from kubesched.embedded.kubelet.live import RUN_SECONDS_ANNOTATION, parse_run_seconds
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import ManifestError
from kubesched.images.catalogue import ImageCatalogue

__all__ = [
    "ReplayControllers",
    "check_workload_images",
    "deletion_due",
    "preempted_by_scheduler",
    "run_seconds",
]


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, Mapping) else {}


def _pod_template_spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``spec.template.spec`` of a workload (``spec.jobTemplate`` is not a kind replayed)."""
    spec = obj.get("spec")
    template = spec.get("template") if isinstance(spec, Mapping) else None
    pod_spec = template.get("spec") if isinstance(template, Mapping) else None
    return pod_spec if isinstance(pod_spec, Mapping) else {}


def check_workload_images(objects: Sequence[Mapping[str, Any]], catalogue: ImageCatalogue) -> None:
    """Raise :class:`~kubesched.errors.ManifestError` (``Job ns/name:
    spec.template.spec.containers[i].image``) for the first workload among ``objects`` whose pod
    template names an image that is not in ``catalogue``."""
    for obj in objects:
        kind = obj.get("kind")
        if kind not in WORKLOAD_KINDS:
            continue
        spec = _pod_template_spec(obj)
        for field_name in ("initContainers", "containers"):
            containers = spec.get(field_name)
            for i, c in enumerate(containers if isinstance(containers, list) else []):
                image = c.get("image") if isinstance(c, Mapping) else None
                if not isinstance(image, str) or catalogue.get(image) is None:
                    meta = _meta(obj)
                    raise ManifestError(
                        f"spec.template.spec.{field_name}[{i}].image",
                        f"image {image!r} is not in the image catalogue {catalogue.where}",
                        f"{kind} {meta.get('namespace') or 'default'}/{meta.get('name')}",
                    )


def run_seconds(pod: Mapping[str, Any]) -> float | None:
    """Seconds the pod runs after its container started (``kubesched.io/run-seconds``); None
    without the annotation or with a value that is not a finite number >= 0 (it then runs until
    the replay ends)."""
    annotations = _meta(pod).get("annotations")
    raw = annotations.get(RUN_SECONDS_ANNOTATION) if isinstance(annotations, Mapping) else None
    return None if raw is None else parse_run_seconds(raw)


def preempted_by_scheduler(pod: Mapping[str, Any]) -> bool:
    """Whether the pod carries the ``DisruptionTarget`` condition the scheduler's preemption
    writes before deleting a victim (reason ``PreemptionByScheduler``)."""
    status = pod.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    return any(
        isinstance(c, Mapping)
        and c.get("type") == "DisruptionTarget"
        and c.get("reason") == "PreemptionByScheduler"
        for c in (conditions if isinstance(conditions, list) else [])
    )


def deletion_due(pod: Mapping[str, Any]) -> float | None:
    """``metadata.deletionTimestamp`` in epoch seconds (None when not being deleted)."""
    stamp = _meta(pod).get("deletionTimestamp")
    if not stamp:
        return None
    try:
        return parse_rfc3339(str(stamp))
    except ValueError:
        return None


class ReplayControllers:
    """The workload controllers over a replay's ``cluster`` on ``clock``; pods they create get
    their priority from the PriorityClasses of ``objects``. :meth:`start` starts them (they sync
    as the clock advances); :meth:`stop` ends them."""

    def __init__(self, cluster: MemoryCluster, clock: Clock, objects: Sequence[Mapping[str, Any]]) -> None:
        self.cluster = cluster
        self.clock = clock
        self.classes = {str(_meta(o).get("name")): o for o in objects if o.get("kind") == "PriorityClass"}
        self._controllers: list[Any] = []

    def start(self) -> ReplayControllers:
        classes = self.classes
        self._controllers = start_workload_controllers(
            self.cluster, self.clock, lambda pod: admit_priority(pod, classes)
        )
        return self

    def stop(self) -> None:
        for c in self._controllers:
            c.stop()
        self._controllers = []
