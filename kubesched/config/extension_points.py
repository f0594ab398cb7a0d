"""The table of extension points: one row per point, in upstream order
(``pkg/scheduler/framework/runtime/framework.go`` ``frameworkImpl`` fields,
``pkg/scheduler/metrics/metrics.go`` extension-point label constants).

Config (plugin sets per point), the framework runtime (plugin lists, the interface a plugin must
implement at a point: ``kubesched.framework.interfaces.interface_of``) and metrics
(``extension_point`` label values) all read this table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class ExtensionPoint:
    """One extension point: ``key`` as in config files and ``ResolvedPlugins.points``
    (``preFilter``), ``attr`` the config model's attribute (``pre_filter``), ``label`` the
    ``extension_point`` metric label (``PreFilter``), and whether upstream counts
    ``scheduler_plugin_evaluation_total`` at this point (PreFilter, Filter, PreScore, Score)."""

    key: str
    attr: str
    label: str
    counts_evaluations: bool = False


PRE_ENQUEUE: Final = ExtensionPoint("preEnqueue", "pre_enqueue", "PreEnqueue")
QUEUE_SORT: Final = ExtensionPoint("queueSort", "queue_sort", "QueueSort")
PRE_FILTER: Final = ExtensionPoint("preFilter", "pre_filter", "PreFilter", True)
FILTER: Final = ExtensionPoint("filter", "filter", "Filter", True)
POST_FILTER: Final = ExtensionPoint("postFilter", "post_filter", "PostFilter")
PRE_SCORE: Final = ExtensionPoint("preScore", "pre_score", "PreScore", True)
SCORE: Final = ExtensionPoint("score", "score", "Score", True)
RESERVE: Final = ExtensionPoint("reserve", "reserve", "Reserve")
PERMIT: Final = ExtensionPoint("permit", "permit", "Permit")
PRE_BIND: Final = ExtensionPoint("preBind", "pre_bind", "PreBind")
BIND: Final = ExtensionPoint("bind", "bind", "Bind")
POST_BIND: Final = ExtensionPoint("postBind", "post_bind", "PostBind")

EXTENSION_POINT_TABLE: Final[tuple[ExtensionPoint, ...]] = (
    PRE_ENQUEUE,
    QUEUE_SORT,
    PRE_FILTER,
    FILTER,
    POST_FILTER,
    PRE_SCORE,
    SCORE,
    RESERVE,
    PERMIT,
    PRE_BIND,
    BIND,
    POST_BIND,
)
"""Every extension point a plugin set configures, in upstream order (``multiPoint`` is not a
point of its own: it expands into these)."""

#: metric labels of phases that are not plugin sets of their own but are timed as upstream does
UNRESERVE_LABEL: Final = "Unreserve"
PRE_BIND_PRE_FLIGHT_LABEL: Final = "PreBindPreFlight"
