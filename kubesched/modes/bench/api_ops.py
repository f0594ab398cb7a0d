"""The ops of an API-mode workload (``kubesched bench --api``): the objects of ``createNodes``,
``createNamespaces`` and ``createPods`` (:class:`ObjectBuilder`, shared by the objects ``serve``
loads at start and by those created later), and :class:`LiveOps`, which runs the ops from the
first ``churn`` or ``sleep`` on through the API while ``kubesched run`` schedules, in order, as
``scheduler_perf``'s workload executor:

* ``createNodes`` / ``createNamespaces``: created through the API;
* ``createPods``: created through the API (8 requests in flight), then waits until every pod of
  the op is bound (the watch of the benchmark process sees ``spec.nodeName``);
* ``barrier``: waits until every pod of the ops so far is bound;
* ``sleep``: waits ``duration`` of wall time;
* ``churn``: creates its namespace, then ticks :class:`kubesched.modes.bench.churn.Churn` every
  ``intervalMilliseconds`` on its own thread until the workload ends.

The ops before (pods of earlier ``createPods``) have been loaded by ``serve``: :class:`LiveOps`
first waits until they are bound, as upstream's ``createPods`` waits before the next op.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kubesched.errors import AlreadyExistsError
from kubesched.modes.bench.churn import Churn
from kubesched.modes.bench.workloads import BenchWorkload, Op

__all__ = ["LIVE_OPCODES", "OP_LABEL", "LiveOps", "ObjectBuilder", "live_start"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: label on bench pods: index of the createPods op that made them
OP_LABEL = "kubesched.bench/op"
#: ops that need the workload to run over time (everything from the first one on runs live)
LIVE_OPCODES = ("churn", "sleep")
_CREATORS = 8


def live_start(w: BenchWorkload) -> int:
    """Index of the first op that must run live (``len(w.ops)`` when none)."""
    return next((i for i, op in enumerate(w.ops) if op.opcode in LIVE_OPCODES), len(w.ops))


class ObjectBuilder:
    """Names and builds the objects of the ops in workload order (node names continue across
    ``createNodes`` ops). ``measure_pods``: the measured op's pod count instead of its own."""

    def __init__(self, measure_pods: int | None = None) -> None:
        self.measure_pods = measure_pods
        self.node_seq = 0

    def nodes(self, op: Op) -> list[Obj]:
        assert op.template is not None
        meta = op.template.get("metadata") or {}
        out = []
        for k in range(op.count):
            name = (
                meta.get("name")
                if op.count == 1 and meta.get("name")
                else f"{meta.get('generateName', 'node-')}{self.node_seq}"
            )
            self.node_seq += 1
            labels = dict(meta.get("labels") or {})
            if op.label_key:
                labels[op.label_key] = op.label_values[k % len(op.label_values)]
            if op.unique_label_key:
                labels[op.unique_label_key] = name
            out.append({**op.template, "metadata": {**meta, "name": name, "labels": labels}})
        return out

    @staticmethod
    def namespaces(op: Op) -> list[str]:
        return [f"{op.prefix}-{k}" for k in range(op.count)]

    def pod_count(self, op: Op) -> int:
        return self.measure_pods if op.collect_metrics and self.measure_pods is not None else op.count

    def pods(self, index: int, op: Op) -> tuple[str, list[Obj]]:
        """``(namespace, pending pods)`` of createPods op ``index``, labelled :data:`OP_LABEL`."""
        assert op.template is not None
        ns = op.namespace or f"namespace-{index}"
        meta = op.template.get("metadata") or {}
        prefix = f"{meta.get('generateName', 'pod-')}{index}-"
        labels = {**(meta.get("labels") or {}), OP_LABEL: str(index)}
        spec = op.template.get("spec") or {}
        return ns, [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"{prefix}{k:06d}", "namespace": ns, "labels": labels},
                "spec": spec,
            }
            for k in range(self.pod_count(op))
        ]


