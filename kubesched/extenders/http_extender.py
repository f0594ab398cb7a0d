"""``HTTPExtender``: a scheduler extender reached over HTTP(S) (``pkg/scheduler/extender.go``).

The scheduler calls it through ``is_filter/is_prioritizer/is_binder/supports_preemption``,
``is_interested(pod)``, ``is_ignorable()``, ``filter``, ``prioritize``, ``bind`` and
``process_preemption``; ``name`` is the ``urlPrefix`` and ``weight`` the prioritize weight.
Every verb raises :class:`~kubesched.extenders.transport.ExtenderError` on failure; what the
scheduler does with the error (skip when ignorable, fail the cycle otherwise) is decided by the
caller, as upstream.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.config.types import Extender
from kubesched.errors import ManifestError
from kubesched.extenders import wire
from kubesched.extenders.transport import ExtenderError, Transport
from kubesched.extenders.wire import Victims, WireError
from kubesched.framework.node_info import NodeInfo
from kubesched.queue.metrics import QueueMetrics

#: ``extenderv1.MaxExtenderPriority`` / ``MinExtenderPriority``
MAX_EXTENDER_PRIORITY = 10
MIN_EXTENDER_PRIORITY = 0

#: ``scheduler_goroutines{operation}`` label of concurrent prioritize calls
PRIORITIZING_EXTENDER = "prioritizing_extender"
GOROUTINES = "scheduler_goroutines"


class HTTPExtender:
    """One configured extender (see module docstring).

    Args:
        cfg: the ``extenders[i]`` config model (``httpTimeout`` already defaulted to 5s).
        path: its config path, used in :class:`~kubesched.errors.ConfigError` for TLS problems.
        metrics: optional recorder; ``scheduler_goroutines{operation="prioritizing_extender"}``
            is raised around prioritize calls.

    Raises:
        ConfigError: unusable TLS settings.
    """

    def __init__(
        self, cfg: Extender, path: str = "extenders[0]", metrics: QueueMetrics | None = None
    ) -> None:
        self.config = cfg
        self.name: str = cfg.url_prefix
        self.weight: int = cfg.weight
        self.filter_verb = cfg.filter_verb
        self.prioritize_verb = cfg.prioritize_verb
        self.bind_verb = cfg.bind_verb
        self.preempt_verb = cfg.preempt_verb
        self.node_cache_capable = cfg.node_cache_capable
        self.managed_resources = frozenset(r.name for r in cfg.managed_resources)
        self.ignorable = cfg.ignorable
        self.metrics = metrics
        self._transport = Transport(cfg, path)

    def __repr__(self) -> str:
        return f"HTTPExtender({self.name!r})"

    # ---- capabilities ---------------------------------------------------------------------------

    def is_filter(self) -> bool:
        """A ``filterVerb`` is configured."""
        return bool(self.filter_verb)

    def is_prioritizer(self) -> bool:
        """A ``prioritizeVerb`` is configured."""
        return bool(self.prioritize_verb)

    def is_binder(self) -> bool:
        """A ``bindVerb`` is configured."""
        return bool(self.bind_verb)

    def supports_preemption(self) -> bool:
        """A ``preemptVerb`` is configured."""
        return bool(self.preempt_verb)

    def is_ignorable(self) -> bool:
        """Errors of this extender are skipped instead of failing the cycle."""
        return self.ignorable

    def is_interested(self, pod: Pod) -> bool:
        """No ``managedResources``: always; else iff a container or init container lists a managed
        resource name in its requests or limits (``IsInterested``)."""
        if not self.managed_resources:
            return True
        managed = self.managed_resources
        for c in (*pod.containers, *pod.init_containers):
            if any(r in managed for r in c.requests) or any(r in managed for r in c.limits):
                return True
        return False

    # ---- verbs ----------------------------------------------------------------------------------

    def _args(self, pod: Pod, nodes: Sequence[NodeInfo]) -> dict[str, Any]:
        if self.node_cache_capable:
            return wire.extender_args(pod, None, [ni.name for ni in nodes])
        return wire.extender_args(pod, [ni.node.raw for ni in nodes if ni.node is not None], None)

    def filter(
        self, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodeInfo], dict[str, str], dict[str, str]]:
        """``Filter``: ``(kept, failed {node: msg}, failed_and_unresolvable {node: msg})``.

        Without ``filterVerb`` every node passes. With ``nodeCacheCapable`` the answer's
        ``NodeNames`` are mapped back to the input NodeInfos (a name not in the input is the error
        ``extender "<url>" claims a filtered node "<n>" which is not found in the input node list``).
        Otherwise the answer's ``Nodes.items`` become **new** NodeInfos holding only the returned
        Node object, as upstream does (they carry no pods, so Score plugins run afterwards see
        empty nodes). Raises :class:`ExtenderError`.
        """
        if not self.filter_verb:
            return list(nodes), {}, {}
        result = self._decode(
            self._transport.send(self.filter_verb, self._args(pod, nodes)), wire.decode_filter_result
        )
        if result.error:
            raise ExtenderError(result.error)
        kept: list[NodeInfo] = []
        if self.node_cache_capable and result.node_names is not None:
            by_name = {ni.name: ni for ni in nodes}
            for n in result.node_names:
                ni = by_name.get(n)
                if ni is None:
                    raise ExtenderError(
                        f'extender "{self.name}" claims a filtered node "{n}" which is not found '
                        "in the input node list"
                    )
                kept.append(ni)
        elif result.nodes is not None:
            for i, obj in enumerate(result.nodes):
                try:
                    kept.append(NodeInfo(Node.from_manifest(obj)))
                except ManifestError as e:
                    raise ExtenderError(
                        f"extender {self.name} returned an invalid node: {e.under(f'Nodes.items[{i}]')}"
                    ) from None
        return kept, result.failed_nodes, result.failed_and_unresolvable_nodes

    def prioritize(self, pod: Pod, nodes: Sequence[NodeInfo]) -> dict[str, int]:
        """``Prioritize``: ``{host: score}`` (scores expected in 0..10, not clamped, as upstream;
        a host listed twice keeps its last score, where upstream adds both). Without ``prioritizeVerb`` every node gets 0.
        The caller multiplies by :attr:`weight` and ``MaxNodeScore / MaxExtenderPriority``.
        Raises :class:`ExtenderError`."""
        if not self.prioritize_verb:
            return {ni.name: 0 for ni in nodes}
        m = self.metrics
        if m is not None:
            m.inc(GOROUTINES, {"operation": PRIORITIZING_EXTENDER}, 1)
        try:
            body = self._transport.send(self.prioritize_verb, self._args(pod, nodes))
        finally:
            if m is not None:
                m.inc(GOROUTINES, {"operation": PRIORITIZING_EXTENDER}, -1)
        return dict(self._decode(body, wire.decode_host_priority_list))

    def bind(self, pod: Pod, node: str) -> None:
        """``Bind``: send ``ExtenderBindingArgs`` for ``pod`` -> ``node``; a non-empty ``Error`` in
        the answer is raised. Raises :class:`ExtenderError`."""
        if not self.bind_verb:
            raise ExtenderError("unexpected empty bindVerb in extender")
        body = self._transport.send(self.bind_verb, wire.binding_args(pod.name, pod.namespace, pod.uid, node))
        err = self._decode(body, lambda b: wire.decode_error_result(b, "ExtenderBindingResult"))
        if err:
            raise ExtenderError(err)

    def process_preemption(
        self, pod: Pod, node_to_victims: Mapping[str, Victims], node_info: Callable[[str], NodeInfo | None]
    ) -> dict[str, Victims]:
        """``ProcessPreemption``: send the candidate victims and return the extender's (possibly
        smaller) map, UIDs resolved against the pods of ``node_info(name)`` (the snapshot).

        Raises :class:`ExtenderError` (``nodeinfo not found for node name "<n>"``,
        ``extender: <url> claims to preempt pod (UID: &{<uid>}) on node: <n>, but the pod is not
        found on that node``, transport and decoding errors)."""
        if not self.preempt_verb:
            raise ExtenderError(
                f"preempt verb is not defined for extender {self.name} but run into ProcessPreemption"
            )
        args = wire.preemption_args(pod, node_to_victims, self.node_cache_capable)
        meta = self._decode(self._transport.send(self.preempt_verb, args), wire.decode_meta_victims)
        out: dict[str, Victims] = {}
        for node, (uids, violations) in (meta or {}).items():
            ni = node_info(node)
            if ni is None:
                raise ExtenderError(f'nodeinfo not found for node name "{node}"')
            by_uid = {pi.pod.uid: pi.pod for pi in ni.pods}
            pods = []
            for uid in uids:
                p = by_uid.get(uid)
                if p is None:
                    raise ExtenderError(
                        f"extender: {self.name} claims to preempt pod (UID: &{{{uid}}}) on node: "
                        f"{node}, but the pod is not found on that node"
                    )
                pods.append(p)
            out[node] = Victims(pods, violations)
        return out

    def close(self) -> None:
        """Release pooled connections."""
        self._transport.close()

    def _decode(self, body: Any, fn: Callable[[Any], Any]) -> Any:
        try:
            return fn(body)
        except WireError as e:
            raise ExtenderError(str(e)) from None
