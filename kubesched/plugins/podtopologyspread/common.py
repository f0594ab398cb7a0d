"""PodTopologySpread building blocks shared by filtering and scoring
(``pkg/scheduler/framework/plugins/podtopologyspread/common.go`` and
``pkg/scheduler/framework/plugins/helper/spread.go`` ``DefaultSelector``).

A constraint's selector is a :class:`~kubesched.api.labels.LabelSelector` or ``None``, the
"nothing" selector a nil ``labelSelector`` compiles to (it matches no pod).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from kubesched.api.labels import LabelSelector, Requirement, parse_label_selector
from kubesched.api.node import HOSTNAME_LABEL, ZONE_LABEL, Node
from kubesched.api.pod import Pod, TopologySpreadConstraint
from kubesched.api.required_node_affinity import RequiredNodeAffinity
from kubesched.api.shape import check_shape
from kubesched.api.taints import NO_EXECUTE, NO_SCHEDULE, find_untolerated
from kubesched.errors import ManifestError
from kubesched.framework.node_info import PodInfo

DO_NOT_SCHEDULE: Final = "DoNotSchedule"
SCHEDULE_ANYWAY: Final = "ScheduleAnyway"
HONOR: Final = "Honor"
IGNORE: Final = "Ignore"

SYSTEM_DEFAULT_CONSTRAINTS: Final = (
    TopologySpreadConstraint(3, HOSTNAME_LABEL, SCHEDULE_ANYWAY, None, None, None, None, ()),
    TopologySpreadConstraint(5, ZONE_LABEL, SCHEDULE_ANYWAY, None, None, None, None, ()),
)
"""``systemDefaultConstraints`` (plugin.go): hostname maxSkew 3 and zone maxSkew 5, both ScheduleAnyway."""

_DO_NOT_SCHEDULE_TAINTS: Final = (NO_SCHEDULE, NO_EXECUTE)


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """``topologySpreadConstraint``: an API constraint with upstream defaults applied
    (``min_domains`` 1, ``node_affinity_policy`` Honor, ``node_taints_policy`` Ignore) and
    ``matchLabelKeys`` folded into ``selector`` (``None`` = nothing)."""

    max_skew: int
    topology_key: str
    selector: LabelSelector | None
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE

    def match_node_inclusion_policies(self, pod: Pod, node: Node, required: RequiredNodeAffinity) -> bool:
        """``matchNodeInclusionPolicies``: Honor affinity -> the pod's nodeSelector/required node
        affinity must match the node; Honor taints -> no untolerated NoSchedule/NoExecute taint."""
        if self.node_affinity_policy == HONOR and not required.matches(node):
            return False
        if (
            self.node_taints_policy == HONOR
            and find_untolerated(node.taints, pod.tolerations, _DO_NOT_SCHEDULE_TAINTS) is not None
        ):
            return False
        return True

    def selector_matches(self, labels: Mapping[str, str]) -> bool:
        """``Selector.Matches(labels)`` (the nothing selector matches nothing)."""
        return self.selector is not None and self.selector.matches(labels)


def merge_label_set_with_selector(
    match_labels: Mapping[str, str], selector: LabelSelector | None
) -> LabelSelector | None:
    """``mergeLabelSetWithSelector``: ``key In [value]`` for each pair ANDed with ``selector``;
    the nothing selector stays nothing (it has no requirements to merge)."""
    if selector is None:
        return None
    extra = tuple(Requirement(k, "In", frozenset((v,))) for k, v in sorted(match_labels.items()))
    return LabelSelector(extra + selector.requirements)


def filter_constraints(
    constraints: Iterable[TopologySpreadConstraint], pod_labels: Mapping[str, str], action: str
) -> list[SpreadConstraint]:
    """``filterTopologySpreadConstraints``: the constraints whose ``whenUnsatisfiable`` is
    ``action``, with defaults applied and ``matchLabelKeys`` values of ``pod_labels`` merged in."""
    out: list[SpreadConstraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = c.label_selector
        if c.match_label_keys:
            ml = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
            if ml:
                selector = merge_label_set_with_selector(ml, selector)
        out.append(
            SpreadConstraint(
                c.max_skew,
                c.topology_key,
                selector,
                c.min_domains if c.min_domains is not None else 1,
                c.node_affinity_policy or HONOR,
                c.node_taints_policy or IGNORE,
            )
        )
    return out


def node_labels_match_spread_constraints(
    node_labels: Mapping[str, str], constraints: Sequence[SpreadConstraint]
) -> bool:
    """``nodeLabelsMatchSpreadConstraints``: the node has every constraint's topology key."""
    return all(c.topology_key in node_labels for c in constraints)


