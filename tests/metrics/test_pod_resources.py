"""``kube_pod_resource_request`` / ``kube_pod_resource_limit`` as upstream's resources collector
computes them: effective requests, limits with overhead only where a limit is set, units."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from kubesched.metrics.pod_resources import PodResourcesCollector


def _samples(pods: list[dict]) -> dict[tuple[str, str, str, str], float]:
    reg = CollectorRegistry()
    reg.register(PodResourcesCollector(lambda: pods))
    out = {}
    for family in reg.collect():
        for s in family.samples:
            out[(s.name, s.labels["pod"], s.labels["resource"], s.labels["unit"])] = s.value
            assert s.labels["namespace"] == "d"
    return out


def test_requests_limits_and_units() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a", "namespace": "d"},
        "spec": {
            "nodeName": "n1",
            "priority": 5,
            "overhead": {"cpu": "10m", "memory": "10Mi"},
            "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2"}}}],
            "containers": [
                {
                    "name": "c",
                    "resources": {
                        "requests": {"cpu": "250m", "memory": "1Gi"},
                        "limits": {"memory": "2Gi", "nvidia.com/gpu": "1"},
                    },
                }
            ],
        },
    }
    done = {**pod, "metadata": {"name": "done", "namespace": "d"}, "status": {"phase": "Succeeded"}}
    broken = {
        **pod,
        "metadata": {"name": "broken", "namespace": "d"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]},
    }
    got = _samples([pod, done, broken])
    assert got == {
        # init container 2 cpu > 250m: max(2, 0.25) + 10m overhead
        ("kube_pod_resource_request", "a", "cpu", "cores"): 2.01,
        ("kube_pod_resource_request", "a", "memory", "bytes"): 1024**3 + 10 * 1024**2,
        ("kube_pod_resource_request", "a", "nvidia.com/gpu", ""): 1.0,
        ("kube_pod_resource_limit", "a", "memory", "bytes"): 2 * 1024**3 + 10 * 1024**2,
        ("kube_pod_resource_limit", "a", "nvidia.com/gpu", ""): 1.0,
    }


def test_labels_of_a_pending_pod() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "d"},
        "spec": {
            "schedulerName": "kubesched",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        },
    }
    reg = CollectorRegistry()
    reg.register(PodResourcesCollector(lambda: [pod]))
    (sample,) = [s for f in reg.collect() for s in f.samples]
    assert sample.labels == {
        "namespace": "d",
        "pod": "p",
        "node": "",
        "scheduler": "kubesched",
        "priority": "",
        "resource": "cpu",
        "unit": "cores",
    }
