"""The framework runtime of one profile: builds the plugins and runs each extension point in
upstream order (``pkg/scheduler/framework/runtime/framework.go``).

The ``Framework`` is also the plugins' :class:`~kubesched.framework.handle.Handle`. It knows no
plugin by name: plugins come from a :class:`~kubesched.framework.registry.Registry`.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from time import monotonic, perf_counter
from typing import Any, Protocol, TypeVar, cast, runtime_checkable

import numpy as np

from kubesched.api.pod import Pod
from kubesched.clock import Clock
from kubesched.config.args import decode_plugin_args
from kubesched.config.extension_points import (
    BIND,
    EXTENSION_POINT_TABLE,
    FILTER,
    PERMIT,
    POST_BIND,
    POST_FILTER,
    PRE_BIND,
    PRE_BIND_PRE_FLIGHT_LABEL,
    PRE_ENQUEUE,
    PRE_FILTER,
    PRE_SCORE,
    QUEUE_SORT,
    RESERVE,
    SCORE,
    UNRESERVE_LABEL,
)
from kubesched.config.feature_gates import resolve as resolve_gates
from kubesched.config.types import KubeSchedulerProfile
from kubesched.errors import ConfigError
from kubesched.framework.batch import BoolArray, FilterForms, IntArray, ScoreForms, filter_forms, score_forms
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import NodeToStatus
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.handle import EventRecorder, Nominator, ObjectLister, PluginClient, PodActivator
from kubesched.framework.interfaces import (
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
)
from kubesched.framework.metrics_sink import NULL_SINK, MetricsSink, code_label
from kubesched.framework.node_info import NodeInfo, PodInfo
from kubesched.framework.opportunistic_batch import OpportunisticBatch
from kubesched.framework.options import FrameworkOptions
from kubesched.framework.pod_signer import PodSigner
from kubesched.framework.preemption import PreemptionExtender
from kubesched.framework.profile import ResolvedPlugins, resolve_plugins
from kubesched.framework.recorder import status_dict
from kubesched.framework.registry import Registry
from kubesched.framework.results import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    NodePluginScores,
    NodeScore,
    PluginScore,
    PostFilterResult,
    PreFilterResult,
)
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.waiting_pods import WaitingPod, WaitingPodsMap

#: upstream ``maxTimeout``: no Permit plugin may hold a pod longer than 15 minutes (seconds)
MAX_PERMIT_TIMEOUT = 15 * 60.0

_ALL_EVENTS = [ClusterEventWithHint(ClusterEvent(EventResource.Wildcard, ActionType.All))]


_F = TypeVar("_F", bound=Callable[..., Any])


def _status_self(r: Any) -> Status | None:
    return cast("Status | None", r)


def _status_second(r: Any) -> Status | None:
    return cast("Status | None", r[1])


def _status_none(r: Any) -> Status | None:
    return None


def _status_first(r: Any) -> Status | None:
    return cast("Status | None", r[0])


def _timed(label: str, status_of: Callable[[Any], Status | None]) -> Callable[[_F], _F]:
    """Observe ``scheduler_framework_extension_point_duration_seconds{extension_point=label}``
    around a ``Framework.run_*`` method when the framework's sink is enabled (upstream's deferred
    ``metrics.FrameworkExtensionPointDuration`` observation in each ``Run*Plugins``); the status
    label is the method's returned status, ``Error`` when it raised."""

    def deco(fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(self: Framework, *args: Any, **kw: Any) -> Any:
            sink = self.sink
            if not sink.enabled:
                return fn(self, *args, **kw)
            t0 = perf_counter()
            code = "Error"
            try:
                r = fn(self, *args, **kw)
                code = code_label(status_of(r))
                return r
            finally:
                sink.extension_point_duration(label, code, self.profile_name, perf_counter() - t0)

        return cast("_F", wrapper)

    return deco


@runtime_checkable
class IgnoredResourcesArgs(Protocol):
    """Plugin args with an ``ignoredResources`` list (NodeResourcesFit's): the extenders' managed
    resources replace it (upstream ``buildExtenders``)."""

    ignored_resources: list[str]


def _empty_snapshot() -> Snapshot:
    return Snapshot([])


class Framework:
    """One profile's plugins and the logic that runs them.

    Construction decodes each plugin's args from the profile's ``pluginConfig`` (errors carry
    the field path, raised as ConfigError) and instantiates every needed plugin once as
    ``cls(args, self)``: the framework is the plugins' :class:`~kubesched.framework.handle.Handle`.
    Everything else it is built with comes in :class:`~kubesched.framework.options.FrameworkOptions`
    (upstream ``NewFramework(ctx, registry, profile, opts ...Option)``); the scheduling queue, built
    after the frameworks from their QueueSort, is set with :meth:`set_pod_nominator` and
    :meth:`set_pod_activator` as upstream's ``SetPodNominator``/``SetPodActivator``.
    """

    def __init__(
        self, profile: KubeSchedulerProfile, registry: Registry, options: FrameworkOptions | None = None
    ) -> None:
        o = options if options is not None else FrameworkOptions()
        profile_path = o.profile_path
        self.profile_name: str = profile.scheduler_name or "default-scheduler"
        self.parallelism: int = o.parallelism
        self.percentage_of_nodes_to_score: int | None = (
            profile.percentage_of_nodes_to_score
            if profile.percentage_of_nodes_to_score is not None
            else o.percentage_of_nodes_to_score
        )
        self.clock: Clock | None = o.clock
        self.rng: random.Random = o.rng or random.Random(0)
        self.client: PluginClient | None = o.client
        self.objects: ObjectLister = o.objects
        self.event_recorder: EventRecorder | None = o.event_recorder
        #: the pods nominated to nodes (the scheduling queue; ``handle.PodNominator``) or None; a plain
        #: attribute (read per node on the per-node Filter path), set by :meth:`set_pod_nominator`
        self.nominator: Nominator | None = o.nominator
        self._activator: PodActivator | None = None
        self.feature_gates: Mapping[str, bool] = (
            o.feature_gates if o.feature_gates is not None else resolve_gates(None)
        )
        self.waiting_pods = WaitingPodsMap()
        self.permit_wait_timeout = o.permit_wait_timeout
        self._snapshot_provider: Callable[[], Snapshot] = o.snapshot_provider or _empty_snapshot
        self._node_info_provider = o.node_info_provider
        self.skipped_plugins: list[str] = []
        #: the scheduler's extenders (``handle.Extenders()``; DefaultPreemption calls their preempt verb)
        self.extenders: Sequence[PreemptionExtender] = tuple(o.extenders)
        #: metrics recorder for plugins (``handle.metrics``) or None: the scheduler records no metrics
        self.metrics: MetricsSink | None = o.metrics
        #: where the runtime records its own metrics (the null sink: nothing recorded)
        self.sink: MetricsSink = o.metrics if o.metrics is not None else NULL_SINK
        skip_unavailable, on_skipped, ignored_resources = (
            o.skip_unavailable,
            o.on_skipped,
            o.ignored_resources,
        )

        def plugin_class(name: str, path: str) -> type[Plugin]:
            return registry.get(name, path)

        plugins_cfg = profile.plugins
        if skip_unavailable:
            plugins_cfg = self._without_unavailable(plugins_cfg, registry)
            if self.skipped_plugins and on_skipped is not None:
                on_skipped(self.skipped_plugins)
        resolved: ResolvedPlugins = resolve_plugins(plugins_cfg, plugin_class, profile_path)
        self.resolved = resolved
        instances: dict[str, Plugin] = {}
        for name in resolved.needed:
            cls = registry.get(name, f"{profile_path}.plugins")
            args: Any = None
            if cls.Args is not None:
                args = decode_plugin_args(cls.Args, profile, name, profile_path)
                if ignored_resources and isinstance(args, IgnoredResourcesArgs):
                    # upstream buildExtenders *replaces* ignoredResources with the extenders' list
                    args.ignored_resources = list(ignored_resources)
            try:
                instances[name] = cls(args, self)
            except ConfigError:
                raise
            except Exception as e:  # a third-party plugin may raise anything: one line, naming it
                raise ConfigError(
                    f"{profile_path}.pluginConfig", f"initializing plugin {name!r}: {type(e).__name__}: {e}"
                ) from None
        self.plugins = instances
        p = resolved.points

        def at(point: Any) -> list[Any]:
            return [instances[n] for n in p[point.key]]

        self.pre_enqueue_plugins: list[PreEnqueuePlugin] = at(PRE_ENQUEUE)
        self.queue_sort_plugin: QueueSortPlugin = at(QUEUE_SORT)[0]
        self.pre_filter_plugins: list[PreFilterPlugin] = at(PRE_FILTER)
        self.filter_plugins: list[FilterPlugin] = at(FILTER)
        self.post_filter_plugins: list[PostFilterPlugin] = at(POST_FILTER)
        self.pre_score_plugins: list[PreScorePlugin] = at(PRE_SCORE)
        self.score_plugins: list[ScorePlugin] = at(SCORE)
        self.score_weights: dict[str, int] = resolved.weights
        self.reserve_plugins: list[ReservePlugin] = at(RESERVE)
        self.permit_plugins: list[PermitPlugin] = at(PERMIT)
        self.pre_bind_plugins: list[PreBindPlugin] = at(PRE_BIND)
        self.bind_plugins: list[BindPlugin] = at(BIND)
        self.post_bind_plugins: list[PostBindPlugin] = at(POST_BIND)
        #: batch forms per Filter / Score plugin (same order as the plugin lists), resolved once
        self.filter_forms: list[FilterForms] = [filter_forms(pl) for pl in self.filter_plugins]
        self.score_forms: list[ScoreForms] = [score_forms(pl) for pl in self.score_plugins]
        #: Filter plugins without a batch form (the batch path needs each of them to Skip at PreFilter)
        self._filter_without_batch: list[str] = [
            pl.NAME for pl, f in zip(self.filter_plugins, self.filter_forms, strict=True) if f.batch is None
        ]
        #: the profile's ``SignPod`` (pod signatures for OpportunisticBatching)
        self.signer = PodSigner(
            self.profile_name,
            [*self.pre_filter_plugins, *self.filter_plugins, *self.pre_score_plugins, *self.score_plugins],
            bool(self.extenders),
            self.sink,
        )
        #: OpportunisticBatching's state (feature gate ``OpportunisticBatching``) or None when off
        self.batch: OpportunisticBatch | None = None
        if self.feature_gates.get("OpportunisticBatching", False):
            self.batch = OpportunisticBatch(
                self.profile_name,
                sign=self.signer.sign_pod,
                run_filter=self.run_filter_plugins,
                node_info=lambda name: self.snapshot().get(name),
                now=self.clock.now if self.clock is not None else monotonic,
                rng=self.rng,
                sink=self.sink,
            )

    def _without_unavailable(self, plugins_cfg: Any, registry: Registry) -> Any:
        """A copy of the plugins config without plugins that are not implemented (default profile only)."""
        cfg = plugins_cfg.model_copy(deep=True)
        missing: list[str] = []
        for attr in ("multi_point", *(point.attr for point in EXTENSION_POINT_TABLE)):
            pset = getattr(cfg, attr)
            keep = []
            for e in pset.enabled:
                if registry.available(e.name):
                    keep.append(e)
                elif e.name not in missing:
                    missing.append(e.name)
            pset.enabled = keep
        self.skipped_plugins = missing
        return cfg

    # ---- metrics ------------------------------------------------------------------------------

    def _run_plugin(
        self,
        state: CycleState,
        label: str,
        name: str,
        status_of: Callable[[Any], Status | None],
        fn: Callable[..., Any],
        *args: Any,
    ) -> Any:
        """``fn(*args)``, timed into ``scheduler_plugin_execution_duration_seconds`` in sampled
        cycles (upstream ``runXPlugin``: ``if !state.ShouldRecordPluginMetrics()``). Exceptions
        propagate (observed as ``Error``)."""
        if not state.record_plugin_metrics or not self.sink.enabled:
            return fn(*args)
        t0 = perf_counter()
        code = "Error"
        try:
            r = fn(*args)
            code = code_label(status_of(r))
            return r
        finally:
            self.sink.plugin_execution_duration(name, label, code, perf_counter() - t0)

    def _count(self, name: str, label: str, count: int = 1) -> None:
        if self.sink.enabled:
            self.sink.plugin_evaluations(name, label, self.profile_name, count)

    def record_filter_batch_evaluations(self, state: CycleState, first: IntArray) -> None:
        """Count Filter evaluations of rows decided by batch masks exactly as the per-node path
        counts them: ``first[i]`` is the index of the first rejecting plugin of visited row ``i``
        (-1: all pass); a plugin is evaluated on a row iff no earlier plugin rejected it."""
        sink = self.sink
        if not sink.enabled or len(first) == 0:
            return
        n = len(self.filter_plugins)
        if int(first.max()) < 0:  # every visited row passed every plugin (the common case)
            at_least: list[int] = [len(first)] * n
        else:
            reach = np.where(first < 0, n, first)
            at_least = np.cumsum(np.bincount(reach, minlength=n + 1)[::-1])[::-1].tolist()
        skip = state.skip_filter_plugins
        for idx, pl in enumerate(self.filter_plugins):
            if skip and pl.NAME in skip:
                continue
            c = at_least[idx]
            if c:
                sink.plugin_evaluations(pl.NAME, FILTER.label, self.profile_name, c)

    # ---- Handle -------------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The snapshot of the current scheduling cycle."""
        return self._snapshot_provider()

    def cached_node_info(self, node_name: str) -> NodeInfo | None:
        """The scheduler cache's current NodeInfo of ``node_name`` (see ``Handle.cached_node_info``);
        without a cache provider, the current snapshot's."""
        if self._node_info_provider is not None:
            return self._node_info_provider(node_name)
        return self._snapshot_provider().get(node_name)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        """The pod with ``uid`` if it waits on Permit."""
        return self.waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject a waiting pod with message ``removed``; True if it was waiting."""
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    def iterate_over_waiting_pods(self) -> Iterator[WaitingPod]:
        """Every waiting pod."""
        return iter(self.waiting_pods)

    def set_pod_nominator(self, nominator: Nominator) -> None:
        """Set the nominator once the scheduling queue exists (upstream ``frameworkImpl.SetPodNominator``:
        the queue is built from the frameworks' QueueSort, so it comes after them)."""
        self.nominator = nominator

    def set_pod_activator(self, activator: PodActivator) -> None:
        """Set where :meth:`activate` moves pods (upstream ``frameworkImpl.SetPodActivator``)."""
        self._activator = activator

    def activate(self, pods: Mapping[str, Pod]) -> None:
        """Move ``pods`` to activeQ (``handle.Activate``); without an activator, nothing."""
        if self._activator is not None and pods:
            self._activator.activate(pods)

    # ---- events ---------------------------------------------------------------------------------

    def enqueue_hints(self) -> list[tuple[str, list[ClusterEventWithHint]]]:
        """Per plugin relevant to requeueing (PreEnqueue/PreFilter/Filter/Reserve/Permit), its registered
        events; plugins without EnqueueExtensions are registered for every event
        (``pkg/scheduler/framework/runtime/framework.go`` ``NewFramework``)."""
        names: list[str] = []
        for lst in (
            self.pre_enqueue_plugins,
            self.pre_filter_plugins,
            self.filter_plugins,
            self.reserve_plugins,
            self.permit_plugins,
        ):
            for pl in lst:
                if pl.NAME not in names:
                    names.append(pl.NAME)
        out = []
        for n in names:
            plugin = self.plugins[n]
            events = plugin.events_to_register() if isinstance(plugin, EnqueueExtensions) else _ALL_EVENTS
            out.append((n, list(events)))
        return out

    # ---- PreEnqueue -----------------------------------------------------------------------------

    def run_pre_enqueue_plugins(self, pod: Pod) -> Status | None:
        """First non-Success PreEnqueue status (with plugin set), or None."""
        for pl in self.pre_enqueue_plugins:
            s = pl.pre_enqueue(pod)
            if s is not None and not s.is_success():
                s.plugin = pl.NAME
                return s
        return None

    # ---- PreFilter ------------------------------------------------------------------------------

    @_timed(PRE_FILTER.label, _status_second)
    def run_pre_filter_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """Upstream ``RunPreFilterPlugins``. Returns
        ``(result, status, plugins that returned node sets or rejected)``."""
        result: PreFilterResult | None = None
        plugins_with_nodes: list[str] = []
        skip: set[str] = set()
        rejector: Status | None = None
        rec = state.recorder
        for pl in self.pre_filter_plugins:
            try:
                if self.sink.enabled:
                    self._count(pl.NAME, PRE_FILTER.label)
                    r, s = self._run_plugin(
                        state, PRE_FILTER.label, pl.NAME, _status_second, pl.pre_filter, state, pod, nodes
                    )
                else:
                    r, s = pl.pre_filter(state, pod, nodes)
            except Exception as e:  # noqa: BLE001 - a plugin crash is an Error status, never a scheduler crash
                s, r = Status(Code.Error, err=e), None
            if rec is not None:
                rec.pre_filter[pl.NAME] = status_dict(s)
            if s is not None and s.is_skip():
                skip.add(pl.NAME)
                continue
            if s is not None and not s.is_success():
                s.plugin = pl.NAME
                if s.code == Code.UnschedulableAndUnresolvable:
                    state.skip_filter_plugins = skip
                    return None, s, {pl.NAME}
                if s.code == Code.Unschedulable or s.code == Code.Pending:
                    rejector = s
                    continue
                state.skip_filter_plugins = skip
                return (
                    None,
                    Status(
                        Code.Error, f'running PreFilter plugin "{pl.NAME}": {s.message()}', plugin=pl.NAME
                    ),
                    set(),
                )
            if r is not None and r.node_names is not None:
                plugins_with_nodes.append(pl.NAME)
                result = r if result is None else result.merge(r)
                if result.node_names is not None and not result.node_names:
                    if len(plugins_with_nodes) == 1:
                        msg = f"node(s) didn't satisfy plugin {plugins_with_nodes[0]}"
                    else:
                        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(plugins_with_nodes)}] simultaneously"
                    state.skip_filter_plugins = skip
                    return None, Status(Code.UnschedulableAndUnresolvable, msg), set(plugins_with_nodes)
        state.skip_filter_plugins = skip
        if rejector is not None:
            return result, rejector, {rejector.plugin} | set(plugins_with_nodes)
        return result, None, set(plugins_with_nodes)

    def has_pre_filter_extensions(self, state: CycleState) -> bool:
        """True if some PreFilter plugin not skipped in ``state`` has extensions; False means
        :meth:`run_pre_filter_extension_add_pod` and :meth:`run_pre_filter_extension_remove_pod`
        do nothing for ``state`` or its clones (which share its skip set)."""
        skip = state.skip_filter_plugins
        return any(
            pl.NAME not in skip and pl.pre_filter_extensions() is not None for pl in self.pre_filter_plugins
        )

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Run every non-skipped PreFilter plugin's ``add_pod`` extension."""
        for pl in self.pre_filter_plugins:
            if pl.NAME in state.skip_filter_plugins:
                continue
            ext = pl.pre_filter_extensions()
            if ext is None:
                continue
            s = ext.add_pod(state, pod_to_schedule, pod_info_to_add, node_info)
            if s is not None and not s.is_success():
                return Status(
                    Code.Error,
                    f'running AddPod on PreFilter plugin "{pl.NAME}": {s.message()}',
                    plugin=pl.NAME,
                )
        return None

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Run every non-skipped PreFilter plugin's ``remove_pod`` extension."""
        for pl in self.pre_filter_plugins:
            if pl.NAME in state.skip_filter_plugins:
                continue
            ext = pl.pre_filter_extensions()
            if ext is None:
                continue
            s = ext.remove_pod(state, pod_to_schedule, pod_info_to_remove, node_info)
            if s is not None and not s.is_success():
                return Status(
                    Code.Error,
                    f'running RemovePod on PreFilter plugin "{pl.NAME}": {s.message()}',
                    plugin=pl.NAME,
                )
        return None

    # ---- Filter ---------------------------------------------------------------------------------

    def run_filter_plugins(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, recorder: Any = None
    ) -> Status | None:
        """Upstream ``RunFilterPlugins``: first non-Success stops; rejections keep their code, anything else
        is an Error."""
        skip = state.skip_filter_plugins
        timed = self.sink.enabled
        for pl in self.filter_plugins:
            if skip and pl.NAME in skip:
                continue
            if timed:
                self._count(pl.NAME, FILTER.label)
                s = _call(
                    self._run_plugin,
                    state,
                    FILTER.label,
                    pl.NAME,
                    _status_self,
                    pl.filter,
                    state,
                    pod,
                    node_info,
                )
            else:
                s = _call(pl.filter, state, pod, node_info)
            if recorder is not None:
                recorder.record_filter(node_info.name, pl.NAME, s)
            if s is not None and s.code != Code.Success:
                return _filter_failure(pl.NAME, s)
        return None

    def run_filter_plugin(
        self, pl: FilterPlugin, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        """One Filter plugin's verdict exactly as :meth:`run_filter_plugins` reports it when every
        earlier plugin passed (used for nodes the batch masks say ``pl`` rejects first; counted
        by :meth:`record_filter_batch_evaluations`, timed in sampled cycles)."""
        s = _call(
            self._run_plugin, state, FILTER.label, pl.NAME, _status_self, pl.filter, state, pod, node_info
        )
        if s is not None and s.code != Code.Success:
            return _filter_failure(pl.NAME, s)
        return None

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, recorder: Any = None
    ) -> Status | None:
        """Upstream ``RunFilterPluginsWithNominatedPods``: filter once with higher-or-equal-priority
        nominated pods added, then without."""
        return self._with_nominated_pods(state, pod, node_info, self.run_filter_plugins, recorder)

    def _with_nominated_pods(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        run: Callable[[CycleState, Pod, NodeInfo, Any], Status | None],
        recorder: Any = None,
    ) -> Status | None:
        nominated: list[PodInfo] = []
        if self.nominator is not None:
            for pi in self.nominator.nominated_pods_for_node(node_info.name):
                if pi.pod.priority >= pod.priority and pi.pod.uid != pod.uid:
                    nominated.append(pi)
        if not nominated:
            return run(state, pod, node_info, recorder)
        ni2 = node_info.snapshot()
        st2 = state.clone()
        for pi in nominated:
            ni2.add_pod_info(pi)
            s = self.run_pre_filter_extension_add_pod(st2, pod, pi, ni2)
            if s is not None and not s.is_success():
                return s
        s = run(st2, pod, ni2, recorder)
        if s is not None and not s.is_success():
            return s
        return run(state, pod, node_info, recorder)

    def filter_runner(self, state: CycleState) -> Callable[[CycleState, Pod, NodeInfo], Status | None]:
        """:meth:`run_filter_plugins_with_nominated_pods` (no recorder) for ``state`` and its clones,
        which share its skip set: the same verdicts, with the skipped plugins left out once instead
        of on every call. For loops that filter many node copies with one state, as preemption's
        dry run does. With metrics on it is :meth:`run_filter_plugins_with_nominated_pods` itself
        (the per-plugin counts and timings)."""
        if self.sink.enabled:
            return self.run_filter_plugins_with_nominated_pods
        skip = state.skip_filter_plugins
        active = [(pl.NAME, pl.filter) for pl in self.filter_plugins if not (skip and pl.NAME in skip)]
        success = Code.Success

        def run(st: CycleState, pod: Pod, node_info: NodeInfo, recorder: Any = None) -> Status | None:
            for name, fn in active:
                try:
                    s = fn(st, pod, node_info)
                except Exception as e:  # noqa: BLE001 - as _call: a plugin crash is an Error status
                    s = Status(Code.Error, err=e)
                if s is not None and s.code != success:
                    return _filter_failure(name, s)
            return None

        nominator = self.nominator

        def run_with_nominated(st: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
            if nominator is None or not nominator.nominated_pods_for_node(node_info.name):
                return run(st, pod, node_info)
            return self._with_nominated_pods(st, pod, node_info, run)

        return run_with_nominated

    # ---- vectorised Filter / Score (kubesched.framework.batch) ------------------------------------

    def run_filter_plugins_batch(
        self,
        state: CycleState,
        pod: Pod,
        table: Any,
        rows: IntArray,
        first_reject: list[Any] | None = None,
        why: list[str] | None = None,
    ) -> BoolArray | None:
        """Success mask of :meth:`run_filter_plugins` over NodeTable ``rows`` (without nominated
        pods), or ``None`` when some non-skipped Filter plugin has no batch form or declines
        (then ``why``, a list, gets the reason). With ``first_reject`` (a list, cleared first):
        ``first_reject[0]`` becomes an ``int64`` array giving per row the index in
        ``filter_plugins`` of the first plugin whose mask rejects it (-1 where all pass).
        Evaluations are counted by the caller (:meth:`record_filter_batch_evaluations`) for the
        rows it visits; in sampled cycles each batch call is one duration sample."""
        skip = state.skip_filter_plugins
        masks: list[BoolArray] = []
        indices: list[int] = []
        if first_reject is not None:
            first_reject.clear()
        timed = state.record_plugin_metrics and self.sink.enabled
        for idx, (pl, forms) in enumerate(zip(self.filter_plugins, self.filter_forms, strict=True)):
            if skip and pl.NAME in skip:
                continue
            fb = forms.batch
            if fb is None:
                if why is not None:
                    why.append(f"Filter plugin {pl.NAME} has no batch form")
                return None
            try:
                if timed:
                    m = self._run_plugin(
                        state, FILTER.label, pl.NAME, _status_none, fb.filter_batch, state, pod, table, rows
                    )
                else:
                    m = fb.filter_batch(state, pod, table, rows)
            except Exception as e:  # noqa: BLE001 - the per-node path reports the plugin's error exactly
                if why is not None:
                    why.append(f"Filter plugin {pl.NAME}'s batch form failed: {e}")
                return None
            if m is None:
                if why is not None:
                    why.append(f"Filter plugin {pl.NAME}'s batch form declined this pod")
                return None
            masks.append(m)
            indices.append(idx)
        if not masks:
            mask: BoolArray = np.ones(len(rows), dtype=np.bool_)
            if first_reject is not None:
                first_reject.append(np.full(len(rows), -1, dtype=np.int64))
            return mask
        # one plugin per row of the stack: a row's first False (argmin) names its first rejecting
        # plugin, looked up only for the rejected rows
        stack = np.array(masks, dtype=np.bool_)
        mask = np.logical_and.reduce(stack, axis=0)
        if first_reject is not None:
            first = np.full(len(rows), -1, dtype=np.int64)
            rejected = np.flatnonzero(~mask)
            if rejected.size:
                first[rejected] = np.array(indices, dtype=np.int64)[stack[:, rejected].argmin(axis=0)]
            first_reject.append(first)
        return mask

    def filter_without_batch(self, state: CycleState) -> str | None:
        """The first Filter plugin of this cycle (not skipped at PreFilter) without a batch form, or None."""
        skip = state.skip_filter_plugins
        for name in self._filter_without_batch:
            if name not in skip:
                return name
        return None

    def filter_status_keys(self, plugin_index: int) -> Any:
        """The ``filter_batch_status_keys`` form of Filter plugin ``plugin_index``, or ``None``."""
        return self.filter_forms[plugin_index].status_keys

    @_timed(SCORE.label, _status_second)
    def run_score_plugins_batch(
        self, state: CycleState, pod: Pod, table: Any, rows: IntArray, nodes: Sequence[NodeInfo]
    ) -> tuple[IntArray | None, Status | None]:
        """Total weighted scores of :meth:`run_score_plugins` as an array over ``rows`` (``nodes``
        are the same nodes as NodeInfos, used by plugins without a batch form). Same statuses,
        same recorder entries (raw, normalized and weighted scores per node and plugin)."""
        total: IntArray | None = None
        skip = state.skip_score_plugins
        rec = state.recorder
        counted = self.sink.enabled
        timed = state.record_plugin_metrics and counted
        weights = self.score_weights
        for pl, forms in zip(self.score_plugins, self.score_forms, strict=True):
            if pl.NAME in skip:
                continue
            if counted:
                self._count(pl.NAME, SCORE.label)
            arr: IntArray | None = None
            sb = forms.batch
            if sb is not None:
                try:
                    if timed:
                        arr = self._run_plugin(
                            state, SCORE.label, pl.NAME, _status_none, sb.score_batch, state, pod, table, rows
                        )
                    else:
                        arr = sb.score_batch(state, pod, table, rows)
                except Exception:  # noqa: BLE001 - rescored node by node below, which reports it
                    arr = None
            ext = forms.extensions
            if arr is None or (ext is not None and forms.normalize_batch is None):
                scores: list[NodeScore] = []
                if arr is None:
                    for ni in nodes:
                        try:
                            if timed:
                                sc, s = self._run_plugin(
                                    state, SCORE.label, pl.NAME, _status_second, pl.score, state, pod, ni
                                )
                            else:
                                sc, s = pl.score(state, pod, ni)
                        except Exception as e:  # noqa: BLE001
                            sc, s = 0, Status(Code.Error, err=e)
                        if s is not None and not s.is_success():
                            return None, Status(
                                Code.Error,
                                f'running Score plugins: plugin "{pl.NAME}" failed with: {s.message()}',
                                plugin=pl.NAME,
                            )
                        scores.append(NodeScore(ni.name, sc))
                else:
                    scores = [NodeScore(ni.name, int(v)) for ni, v in zip(nodes, arr.tolist(), strict=False)]
                if rec is not None:
                    rec.record_scores(pl.NAME, nodes, [ns.score for ns in scores])
                if ext is not None:
                    s = ext.normalize_score(state, pod, scores)
                    if s is not None and not s.is_success():
                        return None, Status(
                            Code.Error,
                            f'running Normalize on Score plugins: plugin "{pl.NAME}" '
                            f"failed with: {s.message()}",
                            plugin=pl.NAME,
                        )
                vals = [ns.score for ns in scores]
                if any(v > MAX_NODE_SCORE or v < MIN_NODE_SCORE for v in vals):
                    bad = next(v for v in vals if v > MAX_NODE_SCORE or v < MIN_NODE_SCORE)
                    return None, _invalid_score(pl.NAME, bad)
                arr = np.array(vals, dtype=np.int64)
            else:
                if rec is not None:
                    rec.record_scores(pl.NAME, nodes, arr)
                if ext is not None and forms.normalize_batch is not None:
                    arr = forms.normalize_batch.normalize_score_batch(state, pod, arr)
                assert arr is not None
                if _out_of_score_range(arr):
                    badm = (arr > MAX_NODE_SCORE) | (arr < MIN_NODE_SCORE)
                    return None, _invalid_score(pl.NAME, int(arr[int(np.argmax(badm))]))
            weight = weights.get(pl.NAME, 1)
            if rec is not None:
                rec.record_normalized_scores(pl.NAME, nodes, arr, weight)
            # the first plugin's weighted scores start a new total (a batch form may return a
            # column it keeps: never added to in place)
            if total is None:
                total = np.multiply(arr, weight, dtype=np.int64)
            elif weight == 1:
                total += arr
            else:
                total += arr * weight
        if total is None:
            total = np.zeros(len(rows), dtype=np.int64)
        return total, None

    # ---- PostFilter -----------------------------------------------------------------------------

    @_timed(POST_FILTER.label, _status_second)
    def run_post_filter_plugins(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        """Upstream ``RunPostFilterPlugins``."""
        reasons: list[str] = []
        rejector_plugin = ""
        result: PostFilterResult | None = None
        rec = state.recorder
        for pl in self.post_filter_plugins:
            try:
                r, s = self._run_plugin(
                    state,
                    POST_FILTER.label,
                    pl.NAME,
                    _status_second,
                    pl.post_filter,
                    state,
                    pod,
                    node_to_status,
                )
            except Exception as e:  # noqa: BLE001
                r, s = None, Status(Code.Error, err=e)
            if rec is not None and pl.NAME not in rec.post_filter:
                rec.record_post_filter(pl.NAME, s, r)
            if s is None or s.is_success():
                return r, Status(Code.Success, plugin=pl.NAME)
            if s.code == Code.UnschedulableAndUnresolvable:
                s.plugin = pl.NAME
                return r, s
            if not s.is_rejected():
                return None, Status(Code.Error, s.message(), plugin=pl.NAME)
            reasons.extend([str(s.err), *s.reasons] if s.err else s.reasons)
            if r is not None and r.nominating_info is not None and r.nominating_info.mode != 0:
                result = r
            if not rejector_plugin:
                rejector_plugin = pl.NAME
        return result, Status(Code.Unschedulable, *reasons, plugin=rejector_plugin)

    # ---- PreScore / Score -----------------------------------------------------------------------

    @_timed(PRE_SCORE.label, _status_self)
    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Upstream ``RunPreScorePlugins``: Skip adds to the score-skip set; failures are Errors."""
        skip: set[str] = set()
        rec = state.recorder
        for pl in self.pre_score_plugins:
            try:
                if self.sink.enabled:
                    self._count(pl.NAME, PRE_SCORE.label)
                    s = self._run_plugin(
                        state, PRE_SCORE.label, pl.NAME, _status_self, pl.pre_score, state, pod, nodes
                    )
                else:
                    s = pl.pre_score(state, pod, nodes)
            except Exception as e:  # noqa: BLE001
                s = Status(Code.Error, err=e)
            if rec is not None:
                rec.pre_score[pl.NAME] = status_dict(s)
            if s is not None and s.is_skip():
                skip.add(pl.NAME)
                continue
            if s is not None and not s.is_success():
                return Status(
                    Code.Error, f'running PreScore plugin "{pl.NAME}": {s.message()}', plugin=pl.NAME
                )
        state.skip_score_plugins = skip
        return None

    @_timed(SCORE.label, _status_second)
    def run_score_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodePluginScores], Status | None]:
        """Upstream ``RunScorePlugins``: score, normalize, range-check, weight and total per node."""
        plugins = [pl for pl in self.score_plugins if pl.NAME not in state.skip_score_plugins]
        result = [NodePluginScores(ni.name) for ni in nodes]
        rec = state.recorder
        timed = state.record_plugin_metrics and self.sink.enabled
        for pl in plugins:
            self._count(pl.NAME, SCORE.label)
            scores: list[NodeScore] = []
            for ni in nodes:
                try:
                    if timed:
                        sc, s = self._run_plugin(
                            state, SCORE.label, pl.NAME, _status_second, pl.score, state, pod, ni
                        )
                    else:
                        sc, s = pl.score(state, pod, ni)
                except Exception as e:  # noqa: BLE001
                    sc, s = 0, Status(Code.Error, err=e)
                if s is not None and not s.is_success():
                    return [], Status(
                        Code.Error,
                        f'running Score plugins: plugin "{pl.NAME}" failed with: {s.message()}',
                        plugin=pl.NAME,
                    )
                scores.append(NodeScore(ni.name, sc))
                if rec is not None:
                    rec.record_score(pl.NAME, ni.name, sc)
            ext = pl.score_extensions()
            if ext is not None:
                s = ext.normalize_score(state, pod, scores)
                if s is not None and not s.is_success():
                    return [], Status(
                        Code.Error,
                        f'running Normalize on Score plugins: plugin "{pl.NAME}" failed with: {s.message()}',
                        plugin=pl.NAME,
                    )
            weight = self.score_weights.get(pl.NAME, 1)
            for i, ns in enumerate(scores):
                if ns.score > MAX_NODE_SCORE or ns.score < MIN_NODE_SCORE:
                    return [], _invalid_score(pl.NAME, ns.score)
                weighted = ns.score * weight
                nps = result[i]
                nps.scores.append(PluginScore(pl.NAME, weighted))
                nps.total_score += weighted
                if rec is not None:
                    rec.normalized_score.setdefault(ns.name, {})[pl.NAME] = ns.score
                    rec.final_score.setdefault(ns.name, {})[pl.NAME] = weighted
        return result, None

    def has_score_plugins(self) -> bool:
        """True if any Score plugin is enabled."""
        return bool(self.score_plugins)

    def has_filter_plugins(self) -> bool:
        """True if any Filter plugin is enabled."""
        return bool(self.filter_plugins)

    def has_post_filter_plugins(self) -> bool:
        """True if any PostFilter plugin is enabled."""
        return bool(self.post_filter_plugins)

    # ---- Reserve / Permit -----------------------------------------------------------------------

    @_timed(RESERVE.label, _status_self)
    def run_reserve_plugins_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Upstream ``RunReservePluginsReserve``: stop at the first failure."""
        rec = state.recorder
        for pl in self.reserve_plugins:
            s = _call(
                self._run_plugin,
                state,
                RESERVE.label,
                pl.NAME,
                _status_self,
                pl.reserve,
                state,
                pod,
                node_name,
            )
            if rec is not None:
                rec.reserve[pl.NAME] = status_dict(s)
            if s is not None and not s.is_success():
                return _failure("Reserve", pl.NAME, s)
        return None

    @_timed(UNRESERVE_LABEL, _status_none)
    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Every Reserve plugin's ``unreserve`` in reverse order."""
        for pl in reversed(self.reserve_plugins):
            self._run_plugin(
                state, UNRESERVE_LABEL, pl.NAME, _status_none, pl.unreserve, state, pod, node_name
            )

    @_timed(PERMIT.label, _status_self)
    def run_permit_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Upstream ``RunPermitPlugins``. A ``Wait`` registers a :class:`WaitingPod` (timeouts capped at 15
        minutes,
        or at ``permit_wait_timeout`` when set)."""
        timeouts: dict[str, float] = {}
        rec = state.recorder
        for pl in self.permit_plugins:
            try:
                permit: tuple[Status | None, float] = self._run_plugin(
                    state, PERMIT.label, pl.NAME, _status_first, pl.permit, state, pod, node_name
                )
                s, timeout = permit
            except Exception as e:  # noqa: BLE001
                s, timeout = Status(Code.Error, err=e), 0.0
            if rec is not None:
                rec.permit[pl.NAME] = status_dict(s)
            if s is None or s.is_success():
                continue
            if s.is_rejected():
                s.plugin = pl.NAME
                return s
            if s.is_wait():
                cap = MAX_PERMIT_TIMEOUT
                if self.permit_wait_timeout:
                    cap = min(cap, self.permit_wait_timeout)
                timeouts[pl.NAME] = min(timeout, cap)
                continue
            return Status(Code.Error, f'running Permit plugin "{pl.NAME}": {s.message()}', plugin=pl.NAME)
        if timeouts:
            self.waiting_pods.add(WaitingPod(pod, timeouts, self.clock))
            return Status(
                Code.Wait, f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"'
            )
        return None

    # ---- Binding --------------------------------------------------------------------------------

    @_timed(PRE_BIND_PRE_FLIGHT_LABEL, _status_self)
    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Upstream ``RunPreBindPreFlights``: Error -> Error; any Success -> Success; all Skip -> Skip."""
        if not self.pre_bind_plugins:
            return Status(Code.Skip)
        skip: set[str] = set()
        for pl in self.pre_bind_plugins:
            s = self._run_plugin(
                state,
                PRE_BIND_PRE_FLIGHT_LABEL,
                pl.NAME,
                _status_self,
                pl.pre_bind_pre_flight,
                state,
                pod,
                node_name,
            )
            if s is not None and s.is_skip():
                skip.add(pl.NAME)
                continue
            if s is not None and not s.is_success():
                return Status(
                    Code.Error, f'running PreBindPreFlight "{pl.NAME}": {s.message()}', plugin=pl.NAME
                )
        state.skip_pre_bind_plugins = skip
        if len(skip) == len(self.pre_bind_plugins):
            return Status(Code.Skip)
        return None

    @_timed(PRE_BIND.label, _status_self)
    def run_pre_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Upstream ``RunPreBindPlugins``: in order, first failure stops."""
        rec = state.recorder
        for pl in self.pre_bind_plugins:
            if pl.NAME in state.skip_pre_bind_plugins:
                continue
            s = _call(
                self._run_plugin,
                state,
                PRE_BIND.label,
                pl.NAME,
                _status_self,
                pl.pre_bind,
                state,
                pod,
                node_name,
            )
            if rec is not None:
                rec.pre_bind[pl.NAME] = status_dict(s)
            if s is not None and not s.is_success():
                return _failure("PreBind", pl.NAME, s)
        return None

    @_timed(BIND.label, _status_self)
    def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Upstream ``RunBindPlugins``: the first plugin that does not Skip decides."""
        rec = state.recorder
        s: Status | None = Status(Code.Skip)
        for pl in self.bind_plugins:
            s = _call(
                self._run_plugin, state, BIND.label, pl.NAME, _status_self, pl.bind, state, pod, node_name
            )
            if rec is not None:
                rec.bind[pl.NAME] = status_dict(s)
            if s is not None and s.is_skip():
                continue
            if s is not None and not s.is_success():
                return _failure("Bind", pl.NAME, s)
            return None
        return s

    @_timed(POST_BIND.label, _status_none)
    def run_post_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Every PostBind plugin."""
        for pl in self.post_bind_plugins:
            self._run_plugin(
                state, POST_BIND.label, pl.NAME, _status_none, pl.post_bind, state, pod, node_name
            )


def _out_of_score_range(arr: IntArray) -> bool:
    """Whether some score of ``arr`` lies outside [MIN_NODE_SCORE, MAX_NODE_SCORE]. For ``int64``
    scores one reduction: seen as unsigned, ``score - MIN_NODE_SCORE`` is above the range's width
    exactly when the score is below or above the range."""
    if len(arr) == 0:
        return False
    if arr.dtype == np.int64:
        shifted = arr if MIN_NODE_SCORE == 0 else arr - MIN_NODE_SCORE
        return bool(np.maximum.reduce(shifted.view(np.uint64)) > MAX_NODE_SCORE - MIN_NODE_SCORE)
    return bool(((arr > MAX_NODE_SCORE) | (arr < MIN_NODE_SCORE)).any())


def _invalid_score(plugin: str, score: int) -> Status:
    """The Error status of a score outside [0, 100] after normalizing
    (``pkg/scheduler/framework/runtime/framework.go``)."""
    return Status(
        Code.Error,
        f'applying score defaultWeights on Score plugins: plugin "{plugin}" '
        f"returns an invalid score {score}, it should in the range of "
        f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
        plugin=plugin,
    )


def _call(fn: Callable[..., Status | None], *args: Any) -> Status | None:
    """Run one plugin method; an exception becomes an Error status (a plugin crash never stops the scheduler)."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001
        return Status(Code.Error, err=e)


def _failure(point: str, plugin: str, s: Status) -> Status:
    """A non-Success status of ``plugin`` at ``point``: rejections keep their code (plugin set),
    anything else becomes ``Error: running <point> plugin "<name>": <message>`` as upstream."""
    if s.is_rejected():
        s.plugin = plugin
        return s
    return Status(Code.Error, f'running {point} plugin "{plugin}": {s.message()}', plugin=plugin)


def _filter_failure(plugin: str, s: Status) -> Status:
    """A Filter plugin's non-Success verdict: rejections keep their code (plugin set), anything
    else is ``Error: running "<name>" filter plugin: <message>`` (upstream's wording at Filter)."""
    if s.is_rejected():
        s.plugin = plugin
        return s
    return Status(Code.Error, f'running "{plugin}" filter plugin: {s.message()}', plugin=plugin)
