"""Harness of the ``kubesched run`` integration tests (tests/modes/run/).

By default each test serves an embedded cluster over the Kubernetes API in-process
(``start_server``, loopback, random port) and starts ``kubesched run --kubeconfig ...`` as
subprocesses. With ``KUBESCHED_E2E_KUBECONFIG=/path/to/kubeconfig`` the same tests run against that
real cluster instead: they work in a fresh namespace, use the cluster's own nodes, and the tests
that need ``kubesched serve``'s test hooks (faults, dropped watches, compaction, request counts)
are skipped. Every wait is bounded; every process is killed at teardown.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from prometheus_client.parser import text_string_to_metric_families

from kubesched.embedded.apiserver import ServerHandle, start_server, write_kubeconfig

E2E_KUBECONFIG = os.environ.get("KUBESCHED_E2E_KUBECONFIG") or ""
SCHEDULER_NAME = "kubesched-it"
TESTS_DIR = Path(__file__).resolve().parent
REPO = TESTS_DIR.parent

needs_hooks = pytest.mark.skipif(bool(E2E_KUBECONFIG), reason="needs kubesched serve's test hooks")


def kubesched_command(*args: str) -> list[str]:
    """``python -c 'main()' ARGS...``: the command line of ``kubesched ARGS...`` run from this tree
    (with :func:`kubesched_env`), not from the installed script."""
    return [sys.executable, "-c", "from kubesched.cli.main import main; main()", *args]


def kubesched_env() -> dict[str, str]:
    """The environment of a :func:`kubesched_command` subprocess: this one's, with ``tests/`` and
    the repository first on ``PYTHONPATH``."""
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS_DIR), str(REPO), os.environ.get("PYTHONPATH", "")]),
    }


#: Bearer tokens ``serve`` authenticates in these tests (TokenReview) and what its ABAC policy lets
#: them read on a scheduler's endpoints (SubjectAccessReview): ``READER_TOKEN`` any path,
#: ``METRICS_TOKEN`` only /metrics, ``NOBODY_TOKEN`` nothing (authenticated, no policy).
READER_TOKEN = "it-reader-token"
METRICS_TOKEN = "it-metrics-token"
NOBODY_TOKEN = "it-nobody-token"


def test_reviews() -> Any:
    """The tokens and policies of the embedded server (see the constants above)."""
    from kubesched.embedded.apiserver.reviews import AbacPolicy, Reviews, StaticToken

    return Reviews(
        {
            READER_TOKEN: StaticToken("it-reader", "u1", ("it-readers",)),
            METRICS_TOKEN: StaticToken("it-scraper", "u2"),
            NOBODY_TOKEN: StaticToken("it-nobody", "u3"),
        },
        [
            AbacPolicy(group="it-readers", non_resource_path="*", readonly=True),
            AbacPolicy(user="it-scraper", non_resource_path="/metrics", readonly=True),
        ],
    )


test_reviews.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(pred: Callable[[], Any], timeout: float, what: str, interval: float = 0.1) -> Any:
    """Poll ``pred`` until truthy (returned) or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


