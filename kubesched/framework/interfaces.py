"""Extension-point interfaces (``staging/src/k8s.io/kube-scheduler/framework/interface.go``).

A plugin is a class deriving from :class:`Plugin` and from one ABC per extension point it
implements. It declares ``NAME`` (the upstream plugin name) and ``Args`` (its args
dataclass, or ``None``); the framework constructs it as ``cls(args, handle)``.
Statuses: ``None`` means Success.

Batch forms (``filter_batch``/``score_batch``) are an optional speed path over many nodes; the
per-node methods remain the definition of a plugin's behaviour.
"""

from __future__ import annotations

from abc import ABC, ABCMeta, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from kubesched.config.extension_points import (
    BIND,
    EXTENSION_POINT_TABLE,
    FILTER,
    PERMIT,
    POST_BIND,
    POST_FILTER,
    PRE_BIND,
    PRE_ENQUEUE,
    PRE_FILTER,
    PRE_SCORE,
    QUEUE_SORT,
    RESERVE,
    SCORE,
    ExtensionPoint,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import NodeToStatus
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.results import NodeScore, PostFilterResult, PreFilterResult
from kubesched.framework.signers import SignFragment
from kubesched.framework.status import Status

if TYPE_CHECKING:
    from kubesched.api.pod import Pod
    from kubesched.framework.handle import Handle
    from kubesched.framework.node_info import NodeInfo, PodInfo
    from kubesched.framework.queued_pod_info import QueuedPodInfo


class _PluginMeta(ABCMeta):
    """Lets a plugin list :class:`Plugin` itself among its bases in any position:
    ``class P(Plugin, FilterPlugin, ScorePlugin)`` is the same class as
    ``class P(FilterPlugin, ScorePlugin)`` (a base that another base already derives from is
    dropped, where Python would refuse the base order with an MRO error)."""

    def __new__(
        mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kw: Any
    ) -> _PluginMeta:
        kept = tuple(b for b in bases if not any(o is not b and issubclass(o, b) for o in bases))
        return super().__new__(mcls, name, kept, namespace, **kw)


class Plugin(metaclass=_PluginMeta):
    """Base of every plugin: ``NAME`` and the ``Args`` type; constructed as ``cls(args, handle)``."""

    NAME: ClassVar[str] = ""
    Args: ClassVar[type | None] = None

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        self.args = args
        self.handle = handle

    def name(self) -> str:
        """The plugin's registered name."""
        return self.NAME

    def required_handle(self) -> Handle:
        """The framework handle the plugin was built with. Raises RuntimeError naming the plugin
        when it was built without one (a plugin that reads cluster objects cannot run then)."""
        if self.handle is None:
            raise RuntimeError(f"{self.NAME} needs a framework handle")
        return self.handle


class PreEnqueuePlugin(Plugin):
    """Gate a pod before it enters activeQ; non-Success keeps it in the unschedulable pool."""

    @abstractmethod
    def pre_enqueue(self, pod: Pod) -> Status | None: ...


class QueueSortPlugin(Plugin):
    """Order of activeQ."""

    @abstractmethod
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


class PreFilterExtensions(ABC):
    """Incremental updates of PreFilter state when pods are added/removed (preemption, nominated pods)."""

    @abstractmethod
    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    @abstractmethod
    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...


class PreFilterPlugin(Plugin):
    """Per-cycle precomputation; may narrow the nodes (``PreFilterResult``) or reject the pod."""

    @abstractmethod
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """The AddPod/RemovePod extensions, or ``None``."""
        return None


class FilterPlugin(Plugin):
    """Decide whether a pod can run on a node; must use the ``node_info`` given."""

    @abstractmethod
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None: ...


class PostFilterPlugin(Plugin):
    """Runs when no node fits (e.g. preemption)."""

    @abstractmethod
    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]: ...


class PreScorePlugin(Plugin):
    """Per-cycle precomputation for scoring; Skip disables this plugin's Score."""

    @abstractmethod
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None: ...


class ScoreExtensions(ABC):
    """NormalizeScore: rewrite the plugin's scores in place into 0..100."""

    @abstractmethod
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None: ...


class ScorePlugin(Plugin):
    """Rank a feasible node."""

    @abstractmethod
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]: ...

    def score_extensions(self) -> ScoreExtensions | None:
        """The NormalizeScore extension, or ``None``."""
        return None


class ReservePlugin(Plugin):
    """Reserve resources for the chosen node; ``unreserve`` must be idempotent."""

    @abstractmethod
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...

    @abstractmethod
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


class PermitPlugin(Plugin):
    """Approve, reject or delay (``Wait`` + timeout in seconds) binding."""

    @abstractmethod
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]: ...


class PreBindPlugin(Plugin):
    """Work before binding (e.g. volumes). ``pre_bind_pre_flight`` returns Success/Skip/Error."""

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Default: Success (PreBind will run)."""
        return None

    @abstractmethod
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


class BindPlugin(Plugin):
    """Bind the pod; Skip lets the next bind plugin try."""

    @abstractmethod
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


class PostBindPlugin(Plugin):
    """Informational hook after a successful bind."""

    @abstractmethod
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


class SignPlugin(Plugin):
    """Signs pods for OpportunisticBatching (upstream ``SignPlugin``): the parts of the pod this
    plugin's PreFilter, Filter, PreScore and Score results depend on. A profile signs pods only
    when every one of its PreFilter, Filter, PreScore and Score plugins implements this interface
    (and no extender is configured); a non-Success status makes the pod unsignable (no batching
    for it). Fragments: :class:`~kubesched.framework.signers.SignFragment`."""

    @abstractmethod
    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment] | None, Status | None]: ...


class EnqueueExtensions(ABC):
    """Events that may make a pod rejected by this plugin schedulable, with queueing hints."""

    @abstractmethod
    def events_to_register(self) -> list[ClusterEventWithHint]: ...


_INTERFACES: dict[str, type[Plugin]] = {
    PRE_ENQUEUE.key: PreEnqueuePlugin,
    QUEUE_SORT.key: QueueSortPlugin,
    PRE_FILTER.key: PreFilterPlugin,
    FILTER.key: FilterPlugin,
    POST_FILTER.key: PostFilterPlugin,
    PRE_SCORE.key: PreScorePlugin,
    SCORE.key: ScorePlugin,
    RESERVE.key: ReservePlugin,
    PERMIT.key: PermitPlugin,
    PRE_BIND.key: PreBindPlugin,
    BIND.key: BindPlugin,
    POST_BIND.key: PostBindPlugin,
}


def interface_of(point: ExtensionPoint) -> type[Plugin]:
    """The interface a plugin enabled at ``point`` must implement."""
    return _INTERFACES[point.key]


EXTENSION_POINTS: tuple[tuple[str, type[Plugin]], ...] = tuple(
    (p.key, interface_of(p)) for p in EXTENSION_POINT_TABLE
)
"""Config key of each extension point and its interface, in upstream order (from
:data:`kubesched.config.extension_points.EXTENSION_POINT_TABLE`)."""
