"""Pod churn over a :class:`~kubesched.cache.cache.Cache`, shared by the property tests of the
pod-match index (``tests/framework/test_pod_match_index.py``,
``tests/plugins/test_inter_pod_affinity_index.py``,
``tests/plugins/test_pod_topology_spread_prescore_index.py``): each test draws its own operations
with hypothesis (:func:`churn_ops`, over the pod ``labels`` and selector ``requirements`` here) and
hands them to :meth:`PodChurn.apply` one by one.

Operations (tuples, first item the kind; node numbers and indices are taken modulo what exists):

* ``("add", node, namespace, labels, terminating[, with_affinity])``: a bound pod (``add_pod``);
* ``("assume", node, namespace, labels)``: an assumed pod (``assume_pod``);
* ``("forget", i)`` / ``("confirm", i)``: an assumed pod forgotten, or bound and added;
* ``("relabel", i, labels)`` / ``("terminate", i)``: a bound pod updated (``update_pod``);
* ``("remove", i)``: a bound pod removed;
* ``("node_out", node)`` / ``("node_in", node)``: a node leaves (its pods first) or joins.

Any other kind (a test's own ``"check"``) is left to the caller."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from kubesched.api.labels import LabelSelector, Requirement
from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.cache.cache import Cache
from kubesched.testing import pod_manifest

#: label keys and values of the churned pods and of the selectors drawn against them
KEYS = ("app", "tier")
VALUES = ("a", "b", "c")
#: a pod's labels
labels = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=2)
#: one selector requirement over KEYS and VALUES
requirements = st.builds(
    Requirement,
    st.sampled_from(KEYS),
    st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist")),
    st.frozensets(st.sampled_from(VALUES), min_size=1, max_size=2),
)


def churn_pod(
    n: int,
    ns: str,
    node: str,
    lab: dict[str, str],
    terminating: bool = False,
    uid: str | None = None,
    affinity: dict[str, Any] | None = None,
) -> Pod:
    """Pod ``p<n>`` in ``ns`` on ``node`` asking 10m CPU, with ``deletionTimestamp`` set when
    ``terminating`` and ``spec.affinity`` when ``affinity`` is given."""
    spec = {"affinity": affinity} if affinity else None
    m = pod_manifest(f"p{n}", ns, labels=lab, node_name=node, cpu="10m", uid=uid, spec=spec)
    if terminating:
        m["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    return Pod.from_manifest(m)


def raw_selector(sel: LabelSelector) -> dict[str, Any]:
    """``sel`` as a manifest's ``labelSelector`` (``matchExpressions`` only)."""
    return {
        "matchExpressions": [
            {
                "key": r.key,
                "operator": r.operator,
                **({"values": sorted(r.values)} if r.operator in ("In", "NotIn") else {}),
            }
            for r in sel.requirements
        ]
    }


def pod_ops(
    namespaces: tuple[str, ...], labels: st.SearchStrategy[dict[str, str]]
) -> list[st.SearchStrategy[tuple[Any, ...]]]:
    """Strategies of the ``assume``, ``forget``, ``confirm``, ``relabel``, ``terminate`` and ``remove``
    operations (module docstring), in that order; a test adds its ``add`` (with or without
    ``with_affinity``), node and ``check`` operations around them."""
    return [
        st.tuples(st.just("assume"), st.integers(0, 7), st.sampled_from(namespaces), labels),
        st.tuples(st.just("forget"), st.integers(0, 1000)),
        st.tuples(st.just("confirm"), st.integers(0, 1000)),
        st.tuples(st.just("relabel"), st.integers(0, 1000), labels),
        st.tuples(st.just("terminate"), st.integers(0, 1000)),
        st.tuples(st.just("remove"), st.integers(0, 1000)),
    ]


def churn_ops(
    namespaces: tuple[str, ...],
    add_op: st.SearchStrategy[tuple[Any, ...]],
    *more: st.SearchStrategy[tuple[Any, ...]],
) -> st.SearchStrategy[tuple[Any, ...]]:
    """One operation: ``add_op`` (drawn three times as often), the :func:`pod_ops` over ``labels``,
    then the test's ``more`` (node and ``check`` operations)."""
    return st.one_of(add_op, add_op, add_op, *pod_ops(namespaces, labels), *more)


class PodChurn:
    """A cache with nodes ``n0``..``n<present-1>`` (made by ``make_node``) and the pods the
    operations put on it: ``bound`` (added) and ``assumed``. Node numbers of the operations are
    taken modulo ``slots``; a pod for a node that is not present is skipped. ``existing_affinity``
    is the ``spec.affinity`` of added pods whose operation carries a true ``with_affinity``."""

    def __init__(
        self,
        cache: Cache,
        make_node: Callable[[int], Node],
        *,
        present: int,
        slots: int,
        existing_affinity: dict[str, Any] | None = None,
    ) -> None:
        self.cache = cache
        self.make_node = make_node
        self.slots = slots
        self.existing_affinity = existing_affinity
        self.present = set(range(present))
        self.bound: list[Pod] = []
        self.assumed: list[Pod] = []
        self.n = 0
        for i in sorted(self.present):
            cache.add_node(make_node(i))

    def apply(self, o: tuple[Any, ...]) -> None:
        """Apply one operation (module docstring); kinds it does not know do nothing."""
        cache, kind = self.cache, o[0]
        if kind in ("add", "assume"):
            node = o[1] % self.slots
            if node not in self.present:
                return
            self.n += 1
            with_affinity = kind == "add" and len(o) > 5 and o[5]
            p = churn_pod(
                self.n,
                o[2],
                f"n{node}",
                o[3],
                terminating=kind == "add" and o[4],
                affinity=self.existing_affinity if with_affinity else None,
            )
            if kind == "add":
                cache.add_pod(p)
                self.bound.append(p)
            else:
                cache.assume_pod(p)
                self.assumed.append(p)
        elif kind in ("forget", "confirm") and self.assumed:
            p = self.assumed.pop(o[1] % len(self.assumed))
            if kind == "forget":
                cache.forget_pod(p)
            else:
                cache.finish_binding(p)
                cache.add_pod(p)
                self.bound.append(p)
        elif kind in ("relabel", "terminate") and self.bound:
            i = o[1] % len(self.bound)
            old = self.bound[i]
            new = churn_pod(
                int(old.name[1:]),
                old.namespace,
                old.node_name or "",
                o[2] if kind == "relabel" else dict(old.labels),
                terminating=kind == "terminate" or old.deletion_timestamp is not None,
                uid=old.uid,
                affinity=old.raw["spec"].get("affinity"),
            )
            cache.update_pod(old, new)
            self.bound[i] = new
        elif kind == "remove" and self.bound:
            cache.remove_pod(self.bound.pop(o[1] % len(self.bound)))
        elif kind == "node_out" and o[1] in self.present and len(self.present) > 1:
            gone = f"n{o[1]}"
            for p in [p for p in self.bound if p.node_name == gone]:
                cache.remove_pod(p)
                self.bound.remove(p)
            for p in [p for p in self.assumed if p.node_name == gone]:
                cache.forget_pod(p)
                self.assumed.remove(p)
            cache.remove_node(self.make_node(o[1]))
            self.present.discard(o[1])
        elif kind == "node_in" and o[1] not in self.present:
            cache.add_node(self.make_node(o[1]))
            self.present.add(o[1])