class Cluster:
    """The API server under test plus an official client for it."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.handle: ServerHandle | None = None
        if E2E_KUBECONFIG:
            self.kubeconfig = E2E_KUBECONFIG
            self.api = k8s_config.new_client_from_config(config_file=E2E_KUBECONFIG)
            self.namespace = f"kubesched-it-{uuid.uuid4().hex[:8]}"
            # a token allowed to read the scheduler's endpoints (the kubeconfig's own by default)
            self.reader_token = os.environ.get("KUBESCHED_E2E_TOKEN") or str(
                (self.api.configuration.api_key or {}).get("authorization", "")
            ).removeprefix("Bearer ")
        else:
            self.handle = start_server(
                bookmark_interval=0.5, reviews=test_reviews(), controllers=True, enable_test_hooks=True
            )
            self.kubeconfig = str(write_kubeconfig(tmp / "kubeconfig", self.handle.url))
            cfg = k8s.Configuration()
            cfg.host = self.handle.url
            self.api = k8s.ApiClient(cfg)
            self.namespace = "it"
            self.reader_token = READER_TOKEN
        self.core = k8s.CoreV1Api(self.api)
        self.events_api = k8s.EventsV1Api(self.api)
        self.core.create_namespace(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}}
        )

    @property
    def embedded(self) -> bool:
        return self.handle is not None

    def close(self) -> None:
        if self.handle is not None:
            self.handle.stop()
        else:
            try:
                self.core.delete_namespace(self.namespace)
            except Exception:  # noqa: BLE001 - best effort cleanup on a real cluster
                pass
        self.api.close()

    # -- objects ---------------------------------------------------------------------------------

    def store_malformed_pod(self, pod: dict[str, Any]) -> None:
        """Put ``pod`` (with wrongly typed fields, which the server's decoder refuses with a 400)
        straight into the embedded store, after the server's pod admission: what a faulty proxy or
        an older server could hand a scheduler's watch. Embedded cluster only."""
        from kubesched.embedded.apiserver.admission import admit_new_pod

        assert self.handle is not None, "only the embedded cluster stores malformed objects"
        store = self.handle.state.cluster
        store.create(admit_new_pod(pod, store))

    def add_nodes(self, n: int, cpu: str = "4") -> list[str]:
        """Create ``n`` nodes (embedded only; a real cluster uses its own)."""
        if not self.embedded:
            return [node.metadata.name for node in self.core.list_node().items]
        names = []
        for i in range(n):
            name = f"node-{i}"
            res = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
            self.core.create_node(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                    "status": {
                        "capacity": res,
                        "allocatable": res,
                        "conditions": [{"type": "Ready", "status": "True"}],
                    },
                }
            )
            names.append(name)
        return names

    def grow_node(self, name: str, cpu: str) -> None:
        """Raise a node's cpu capacity and allocatable (a status patch, as a kubelet would write it;
        straight in the embedded store, so it is not counted as an API request)."""
        res = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
        if self.handle is not None:
            self.handle.cluster.patch_status("Node", None, name, {"capacity": res, "allocatable": res})
        else:
            self.core.patch_node_status(name, {"status": {"capacity": res, "allocatable": res}})

    def pod_manifest(
        self, name: str, cpu: str = "10m", labels: dict[str, str] | None = None
    ) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": self.namespace, "labels": labels or {}},
            "spec": {
                "schedulerName": SCHEDULER_NAME,
                "terminationGracePeriodSeconds": 0,
                "containers": [
                    {
                        "name": "c",
                        "image": "registry.k8s.io/pause:3.9",
                        "resources": {"requests": {"cpu": cpu, "memory": "8Mi"}},
                    }
                ],
            },
        }

    def create_pod(self, name: str, cpu: str = "10m", labels: dict[str, str] | None = None) -> None:
        """Create a pod over the API (official client)."""
        self.core.create_namespaced_pod(self.namespace, self.pod_manifest(name, cpu, labels))

    def store_create_pod(self, name: str, cpu: str = "10m") -> None:
        """Create a pod straight in the embedded store (not counted as an API request)."""
        assert self.handle is not None
        self.handle.cluster.create(self.pod_manifest(name, cpu))

    def pods(self) -> dict[str, dict[str, Any]]:
        """Pods of the test namespace as plain dicts, by name."""
        resp = self.core.list_namespaced_pod(self.namespace, _preload_content=False)
        return {p["metadata"]["name"]: p for p in json.loads(resp.data)["items"]}

    def bound(self) -> dict[str, str]:
        return {n: p["spec"].get("nodeName") for n, p in self.pods().items() if p["spec"].get("nodeName")}

    def events(self, reason: str | None = None) -> list[dict[str, Any]]:
        """events.k8s.io/v1 Events of the test namespace (optionally one reason), oldest first."""
        resp = self.events_api.list_namespaced_event(self.namespace, _preload_content=False)
        items = json.loads(resp.data)["items"]
        items = [e for e in items if e.get("reportingController") == SCHEDULER_NAME]
        if reason is not None:
            items = [e for e in items if e.get("reason") == reason]
        return sorted(items, key=lambda e: (e.get("eventTime") or "", e["metadata"]["name"]))

    def wait_bound(self, names: list[str], timeout: float = 30) -> dict[str, str]:
        def done() -> dict[str, str] | None:
            b = self.bound()
            return b if all(n in b for n in names) else None

        result: dict[str, str] = wait_for(done, timeout, f"pods {names} bound")
        return result

    # -- test hooks (embedded only) ----------------------------------------------------------------

    def hook(self, method: str, path: str, body: Any = None) -> Any:
        assert self.handle is not None
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            self.handle.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read() or b"null")


