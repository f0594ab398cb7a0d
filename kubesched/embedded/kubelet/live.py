"""Kubelets for the embedded cluster (``kubesched serve --kubelet``): every node runs the replay's
kubelet image model (:class:`~kubesched.embedded.kubelet.model.KubeletModel`) on the cluster's clock, and
what it does is written back through the API as a kubelet would write it.

A pod bound to a node (``spec.nodeName`` set by a binding, or at creation) goes through:

1. admission: ``status`` ``Pending`` with ``startTime``, ``hostIP``, ``PodReadyToStartContainers``
   True, containers waiting in ``ContainerCreating``;
2. its images, one after the other in container order (init containers first), through the model
   (serialized pulls, layer sharing, registry and node bandwidth, joins): Events ``Pulling`` /
   ``Pulled`` (``Successfully pulled image ... in Xs (Ys including waiting). Image size: N
   bytes.``) or ``Pulled`` (``Container image ... already present on machine``);
3. ``Created`` Events when the last image is present, then after the model's container start time
   ``Started`` Events and ``status`` ``Running`` with ``state.running.startedAt`` and the
   ``Initialized``, ``ContainersReady`` and ``Ready`` conditions True;
4. with the annotation ``kubesched.io/run-seconds`` (:data:`RUN_SECONDS_ANNOTATION`, seconds
   after the start), the containers exit and the pod becomes ``Succeeded`` (whatever its
   ``restartPolicy``: the annotation says when the pod's work is done) -- or ``Failed`` when the
   annotation ``kubesched.io/exit-code`` (:data:`EXIT_CODE_ANNOTATION`, an integer 0..255) gives
   a non-zero exit code, which a Job's ``podFailurePolicy`` then matches; with
   ``spec.activeDeadlineSeconds``, the pod fails that long after its admission (``Failed``,
   ``DeadlineExceeded``), whichever comes first; without either the pod runs until deleted.

A pod being deleted (``deletionTimestamp`` set) or gone stops using its images. Nodes:
``status.images`` is written every ``status_update_seconds`` (10 s, ``nodeStatusUpdateFrequency``)
for nodes whose images changed, with the model's 50-image cap; image GC runs as in the model. A
node's images listed in its ``status.images`` when it is first seen are taken as already on its
disk: the catalogue's image when it lists one of the entry's names, else one opaque layer of the
entry's ``sizeBytes`` (:mod:`~kubesched.embedded.kubelet.reported_images`, the rule the replay
follows; names compared in canonical form, ``nginx:1.25`` = ``docker.io/library/nginx:1.25``), so a
pod of that image there pulls nothing (``Pulled``: ``Container image ... already present on
machine``). An image missing from the catalogue and pulled is one opaque layer of the size any
node's ``status.images`` reported for it, else of ``unknown_image_bytes``. Each container's
``imagePullPolicy`` applies as in the kubelet (:mod:`~kubesched.embedded.kubelet.pull_policy`;
``pkg/kubelet/images/image_manager.go: EnsureImageExists``): ``Always`` pulls a present image
anyway, ``Never`` without the image gives a Warning ``ErrImageNeverPull`` Event (``Container image
... is not present with pull policy of Never``), a ``Failed`` Event ``Error: ErrImageNeverPull``,
and the container waits with reason ``ErrImageNeverPull`` (once: the kubelet's later retries are not
modelled, the pod waits until deleted). An unparseable image name gives an ``InspectFailed`` Event and the
container waits with ``InvalidImageName``, as the kubelet does.

Threading: the store's watch handlers only put work on the clock (``call_later(0, ...)``), so an
API request never waits for the model; every model step, timer and status write then runs on the
clock's timer thread, one at a time. Not modelled: probes (a started container is Ready at once),
container restarts, pod IPs, resource usage, evictions.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.timestamps import parse_rfc3339
from kubesched.client.client import WatchEvent
from kubesched.clock import Clock, Timer
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.embedded.kubelet.events import kubelet_event, present_message, pulled_message, pulling_message
from kubesched.embedded.kubelet.model import KubeletModel, refresh_node_status
from kubesched.embedded.kubelet.pod_status import (
    deadline_exceeded_status,
    exited_status,
    pending_status,
    running_status,
)
from kubesched.embedded.kubelet.pull_policy import pull_policy
from kubesched.embedded.kubelet.reported_images import opaque_image, status_entry_names, status_entry_size
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import KubeschedError
from kubesched.images.catalogue import CatalogueImage, ImageCatalogue
from kubesched.images.estimate import OPAQUE_IMAGE_BYTES
from kubesched.images.names import InvalidImageReference, normalize_image

__all__ = [
    "EXIT_CODE_ANNOTATION",
    "LiveKubelets",
    "RUN_SECONDS_ANNOTATION",
    "UNKNOWN_IMAGE_BYTES",
    "exit_code",
    "parse_run_seconds",
    "run_seconds_text",
]

_log = logging.getLogger(__name__)

#: pod annotation: seconds after its containers started at which the pod succeeds
#: (:func:`run_seconds_text` writes it, :func:`parse_run_seconds` reads it)
RUN_SECONDS_ANNOTATION = "kubesched.io/run-seconds"
#: pod annotation: the exit code of its containers when its run-seconds are over (default 0)
EXIT_CODE_ANNOTATION = "kubesched.io/exit-code"
#: node annotation giving the node's pull throughput (bytes/s), as ImagePullTimeSaved reads it
BANDWIDTH_ANNOTATION = "kubesched.io/image-pull-bytes-per-second"
#: compressed size assumed for an image missing from the catalogue (bytes; ``images estimate``'s default too)
UNKNOWN_IMAGE_BYTES = OPAQUE_IMAGE_BYTES
#: kubelet ``nodeStatusUpdateFrequency`` default (s)
STATUS_UPDATE_SECONDS = 10.0


@dataclass
class _Container:
    field: str  # "containers" / "initContainers"
    name: str
    image: str  # as written in the spec
    pull_policy: str = "IfNotPresent"  # imagePullPolicy: Always / IfNotPresent / Never


@dataclass
class _LivePod:
    key: str  # "ns/name"
    uid: str
    node: str
    manifest: dict[str, Any]
    containers: list[_Container]
    next_container: int = 0
    admitted: float = 0.0
    started: float | None = None
    finish_timer: Timer | None = None
    deadline_timer: Timer | None = None
    image_ids: dict[str, str] = field(default_factory=dict)


def run_seconds_text(seconds: float) -> str:
    """The :data:`RUN_SECONDS_ANNOTATION` value for ``seconds`` (a finite number >= 0), exact: the
    integer when whole (``30``), else the float's shortest repr that reads back as the same double
    (``1234567.5``, ``0.1``, ``1e-05``)."""
    value = float(seconds)
    return str(int(value)) if value.is_integer() else repr(value)


def parse_run_seconds(raw: object) -> float | None:
    """Seconds of a :data:`RUN_SECONDS_ANNOTATION` value: any decimal or exponent number
    (``30``, ``1234567.5``, ``1.23457e+06``) that is finite and >= 0; None for anything else."""
    try:
        value = float(str(raw))  # a str, or a number a YAML file wrote unquoted
    except (TypeError, ValueError):
        return None
    return value if value >= 0 and math.isfinite(value) else None


def exit_code(pod: Mapping[str, Any]) -> int | None:
    """The exit code the pod's containers end with (:data:`EXIT_CODE_ANNOTATION`; 0 without it);
    None for a value that is not an integer from 0 to 255."""
    annotations = (pod.get("metadata") or {}).get("annotations")
    raw = annotations.get(EXIT_CODE_ANNOTATION) if isinstance(annotations, Mapping) else None
    if raw is None:
        return 0
    try:
        value = int(str(raw).strip())
    except ValueError:
        return None
    return value if 0 <= value <= 255 else None


class LiveKubelets:
    """The kubelets of every node of ``cluster`` (see the module docstring).

    ``clock`` must be the clock the store and server use (a ``RealClock``, sped up or not; a
    ``VirtualClock`` in tests). ``catalogue``: image layers; ``config``: the model settings.
    :meth:`start` subscribes to the store; :meth:`stop` unsubscribes (running timers finish).
    """

    def __init__(
        self,
        cluster: MemoryCluster,
        clock: Clock,
        catalogue: ImageCatalogue,
        config: KubeletImageConfig | None = None,
        *,
        status_update_seconds: float = STATUS_UPDATE_SECONDS,
        unknown_image_bytes: int = UNKNOWN_IMAGE_BYTES,
    ) -> None:
        if not status_update_seconds > 0:
            raise ValueError(f"status_update_seconds must be > 0, got {status_update_seconds!r}")
        if unknown_image_bytes <= 0:
            raise ValueError(f"unknown_image_bytes must be > 0, got {unknown_image_bytes!r}")
        self.cluster = cluster
        self.clock = clock
        self.catalogue = catalogue
        self.model = KubeletModel(
            clock,
            catalogue,
            config,
            on_container_started=self._container_started,
            on_images_changed=self._images_changed,
            listener=self,
        )
        self.status_period = status_update_seconds
        self.unknown_image_bytes = unknown_image_bytes
        self._pods: dict[str, _LivePod] = {}  # by uid
        self._invalid: set[str] = set()  # uids of pods with an unparseable image (reported once)
        self._opaque: dict[str, CatalogueImage] = {}  # images not in the catalogue, by canonical name
        self._reported: dict[str, int] = {}  # sizeBytes of nodes' status.images, by canonical name
        self._host_ips: dict[str, str] = {}
        self._status_timer: Timer | None = None
        self._subs: list[Any] = []

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Take the store's nodes and pods as they are, then follow their changes."""
        for kind in ("Node", "Pod"):
            self._subs.append(self.cluster.watch(kind, None, self._enqueue))

    def stop(self) -> None:
        for sub in self._subs:
            sub.stop()
        self._subs.clear()

    def _enqueue(self, ev: WatchEvent) -> None:
        # called by the store under its lock, on the writer's thread: only hand the event over
        self.clock.call_later(0.0, lambda: self._handle(ev))

    def _handle(self, ev: WatchEvent) -> None:
        try:
            if ev.kind == "Node":
                if ev.type == "ADDED":
                    self._node_added(ev.object)
            elif ev.kind == "Pod":
                self._pod_event(ev)
        except Exception:  # noqa: BLE001 - one object's failure never stops the kubelets
            _log.exception("kubelet: handling %s %s failed", ev.type, ev.kind)

    # ------------------------------------------------------------------ nodes

    def _node_added(self, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name"))
        if name in self.model.node_names():
            return
        bandwidth: float | None = None
        raw = (meta.get("annotations") or {}).get(BANDWIDTH_ANNOTATION)
        if raw is not None:
            try:
                bandwidth = float(raw)
            except ValueError:
                bandwidth = None
            if bandwidth is not None and not bandwidth > 0:
                bandwidth = None
            if bandwidth is None:
                _log.warning(
                    "Node %s: metadata.annotations[%s]: invalid value %r (bytes/s > 0); using the "
                    "model's default",
                    name,
                    BANDWIDTH_ANNOTATION,
                    raw,
                )
        self.model.add_node(name, bandwidth_bps=bandwidth)
        status = obj.get("status") or {}
        for addr in status.get("addresses") or []:
            if isinstance(addr, Mapping) and addr.get("type") == "InternalIP" and addr.get("address"):
                self._host_ips[name] = str(addr["address"])
                break
        present = [image for entry in status.get("images") or [] if (image := self._status_image(entry))]
        if present:
            self.model.preload(name, present)

    def _status_image(self, entry: object) -> CatalogueImage | None:
        """The image of one ``status.images[]`` entry: the catalogue's when it lists any of the
        entry's names, else one opaque layer of the entry's ``sizeBytes`` (its sizes recorded for
        pulls of that image on other nodes); None for an entry with no usable name or size."""
        names = status_entry_names(entry)
        for canon in names:
            image = self.catalogue.get(canon)
            if image is not None:
                return image
        size = status_entry_size(entry)
        if not names or size is None:
            return None
        for canon in names:
            self._reported.setdefault(canon, size)
        tagged = [n for n in names if "@" not in n]
        digested = [n for n in names if "@" in n]
        ref = (tagged or digested)[0]
        image = self._opaque.get(ref)
        if image is None:
            image = opaque_image(
                ref, self._reported[ref], "node status.images", digested[0] if digested else None
            )
        for canon in names:  # a pod naming the image by tag or by digest finds it on this node
            self._opaque.setdefault(canon, image)
        return image

    # ------------------------------------------------------------------ pods

    def _pod_event(self, ev: WatchEvent) -> None:
        obj = ev.object
        meta = obj.get("metadata") or {}
        uid = str(meta.get("uid"))
        lp = self._pods.get(uid)
        if ev.type == "DELETED" or meta.get("deletionTimestamp"):
            self._invalid.discard(uid)
            if lp is not None:
                self._stop_pod(lp)
            return
        if uid in self._invalid:
            return
        if lp is not None:
            lp.manifest = obj
            return
        node = (obj.get("spec") or {}).get("nodeName")
        phase = (obj.get("status") or {}).get("phase")
        if not node or phase in ("Succeeded", "Failed"):
            return
        if phase == "Running":
            self._adopt_running(obj, str(node))
            return
        self._admit(obj, str(node))

    def _containers(self, obj: Mapping[str, Any]) -> list[_Container]:
        spec = obj.get("spec") or {}
        out = []
        for fld in ("initContainers", "containers"):
            for c in spec.get(fld) or []:
                if isinstance(c, Mapping):
                    out.append(_Container(fld, str(c.get("name")), str(c.get("image") or ""), pull_policy(c)))
        return out

    def _image(self, ref: str) -> CatalogueImage:
        """The image ``ref`` names: the catalogue's, else one opaque layer of the size a node's
        ``status.images`` reported for it, else of ``unknown_image_bytes``
        (:mod:`~kubesched.embedded.kubelet.reported_images`). Raises InvalidImageReference."""
        image = self.catalogue.get(ref)
        if image is not None:
            return image
        canon = normalize_image(ref)
        image = self._opaque.get(canon)
        if image is None:
            size = self._reported.get(canon, self.unknown_image_bytes)
            image = self._opaque[canon] = opaque_image(canon, size, "serve --kubelet")
        return image

    def _admit(self, obj: dict[str, Any], node: str) -> None:
        meta = obj.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
        uid = str(meta.get("uid"))
        now = self.clock.now()
        containers = self._containers(obj)
        images: list[CatalogueImage] = []
        for c in containers:
            try:
                images.append(self._image(c.image))
            except InvalidImageReference as e:
                message = f'Failed to apply default image tag "{c.image}": couldn\'t parse image name "{c.image}": {e}'
                self._invalid.add(uid)
                self._event(obj, node, "InspectFailed", message, now, c, event_type="Warning")
                self._patch_pod(
                    obj,
                    pending_status(
                        obj,
                        now,
                        host_ip=self._host_ips.get(node),
                        waiting_reason="InvalidImageName",
                        waiting_message=message,
                    ),
                )
                return
        lp = _LivePod(key, uid, node, obj, containers, admitted=now)
        for c, image in zip(containers, images, strict=True):
            lp.image_ids[c.image] = image.digest_name or image.name
        self._pods[uid] = lp
        self._patch_pod(obj, pending_status(obj, now, host_ip=self._host_ips.get(node)))
        self._arm_deadline(lp, now)
        self.model.pod_bound(node, uid, images, now, pull_policies=[c.pull_policy for c in containers])

    def _adopt_running(self, obj: dict[str, Any], node: str) -> None:
        """A pod already Running when first seen: its images are on the node and in use."""
        meta = obj.get("metadata") or {}
        uid = str(meta.get("uid"))
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
        try:
            images = [self._image(c.image) for c in self._containers(obj)]
        except InvalidImageReference:
            return
        self.model.preload(node, images)
        lp = _LivePod(key, uid, node, obj, self._containers(obj), started=self.clock.now())
        self._pods[uid] = lp
        try:
            admitted = parse_rfc3339(str((obj.get("status") or {}).get("startTime")))
        except ValueError:
            admitted = self.clock.now()
        self._arm_deadline(lp, admitted)
        self.model.pod_bound(node, uid, images)
        # the model starts its container after container_start_seconds; _container_started sees
        # lp.started already set and only arms the finish timer

    def _arm_deadline(self, lp: _LivePod, start: float) -> None:
        """``spec.activeDeadlineSeconds``: the pod fails that long after its start
        (``pkg/kubelet/active_deadline.go``)."""
        raw = (lp.manifest.get("spec") or {}).get("activeDeadlineSeconds")
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or raw <= 0:
            return
        lp.deadline_timer = self.clock.call_at(start + float(raw), lambda: self._deadline_exceeded(lp))

    def _deadline_exceeded(self, lp: _LivePod) -> None:
        if self._pods.get(lp.uid) is not lp:
            return
        t = self.clock.now()
        self._stop_pod(lp)
        self._event(
            lp.manifest,
            lp.node,
            "DeadlineExceeded",
            "Pod was active on the node longer than the specified deadline",
            t,
            event_type="Normal",
        )
        self._patch_pod(lp.manifest, deadline_exceeded_status(lp.manifest, lp.started, t, lp.image_ids))

    def _stop_pod(self, lp: _LivePod) -> None:
        self._pods.pop(lp.uid, None)
        if lp.finish_timer is not None:
            lp.finish_timer.cancel()
        if lp.deadline_timer is not None:
            lp.deadline_timer.cancel()
        self.model.pod_finished(lp.node, lp.uid)
        self.model.records.pop(lp.uid, None)

    # ------------------------------------------------------------------ model callbacks (PullListener)

    def _current(self, pod_key: str) -> tuple[_LivePod, _Container] | None:
        lp = self._pods.get(pod_key)
        if lp is None or lp.next_container >= len(lp.containers):
            return None
        return lp, lp.containers[lp.next_container]

    def image_present(self, pod_key: str, node: str, image: CatalogueImage, t: float) -> None:
        cur = self._current(pod_key)
        if cur is None:
            return
        lp, c = cur
        lp.next_container += 1
        if lp.started is None:
            self._event(lp.manifest, node, "Pulled", present_message(c.image), t, c)

    def image_never_pull(self, pod_key: str, node: str, image: CatalogueImage, t: float) -> None:
        cur = self._current(pod_key)
        if cur is None:
            return
        lp, c = cur
        message = f'Container image "{c.image}" is not present with pull policy of Never'
        self._event(lp.manifest, node, "ErrImageNeverPull", message, t, c, event_type="Warning")
        self._event(lp.manifest, node, "Failed", "Error: ErrImageNeverPull", t, c, event_type="Warning")
        self._patch_pod(
            lp.manifest,
            pending_status(
                lp.manifest,
                lp.admitted,
                host_ip=self._host_ips.get(node),
                waiting_reason="ErrImageNeverPull",
                waiting_message=message,
            ),
        )

    def image_pulling(self, pod_key: str, node: str, image: CatalogueImage, t: float) -> None:
        cur = self._current(pod_key)
        if cur is not None:
            self._event(cur[0].manifest, node, "Pulling", pulling_message(cur[1].image), t, cur[1])

    def image_pulled(
        self, pod_key: str, node: str, image: CatalogueImage, requested: float, started: float, t: float
    ) -> None:
        cur = self._current(pod_key)
        if cur is None:
            return
        lp, c = cur
        lp.next_container += 1
        self._event(
            lp.manifest,
            node,
            "Pulled",
            pulled_message(c.image, t - started, t - requested, image.size_bytes),
            t,
            c,
        )

    def pulls_done(self, pod_key: str, node: str, t: float) -> None:
        lp = self._pods.get(pod_key)
        if lp is None or lp.started is not None:
            return
        for c in lp.containers:
            self._event(lp.manifest, node, "Created", "Container created", t, c)

    def _container_started(self, pod_key: str, node: str, t: float) -> None:
        lp = self._pods.get(pod_key)
        if lp is None:
            return
        if lp.started is None:
            lp.started = t
            for c in lp.containers:
                self._event(lp.manifest, node, "Started", "Container started", t, c)
            self._patch_pod(lp.manifest, running_status(lp.manifest, t, lp.image_ids))
        run = self._run_seconds(lp)
        if run is not None:
            lp.finish_timer = self.clock.call_at(lp.started + run, lambda: self._succeed(lp))

    def _run_seconds(self, lp: _LivePod) -> float | None:
        raw = ((lp.manifest.get("metadata") or {}).get("annotations") or {}).get(RUN_SECONDS_ANNOTATION)
        if raw is None:
            return None
        value = parse_run_seconds(raw)
        if value is None:
            self._event(
                lp.manifest,
                lp.node,
                "InvalidAnnotation",
                f"metadata.annotations[{RUN_SECONDS_ANNOTATION}]: invalid value {raw!r}: must be a "
                "non-negative number of seconds; the pod runs until deleted",
                self.clock.now(),
                event_type="Warning",
            )
            return None
        return value

    def _succeed(self, lp: _LivePod) -> None:
        if self._pods.get(lp.uid) is not lp or lp.started is None:
            return
        t = self.clock.now()
        self._stop_pod(lp)
        code = exit_code(lp.manifest)
        if code is None:
            raw = ((lp.manifest.get("metadata") or {}).get("annotations") or {}).get(EXIT_CODE_ANNOTATION)
            self._event(
                lp.manifest,
                lp.node,
                "InvalidAnnotation",
                f"metadata.annotations[{EXIT_CODE_ANNOTATION}]: invalid value {raw!r}: must be an integer "
                "from 0 to 255; the containers exit 0",
                t,
                event_type="Warning",
            )
            code = 0
        self._patch_pod(lp.manifest, exited_status(lp.manifest, lp.started, t, lp.image_ids, code))

    def _images_changed(self, node: str, when: float) -> None:
        if self._status_timer is None:
            period = self.status_period
            tick = (math.floor(when / period) + 1) * period
            self._status_timer = self.clock.call_at(tick, self._refresh_status)

    def _refresh_status(self) -> None:
        self._status_timer = None
        for node in self.model.pop_dirty_nodes():
            try:
                refresh_node_status(self.cluster, self.model, node)
            except KubeschedError as e:
                _log.info("kubelet: node %s status not written: %s", node, e)

    # ------------------------------------------------------------------ writes

    def _event(
        self,
        pod: dict[str, Any],
        node: str,
        reason: str,
        message: str,
        t: float,
        container: _Container | None = None,
        *,
        event_type: str = "Normal",
    ) -> None:
        path = None if container is None else f"spec.{container.field}{{{container.name}}}"
        self.cluster.create_event(
            kubelet_event(pod, node, reason, message, t, container=path, event_type=event_type)
        )

    def _patch_pod(self, pod: Mapping[str, Any], status: dict[str, Any]) -> None:
        meta = pod.get("metadata") or {}
        try:
            self.cluster.patch_status(
                "Pod", str(meta.get("namespace") or "default"), str(meta.get("name")), status
            )
        except KubeschedError as e:
            _log.info("kubelet: pod %s/%s status not written: %s", meta.get("namespace"), meta.get("name"), e)
