"""``/metrics/resources``: the requests and limits of every pod the scheduler knows, as
kube-scheduler exports them (``pkg/scheduler/metrics/resources/resources.go``).

* ``kube_pod_resource_request{namespace, pod, node, scheduler, priority, resource, unit}`` and
  ``kube_pod_resource_limit{...}``: one sample per pod and resource; pods in phase Succeeded or
  Failed are left out (they hold nothing). ``node`` is ``spec.nodeName`` (empty while pending),
  ``priority`` ``spec.priority`` (empty when unset).
* Values and units: ``cpu`` in cores (``unit="cores"``), ``memory``, ``ephemeral-storage``,
  ``storage`` and ``hugepages-*`` in bytes (``unit="bytes"``), other resources as integers
  (``unit=""``). Requests are the effective pod requests (init containers, sidecars, pod-level
  resources, overhead: ``resourcehelper.PodRequests``); limits are ``resourcehelper.PodLimits``
  (the same aggregation of the containers' limits, overhead added only where a limit is set).

A pod whose spec cannot be parsed is left out (the scheduler reports it as a SchedulerError).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from kubesched.api.pod import Pod
from kubesched.api.resources import add_into, is_hugepages, pod_requests
from kubesched.errors import KubeschedError

__all__ = ["PodResourcesCollector", "pod_limits"]

_LABELS = ["namespace", "pod", "node", "scheduler", "priority", "resource", "unit"]
_BYTES = {"memory", "ephemeral-storage", "storage"}


def pod_limits(pod: Pod) -> dict[str, int]:
    """``resourcehelper.PodLimits``: container limits summed, init containers (sidecars counted as
    running) taken at their maximum, overhead added to the resources that have a limit."""
    limits = pod_requests(
        [(c.limits, c.restart_policy) for c in pod.containers],
        [(c.limits, c.restart_policy) for c in pod.init_containers],
        None,
        None,
    )
    if pod.overhead:
        add_into(limits, {k: v for k, v in pod.overhead.items() if k in limits})
    return limits


def _value_and_unit(resource: str, amount: int) -> tuple[float, str]:
    if resource == "cpu":
        return amount / 1000.0, "cores"
    if resource in _BYTES or is_hugepages(resource):
        return float(amount), "bytes"
    return float(amount), ""


class PodResourcesCollector(Collector):
    """A ``prometheus_client`` collector over ``pods()`` (the scheduler's informer pods, as dicts),
    read at each scrape."""

    def __init__(self, pods: Callable[[], Iterable[Mapping[str, Any]]]) -> None:
        self._pods = pods

    def collect(self) -> Iterator[GaugeMetricFamily]:
        requests = GaugeMetricFamily(
            "kube_pod_resource_request",
            "Resources requested by workloads on the cluster, broken down by pod. This shows the resource usage "
            "the scheduler and kubelet expect per pod for resources along with the unit for the resource if any.",
            labels=_LABELS,
        )
        limits = GaugeMetricFamily(
            "kube_pod_resource_limit",
            "Resources limit for workloads on the cluster, broken down by pod. This shows the resource usage the "
            "scheduler and kubelet expect per pod for resources along with the unit for the resource if any.",
            labels=_LABELS,
        )
        for obj in self._pods():
            if (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            try:
                pod = Pod.from_manifest(obj)
            except (KubeschedError, ValueError, TypeError, AttributeError):
                continue
            priority = (obj.get("spec") or {}).get("priority")  # unset: empty label, as upstream
            base = [
                pod.namespace,
                pod.name,
                pod.node_name or "",
                pod.scheduler_name,
                "" if priority is None else str(priority),
            ]
            for family, amounts in ((requests, pod.requests), (limits, pod_limits(pod))):
                for resource in sorted(amounts):
                    value, unit = _value_and_unit(resource, amounts[resource])
                    family.add_metric([*base, resource, unit], value)
        yield requests
        yield limits
