"""The pre-pull controller of ``kubesched run --prepull``: the planner's decisions carried out on a
real cluster with puller pods.

It runs inside the scheduler process, beside the scheduling loop, because the planner reads what
the scheduler already holds: its informers (pod arrivals and bindings, nodes) and its cache
(room per node, including pods assumed and not yet bound), both through the scheduler's own
read surface (:class:`SchedulerReader`: ``objects``, ``node_info_copies``, ``profile_name_for``,
``add_event_handlers``); it writes only through the cluster client. A separate controller would rebuild
both from its own watches; inside ``run`` it costs one tick every ``interval`` seconds, and it
acts only while the process holds the scheduler's lease (one active pre-puller per cluster).

Every tick (:meth:`PrePullController.tick`):

1. **reap** the controller's puller pods (:mod:`kubesched.prepull.puller_pod`): a pod whose pulls
   are done (``succeeded`` or ``failed``) or older than ``timeout_seconds`` (``timeout``) is
   deleted, counted in ``kubesched_prepulls_total{outcome}`` per image (bytes in
   ``kubesched_prepull_bytes_total``) and reported as an Event on its Node (``PrePulled``,
   ``PrePullFailed``);
2. **plan**: :class:`~kubesched.prepull.planner.PrePullPlanner` ticks with a
   :class:`~kubesched.prepull.cluster_view.ClusterImageView` as its node-image model, on a copy of
   the scheduler cache's NodeInfos. Its image facts are the catalogue's, then those of registry
   lookups (:mod:`kubesched.prepull.image_facts`, the plugins' layer source when a registry
   settings file is given): images the tick's pods and nodes name for the first time are looked
   up before the planner runs;
3. **act**: one puller pod per chosen node, with every image the planner chose for it (at most
   one puller pod per node at a time, at most ``max_new_per_tick`` new ones per tick, never on a
   node with ``DiskPressure``), and an Event ``PrePulling`` on the Node.

Pre-pull precision (:mod:`kubesched.prepull.precision`) follows pod bindings and the nodes'
``status.images``: ``kubesched_prepull_precision`` and ``kubesched_prepull_used_total``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from kubesched.api.pod import Pod
from kubesched.api.timestamps import rfc3339_micro
from kubesched.client.client import ClusterClient
from kubesched.client.informers import ResourceEventHandlerFuncs as EventHandlers
from kubesched.client.kube import KubeApiError
from kubesched.clock import Clock
from kubesched.errors import ConfigError, KubeschedError, NotFoundError
from kubesched.framework.node_info import NodeInfo
from kubesched.images.catalogue import ImageCatalogue, load_catalogue
from kubesched.images.registry_layers import shared_registry_source
from kubesched.prepull.cluster_view import ClusterImageView, has_disk_pressure
from kubesched.prepull.hook import PlannerContext
from kubesched.prepull.image_facts import ImageFacts
from kubesched.prepull.mechanisms import ActivePull, PullerPods, PullMechanism, discover
from kubesched.prepull.metrics import PrePullMetrics
from kubesched.prepull.planner import PrePullPlanner
from kubesched.prepull.precision import PrecisionTracker
from kubesched.prepull.puller_pod import DEFAULT_PRIORITY_CLASS, is_puller, priority_class

__all__ = ["PrePullController", "REPORTING_CONTROLLER", "SchedulerReader"]

log = logging.getLogger(__name__)

REPORTING_CONTROLLER = "kubesched-prepull"


class _PlannerSchedulerView:
    """The planner's view of the scheduler (``node_infos()``): this tick's NodeInfo copies."""

    def __init__(self) -> None:
        self.infos: list[NodeInfo] = []

    def node_infos(self) -> Iterable[NodeInfo]:
        return self.infos


class SchedulerReader(Protocol):
    """What the controller reads of the :class:`~kubesched.scheduler.core.Scheduler` (its read
    surface; never its queue, cache or informers)."""

    def objects(self, kind: str, namespace: str | None = None) -> list[Mapping[str, Any]]: ...

    def node_info_copies(self) -> list[NodeInfo]: ...

    def profile_name_for(self, pod: Pod) -> str | None: ...

    def add_event_handlers(self, kind: str, handlers: EventHandlers) -> None: ...


def _image_refs(pods: Iterable[Mapping[str, Any]], nodes: Iterable[NodeInfo]) -> Iterable[str]:
    """Image references of the pods (containers and init containers; puller pods too: they name
    the images being pre-pulled) and in the nodes' ``status.images``."""
    for obj in pods:
        spec = obj.get("spec") or {}
        for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
            if isinstance(c, Mapping) and c.get("image"):
                yield str(c["image"])
    for ni in nodes:
        if ni.node is not None:
            for entry in ni.node.images:
                yield from entry.names