def count_pods_match_selector(
    pod_infos: Iterable[PodInfo], selector: LabelSelector | None, namespace: str
) -> int:
    """``countPodsMatchSelector``: pods in ``namespace``, not terminating, whose labels match.
    An empty selector (``{}``) counts 0, as upstream's ``selector.Empty()`` shortcut; nothing counts 0."""
    if selector is None or selector.empty:
        return 0
    n = 0
    for pi in pod_infos:
        p = pi.pod
        if p.deletion_timestamp is not None or p.namespace != namespace:
            continue
        if selector.matches(p.labels):
            n += 1
    return n


# --- default selector (helper.DefaultSelector) -------------------------------------------------


def _controller_ref(pod: Pod) -> Mapping[str, Any] | None:
    """``metav1.GetControllerOfNoCopy``: the first owner reference with ``controller: true``."""
    meta = pod.raw.get("metadata") or {}
    for o in meta.get("ownerReferences") or []:
        if isinstance(o, Mapping) and o.get("controller") is True:
            return o
    return None


def _well_typed(obj: Mapping[str, Any], kind: str) -> bool:
    try:
        check_shape(obj, kind)
    except ManifestError:
        return False
    return True


def _spec_selector_requirements(obj: Mapping[str, Any]) -> tuple[Requirement, ...]:
    spec = obj.get("spec") or {}
    try:
        sel = (
            parse_label_selector(spec.get("selector"), "spec.selector") if isinstance(spec, Mapping) else None
        )
    except ManifestError:
        return ()
    return sel.requirements if sel is not None else ()


def default_selector(pod: Pod, objects: Any) -> LabelSelector:
    """``helper.DefaultSelector``: the union of the ``spec.selector`` maps of the Services in the
    pod's namespace that select it (later services win on a repeated key), plus the selector of
    the pod's controlling ReplicationController (``v1``, merged as a map), ReplicaSet or
    StatefulSet (``apps/v1``, requirements ANDed). ``objects`` is ``handle.objects``; a missing
    object or a malformed selector is ignored, as upstream ignores lister errors (so is an object
    with a field of the wrong type, which the API server would never have stored)."""
    label_set: dict[str, str] = {}
    if objects is not None:
        for svc in objects.list("Service", pod.namespace):
            if not _well_typed(svc, "Service"):
                continue
            spec = svc.get("spec") or {}
            sel = spec.get("selector") if isinstance(spec, Mapping) else None
            if sel is None or not isinstance(sel, Mapping):
                continue  # services with nil selectors match nothing, not everything
            if all(pod.labels.get(str(k)) == str(v) for k, v in sel.items()):
                label_set.update({str(k): str(v) for k, v in sel.items()})
    selector = LabelSelector.from_labels(label_set)
    owner = _controller_ref(pod)
    if owner is None or objects is None:
        return selector
    api_version, kind, name = owner.get("apiVersion"), owner.get("kind"), str(owner.get("name") or "")
    if api_version == "v1" and kind == "ReplicationController":
        rc = objects.get("ReplicationController", pod.namespace, name)
        if rc is not None and _well_typed(rc, "ReplicationController"):
            spec = rc.get("spec") or {}
            sel = spec.get("selector") if isinstance(spec, Mapping) else None
            if isinstance(sel, Mapping):
                label_set.update({str(k): str(v) for k, v in sel.items()})
            selector = LabelSelector.from_labels(label_set)
    elif api_version == "apps/v1" and kind in ("ReplicaSet", "StatefulSet"):
        obj = objects.get(kind, pod.namespace, name)
        if obj is not None and _well_typed(obj, str(kind)):
            selector = LabelSelector(selector.requirements + _spec_selector_requirements(obj))
    return selector


def build_default_constraints(
    default_constraints: Sequence[TopologySpreadConstraint], pod: Pod, action: str, objects: Any
) -> list[SpreadConstraint]:
    """``buildDefaultConstraints``: the default constraints for ``action`` with the selector
    replaced by :func:`default_selector`; none when that selector is empty."""
    cs = filter_constraints(default_constraints, pod.labels, action)
    if not cs:
        return []
    sel = default_selector(pod, objects)
    if sel.empty:
        return []
    return [
        SpreadConstraint(
            c.max_skew, c.topology_key, sel, c.min_domains, c.node_affinity_policy, c.node_taints_policy
        )
        for c in cs
    ]