class LiveOps:
    """Runs ``w.ops[start:]`` against ``client`` (a ``ClusterClient``) on a thread.

    ``bound(tag)``: pods of createPods op ``tag`` bound so far (from the benchmark's watch);
    ``expected``: pod counts of the createPods ops already loaded; ``timeout``: seconds any wait
    for bindings may last; ``origin``: the monotonic time :attr:`timings` count from.
    :attr:`error` holds the failure that ended the thread, if any."""

    def __init__(
        self,
        client: Any,
        w: BenchWorkload,
        start: int,
        builder: ObjectBuilder,
        bound: Callable[[str], int],
        expected: dict[str, int],
        timeout: float,
        origin: float | None = None,
    ) -> None:
        self.client = client
        self.w = w
        self.start = start
        self.builder = builder
        self.bound = bound
        self.expected = dict(expected)
        self.timeout = timeout
        self.churns: list[Churn] = []
        #: per op run: ``{"op", "opcode", "startSeconds", "seconds"}`` (monotonic seconds since ``origin``)
        self.timings: list[dict[str, Any]] = []
        self.origin = time.monotonic() if origin is None else origin
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._namespaces: set[str] = set()

    def begin(self) -> LiveOps:
        t = threading.Thread(target=self._main, name="bench-live-ops", daemon=True)
        self._threads.append(t)
        t.start()
        return self

    def stop(self) -> None:
        """End the churns and the op thread (waits up to 10 s for them)."""
        self._stop.set()
        for t in list(self._threads):
            t.join(10)

    def _main(self) -> None:
        try:
            self._wait_bound(list(self.expected), "the pods loaded at start")
            for i in range(self.start, len(self.w.ops)):
                if self._stop.is_set():
                    return
                op = self.w.ops[i]
                began = time.monotonic()
                getattr(self, f"_op_{op.opcode}")(i, op)
                self.timings.append(
                    {
                        "op": i,
                        "opcode": op.opcode,
                        "startSeconds": began - self.origin,
                        "seconds": time.monotonic() - began,
                    }
                )
        except BaseException as e:  # noqa: BLE001 - reported by the benchmark loop
            log.warning("live op failed: %s", e)
            self.error = e

    def _ensure_namespace(self, ns: str) -> None:
        if ns in self._namespaces or ns == "default":
            return
        try:
            self.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        except AlreadyExistsError:
            pass
        self._namespaces.add(ns)

    def _create_all(self, objs: list[Obj]) -> None:
        with ThreadPoolExecutor(_CREATORS, thread_name_prefix="bench-create") as pool:
            for _ in pool.map(self.client.create, objs):
                if self._stop.is_set():
                    break

    def _wait_bound(self, tags: list[str], what: str) -> None:
        deadline = time.monotonic() + self.timeout
        while not self._stop.is_set():
            missing = sum(max(0, self.expected[t] - self.bound(t)) for t in tags)
            if missing == 0:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{missing} of {sum(self.expected[t] for t in tags)} pods of {what} unbound "
                    f"after {self.timeout:.0f}s"
                )
            self._stop.wait(0.05)

    def _op_createNodes(self, i: int, op: Op) -> None:
        self._create_all(self.builder.nodes(op))

    def _op_createNamespaces(self, i: int, op: Op) -> None:
        for ns in self.builder.namespaces(op):
            self._ensure_namespace(ns)

    def _op_createPods(self, i: int, op: Op) -> None:
        ns, pods = self.builder.pods(i, op)
        self._ensure_namespace(ns)
        self.expected[str(i)] = len(pods)
        self._create_all(pods)
        self._wait_bound([str(i)], f"op {i}")

    def _op_barrier(self, i: int, op: Op) -> None:
        self._wait_bound(list(self.expected), f"the barrier of op {i}")

    def _op_sleep(self, i: int, op: Op) -> None:
        self._stop.wait(op.duration_seconds)

    def _op_churn(self, i: int, op: Op) -> None:
        churn = Churn(i, op)
        self._ensure_namespace(churn.namespace)
        self.churns.append(churn)
        t = threading.Thread(target=self._churn_loop, args=(churn,), name=f"bench-churn-{i}", daemon=True)
        self._threads.append(t)
        t.start()

    def _churn_loop(self, churn: Churn) -> None:
        while not churn.finished and not self._stop.wait(churn.interval_seconds):
            churn.tick(self.client.create, self.client.delete)