class PrePullController:
    """Carries out the planner's pre-pulls with puller pods (see the module docstring).

    Args: ``client`` (the cluster client: create/delete pods, create_event, get/create the
    PriorityClass), ``scheduler`` (its read surface: pods and nodes from its informers, NodeInfo
    copies from its cache; pods of its profiles count as arrivals), ``catalogue`` (an image catalogue, or :class:`ImageFacts`: catalogue + registry
    lookups), ``clock``; keyword: ``namespace`` of the puller pods,
    ``planner`` (default :class:`PrePullPlanner` with its defaults), ``interval`` seconds between
    ticks, ``max_new_per_tick``, ``timeout_seconds`` per puller pod, ``priority_class_name``
    (None: no class), ``metrics``, ``mechanism`` (default: puller pods; see
    :mod:`kubesched.prepull.mechanisms`).
    """

    def __init__(
        self,
        client: ClusterClient,
        scheduler: SchedulerReader,
        catalogue: ImageCatalogue | ImageFacts,
        clock: Clock,
        *,
        namespace: str = "kube-system",
        planner: PrePullPlanner | None = None,
        interval: float = 15.0,
        max_new_per_tick: int = 8,
        timeout_seconds: float = 600.0,
        priority_class_name: str | None = DEFAULT_PRIORITY_CLASS,
        metrics: PrePullMetrics | None = None,
        mechanism: PullMechanism | None = None,
    ) -> None:
        if interval <= 0 or max_new_per_tick < 1 or timeout_seconds <= 0:
            raise ValueError("interval and timeout_seconds must be > 0 and max_new_per_tick >= 1")
        self.client = client
        self.scheduler = scheduler
        facts = catalogue if isinstance(catalogue, ImageFacts) else ImageFacts(catalogue)
        #: image facts by reference: the catalogue, then registry lookups
        self.catalogue = facts
        self.clock = clock
        self.namespace = namespace
        self.planner = planner or PrePullPlanner()
        self.interval = interval
        self.timeout_seconds = timeout_seconds
        self.priority_class_name = priority_class_name
        self.metrics = metrics or PrePullMetrics()
        self.mechanism: PullMechanism = mechanism or PullerPods(
            client, scheduler, namespace, priority_class_name
        )
        self.view = ClusterImageView(facts, max_new_per_tick)
        self.precision = PrecisionTracker()
        self.origin = clock.now()
        self._planner_view = _PlannerSchedulerView()
        self._lock = threading.Lock()
        self._seq = 0
        self._reaped: set[str] = set()
        self.planner.attach(
            PlannerContext(
                model=self.view,
                cluster=client,
                scheduler=self._planner_view,
                clock=clock,
                catalogue=facts,
                origin=self.origin,
            )
        )

    @classmethod
    def for_scheduler(
        cls,
        sched: SchedulerReader,
        client: ClusterClient,
        clock: Clock,
        catalogue_path: str | None = None,
        *,
        mechanism: str = "auto",
        registry_settings: str | None = None,
        namespace: str = "kube-system",
        priority_class_name: str | None = DEFAULT_PRIORITY_CLASS,
        timeout_seconds: float = 600.0,
        interval: float = 15.0,
        max_new_per_tick: int = 8,
    ) -> PrePullController:
        """A controller reading ``sched``'s surface, its handlers registered (call before
        ``sched.start()``). ``mechanism``: ``auto`` (ImagePullJob when discovery through ``client``
        finds it, else puller pods), ``pods`` or ``imagepulljob``; ``registry_settings``: registry
        settings file for images missing from the catalogue (the process-wide source the image
        plugins use with the same file; None: catalogue only); the rest as for the constructor.
        Raises ConfigError for a bad catalogue, settings file or mechanism."""
        source = shared_registry_source(registry_settings) if registry_settings else None
        catalogue = ImageFacts(load_catalogue(catalogue_path), source)
        try:
            chosen = discover(client, sched, namespace, priority_class_name, timeout_seconds, mechanism)
        except ValueError as e:
            raise ConfigError("--prepull-mechanism", str(e)) from None
        log.info("pre-pull mechanism: %s", chosen.name)
        controller = cls(
            client,
            sched,
            catalogue,
            clock,
            namespace=namespace,
            interval=interval,
            max_new_per_tick=max_new_per_tick,
            timeout_seconds=timeout_seconds,
            priority_class_name=priority_class_name,
            mechanism=chosen,
        )
        controller.register()
        return controller

    # ------------------------------------------------------------------ informer handlers

    def register(self) -> None:
        """Add the Pod and Node handlers to the scheduler's informers (before they start)."""
        self.scheduler.add_event_handlers("Pod", EventHandlers(self._pod_add, self._pod_update, None))
        self.scheduler.add_event_handlers(
            "Node", EventHandlers(self._node_seen, lambda _o, n: self._node_seen(n), None)
        )

    def _t(self) -> float:
        return self.clock.now() - self.origin

    def _parse(self, obj: Mapping[str, Any]) -> Pod | None:
        if is_puller(obj):
            return None
        try:
            return Pod.from_manifest(obj)
        except (KubeschedError, ValueError, TypeError, KeyError):
            return None  # the scheduler reports malformed pods

    def _canonical(self, refs: Iterable[str]) -> list[str]:
        out = []
        for ref in refs:
            image = self.catalogue.get(ref)
            out.append(image.name if image is not None else ref)
        return out

    def _pod_add(self, obj: dict[str, Any]) -> None:
        pod = self._parse(obj)
        if pod is None:
            return
        with self._lock:
            if pod.node_name:
                self.planner.on_pod_bound(pod, pod.node_name, self._t())
            elif self.scheduler.profile_name_for(pod) is not None:
                self.planner.on_pod_pending(pod, self._t())

    def _pod_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        if (old.get("spec") or {}).get("nodeName") or not (new.get("spec") or {}).get("nodeName"):
            return
        pod = self._parse(new)
        if pod is None:
            return
        with self._lock:
            self.planner.on_pod_bound(pod, pod.node_name, self._t())
            used = self.precision.pod_bound(pod.node_name, self._canonical(pod.images))
            if used:
                self.metrics.used.inc(used)
                self._precision_metrics()

    def _node_seen(self, obj: dict[str, Any]) -> None:
        name = (obj.get("metadata") or {}).get("name") or ""
        refs = [
            n for entry in (obj.get("status") or {}).get("images") or [] for n in entry.get("names") or []
        ]
        with self._lock:
            before = self.precision.wasted
            self.precision.node_images(name, set(self._canonical(refs)))
            if self.precision.wasted != before:
                self._precision_metrics()

    def _precision_metrics(self) -> None:
        self.metrics.precision.set(self.precision.precision)

    # ------------------------------------------------------------------ lifecycle

    def ensure_priority_class(self) -> None:
        """Create the pullers' PriorityClass when missing; without the right to, pullers get no class."""
        name = self.priority_class_name
        if not name:
            return
        try:
            self.client.get("PriorityClass", None, name)
            return
        except NotFoundError:
            pass
        except (KubeschedError, KubeApiError) as e:
            log.warning(
                "pre-pull: cannot read PriorityClass %s (%s): puller pods get no priority class", name, e
            )
            self.priority_class_name = None
            return
        try:
            self.client.create(priority_class(name))
            log.info("pre-pull: created PriorityClass %s", name)
        except (KubeschedError, KubeApiError) as e:
            log.warning(
                "pre-pull: cannot create PriorityClass %s (%s): puller pods get no priority class", name, e
            )
            self.priority_class_name = None

    def run(self, stop: threading.Event) -> None:
        """Tick every ``interval`` seconds of the controller's clock (``interval / clock.speed``
        wall seconds for a sped-up :class:`~kubesched.clock.RealClock`) until ``stop`` is set;
        errors of one tick are logged."""
        self.ensure_priority_class()
        wall = self.interval / float(getattr(self.clock, "speed", 1.0))
        while not stop.wait(wall):
            try:
                self.tick()
            except Exception:  # noqa: BLE001 - one bad tick must not stop pre-pulling
                log.exception("pre-pull tick failed")

    # ------------------------------------------------------------------ one tick

    def tick(self) -> list[tuple[str, list[str]]]:
        """Reap, plan, act (see the module docstring). Returns the ``(node, images)`` of the
        pre-pulls started."""
        pulls = self.mechanism.pulls()
        self._reaped &= {pull.name for pull in pulls}  # deleted ones the informer still lists
        active = [pull for pull in pulls if not self._reap(pull)]
        pods = self.scheduler.objects("Pod")
        nodes = self.scheduler.node_info_copies()
        self.catalogue.prefetch(_image_refs(pods, nodes))  # registry lookups outside the lock
        with self._lock:
            self.view.refresh(nodes, pods, [(pull.node, pull.images) for pull in active])
            self._planner_view.infos = [ni for ni in nodes if ni.node is not None]
            self.planner.tick(self._t())
            requests = dict(self.view.requests)
        created = []
        for node, images in requests.items():
            if self._create(node, images):
                created.append((node, images))
        return created

    def _reap(self, pull: ActivePull) -> bool:
        """True when ``pull`` is finished (or timed out) and now deleted and counted."""
        if pull.name in self._reaped:
            return True
        outcome = pull.outcome
        if outcome is None:
            if pull.created is None or self.clock.now() - pull.created < self.timeout_seconds:
                return False
            outcome = "timeout"
        try:
            self.mechanism.delete(pull)
        except NotFoundError:
            pass
        except Exception as e:  # noqa: BLE001 - any API error: retried next tick
            log.warning(
                "pre-pull: cannot delete %s %s/%s: %s", self.mechanism.name, self.namespace, pull.name, e
            )
            return False
        self._reaped.add(pull.name)
        node, images = pull.node, list(pull.images)
        with self._lock:
            for image in images:
                self.metrics.prepulls.labels(outcome).inc()
                if outcome == "succeeded":
                    found = self.catalogue.get(image)
                    if found is not None:
                        self.metrics.bytes.inc(sum(layer.size_bytes for layer in found.unique_layers))
                    self.precision.pulled(node, image)
                else:
                    self.precision.failed(node, image)
            self._precision_metrics()
        what = f"{', '.join(images)} ({self.mechanism.name} {pull.name})"
        if outcome == "succeeded":
            self._event(node, "Normal", "PrePulled", f"Pre-pulled {what}")
        else:
            self._event(
                node,
                "Warning",
                "PrePullFailed",
                f"Pre-pull of {what} {'timed out' if outcome == 'timeout' else 'failed'}",
            )
        log.info("pre-pull on %s of %s: %s", node, ", ".join(images), outcome)
        return True

    def _create(self, node: str, images: list[str]) -> bool:
        ni = self.view.nodes.get(node)
        if ni is None or ni.node is None or has_disk_pressure(ni.node):
            return False
        try:
            name = self.mechanism.start(node, ni.node.uid, images)
        except Exception as e:  # noqa: BLE001 - any API error: the planner tries again later
            log.warning(
                "pre-pull: cannot start a pre-pull (%s) on %s for %s: %s",
                self.mechanism.name,
                node,
                ", ".join(images),
                e,
            )
            return False
        with self._lock:
            for image in images:
                self.precision.started(node, image)
            self._precision_metrics()
        self._event(
            node, "Normal", "PrePulling", f"Pre-pulling {', '.join(images)} ({self.mechanism.name} {name})"
        )
        log.info(
            "pre-pull on %s: %s (%s %s/%s)",
            node,
            ", ".join(images),
            self.mechanism.name,
            self.namespace,
            name,
        )
        return True

    def _event(self, node: str, kind: str, reason: str, note: str) -> None:
        ni = self.view.nodes.get(node)
        uid = ni.node.uid if ni is not None and ni.node is not None else ""
        self._seq += 1
        now = self.clock.now()
        ev = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": f"{node}.{int(now * 1e9):x}.{self._seq}", "namespace": "default"},
            "eventTime": rfc3339_micro(now),
            "reportingController": REPORTING_CONTROLLER,
            "reportingInstance": REPORTING_CONTROLLER,
            "action": "PrePull",
            "reason": reason,
            "type": kind,
            "note": note,
            "regarding": {"kind": "Node", "name": node, "uid": uid, "apiVersion": "v1"},
        }
        try:
            self.client.create_event(ev)
        except Exception as e:  # noqa: BLE001 - events are best effort (as upstream)
            log.warning("pre-pull: could not record event %s for node %s: %s", reason, node, e)