def scheduler_config(
    tmp: Path,
    namespace: str,
    *,
    lease: bool = False,
    permit_plugin: bool = False,
    qps: float | None = None,
    burst: int | None = None,
    lease_timings: tuple[str, str, str] = ("2s", "1500ms", "500ms"),
) -> Path:
    """A KubeSchedulerConfiguration with profile ``kubesched-it`` (short lease timings when
    ``lease``: duration, renew deadline, retry period; the test Permit plugin when ``permit_plugin``)."""
    plugins = ""
    if permit_plugin:
        plugins = textwrap.dedent("""\
          plugins:
            permit:
              enabled:
              - name: TestPermit
        """)
    doc = textwrap.dedent(f"""\
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        podInitialBackoffSeconds: 1
        podMaxBackoffSeconds: 2
        leaderElection:
          leaderElect: {"true" if lease else "false"}
          leaseDuration: {lease_timings[0]}
          renewDeadline: {lease_timings[1]}
          retryPeriod: {lease_timings[2]}
          resourceName: kubesched-it
          resourceNamespace: {namespace}
        """)
    if qps is not None or burst is not None:
        doc += "clientConnection:\n"
        if qps is not None:
            doc += f"  qps: {qps}\n"
        if burst is not None:
            doc += f"  burst: {burst}\n"
    doc += "profiles:\n- schedulerName: kubesched-it\n" + textwrap.indent(plugins, "  ")
    path = tmp / f"config-{uuid.uuid4().hex[:6]}.yaml"
    path.write_text(doc)
    return path


class Replica:
    """One ``kubesched run`` subprocess with its plain-HTTP status port."""

    def __init__(
        self, cluster: Cluster, config: Path, *args: str, name: str = "replica", kubeconfig_flag: bool = True
    ) -> None:
        self.port = free_port()
        self.log_path = cluster.tmp / f"{name}-{self.port}.log"
        cmd = kubesched_command(
            "run",
            *(["--kubeconfig", cluster.kubeconfig] if kubeconfig_flag else []),
            "--config",
            str(config),
            "--secure-port",
            "0",
            "--port",
            str(self.port),
            "--leader-elect-identity",
            f"{name}-{self.port}",
            "-v",
            "2",
            *args,
        )
        self._log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, env=kubesched_env())
        self.identity = f"{name}-{self.port}"
        self.reader_token = cluster.reader_token

    def get(self, path: str, timeout: float = 5, token: str | None = "") -> tuple[int, bytes, dict[str, str]]:
        """GET ``path`` from the plain-HTTP port with a bearer ``token`` (default: anonymous for the
        health paths, which need no review -- so they answer while the API server is down -- and
        the cluster's reader token for the others; None: anonymous)."""
        if token == "":
            token = None if path.split("?")[0] in ("/healthz", "/readyz", "/livez") else self.reader_token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", headers=headers)
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.read(), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, e.read(), dict(e.headers)
        except OSError:
            return 0, b"", {}

    def samples(self, name: str) -> dict[tuple[tuple[str, str], ...], float]:
        """The samples of metric ``name`` on ``/metrics``, keyed by their sorted labels."""
        code, body, _ = self.get("/metrics")
        assert code == 200
        out = {}
        for fam in text_string_to_metric_families(body.decode()):
            for s in fam.samples:
                if s.name == name:
                    out[tuple(sorted(s.labels.items()))] = s.value
        return out

    def wait_ready(self, timeout: float = 30) -> None:
        def ready() -> bool:
            if self.proc.poll() is not None:
                raise AssertionError(f"kubesched run exited with {self.proc.returncode}:\n{self.log()}")
            return self.get("/readyz", 1)[0] == 200

        wait_for(ready, timeout, "readyz")

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text()

    def terminate(self, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout)
        return rc

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        self.kill()
        self._log.close()


def replicas_fixture(cluster: Cluster) -> Iterator[list[Replica]]:
    started: list[Replica] = []
    yield started
    for r in started:
        r.stop()
