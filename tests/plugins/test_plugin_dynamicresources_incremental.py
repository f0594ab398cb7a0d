"""The state DynamicResources keeps across scheduling cycles gives the results of recomputing it:
the allocated-device count (``DRAManager.list_all_allocated_devices``) equals a count over every
claim, and an allocator that reuses earlier per-node outcomes (``NodeOutcomes``) allocates what a
fresh allocator finds, cycle after cycle, while devices get taken and released."""

from __future__ import annotations

from typing import Any

from dra_support import CLASS_A, DRIVER_A, claim, device, device_class, request, slice_
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.dra import DeviceClass
from kubesched.api.dra.cel import CelCache
from kubesched.api.node import Node
from kubesched.plugins.dynamicresources.dra_manager import DRAManager
from kubesched.plugins.dynamicresources.structured import (
    Allocator,
    DeviceID,
    Features,
    NodeOutcomes,
    SliceIndex,
)

NODES = [f"node-{i}" for i in range(3)]
CA = device_class(CLASS_A, DRIVER_A)


class _Objects:
    """An informer cache of claims: every change replaces the object (as informers do)."""

    def __init__(self) -> None:
        self.claims: dict[str, dict[str, Any]] = {}

    def list(self, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
        return list(self.claims.values()) if kind == "ResourceClaim" else []

    def get(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        return self.claims.get(name) if kind == "ResourceClaim" else None

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        return {}


def _claim_obj(name: str, devices: list[int], admin: bool) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "metadata": {"name": name, "namespace": "default", "uid": name},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": CLASS_A}}]}},
    }
    if devices:
        results = [{"request": "r", "driver": DRIVER_A, "pool": "p", "device": f"d{d}"} for d in devices]
        if admin:
            for r in results:
                r["adminAccess"] = True
        obj["status"] = {"allocation": {"devices": {"results": results}}}
    return obj


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 4),  # claim
            st.lists(st.integers(0, 5), max_size=2),  # its devices (empty: not allocated)
            st.booleans(),  # admin access
            st.booleans(),  # delete instead
        ),
        min_size=1,
        max_size=25,
    )
)
def test_property_allocated_devices_are_counted_as_a_full_recount(
    changes: list[tuple[int, list[int], bool, bool]],
) -> None:
    objects = _Objects()
    manager = DRAManager()
    for ci, devices, admin, delete in changes:
        name = f"claim-{ci}"
        if delete:
            objects.claims.pop(name, None)
        else:
            objects.claims[name] = _claim_obj(name, devices, admin)
        expected = {
            (DRIVER_A, "p", r["device"])
            for o in objects.claims.values()
            for r in ((o.get("status") or {}).get("allocation") or {"devices": {"results": []}})["devices"][
                "results"
            ]
            if not r.get("adminAccess")
        }
        assert manager.list_all_allocated_devices(objects) == expected


NODE_OBJECTS = {name: Node.from_manifest({"metadata": {"name": name}}) for name in NODES}


def _allocate(
    allocated: set[DeviceID], index: SliceIndex, specs: list[list[str]], outcomes: NodeOutcomes | None
) -> tuple[dict[str, Any], int]:
    """Allocations per node (one allocator for all nodes, as in one cycle) and how many
    ``allocateOne`` calls the searches made."""
    classes = {CLASS_A: CA}

    def get_class(name: str) -> DeviceClass:
        return classes[name]

    claims = [
        claim(
            f"claim-{i}",
            *[request(f"req-{j}", CLASS_A, 1, *([sel] if sel else [])) for j, sel in enumerate(s)],
        )
        for i, s in enumerate(specs)
    ]
    a = Allocator(Features(), allocated, get_class, index, CelCache(), outcomes)
    out: dict[str, Any] = {}
    for name in NODES:
        got = a.allocate(NODE_OBJECTS[name], claims)
        out[name] = None if got is None else [c.allocation for c in got]
    return out, a.num_allocate_one


SELECTORS = [
    "",
    f'device.attributes["{DRIVER_A}"].model == "a"',
    f'device.attributes["{DRIVER_A}"].model == "b"',
]


@settings(max_examples=40, deadline=None)
@given(
    models=st.lists(st.lists(st.sampled_from("ab"), min_size=1, max_size=4), min_size=3, max_size=3),
    cycles=st.lists(
        st.tuples(
            st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=2), min_size=1, max_size=2),  # claims
            st.sets(st.tuples(st.integers(0, 2), st.integers(0, 3)), max_size=4),  # devices taken
        ),
        min_size=1,
        max_size=8,
    ),
)
def test_property_reused_node_outcomes_equal_a_fresh_search(
    models: list[list[str]], cycles: list[tuple[list[list[int]], set[tuple[int, int]]]]
) -> None:
    index = SliceIndex(
        [
            slice_(
                f"slice-{n}",
                name,
                name,
                DRIVER_A,
                *[device(f"d{i}", None, {"model": {"string": m}}) for i, m in enumerate(models[n])],
            )
            for n, name in enumerate(NODES)
        ]
    )
    outcomes = NodeOutcomes()
    previous: set[DeviceID] = set()
    for specs, taken in cycles:
        allocated = {(DRIVER_A, NODES[n], f"d{i}") for n, i in taken if i < len(models[n])}
        changed = allocated ^ previous
        if changed:
            outcomes.bump(changed)
        previous = allocated
        sel = [[SELECTORS[x] for x in s] for s in specs]
        fresh = _allocate(allocated, index, sel, None)
        assert _allocate(allocated, index, sel, outcomes)[0] == fresh[0]
        again, searches = _allocate(allocated, index, sel, outcomes)  # new claim objects, same specs
        assert again == fresh[0] and searches == 0


def test_an_outcome_is_searched_again_when_a_device_of_the_node_changes() -> None:
    index = SliceIndex(
        [slice_(f"slice-{n}", name, name, DRIVER_A, device("d0")) for n, name in enumerate(NODES)]
    )
    outcomes = NodeOutcomes()
    got, searches = _allocate(set(), index, [[""]], outcomes)
    assert searches == 3 * 4 and [len(got[n] or []) for n in NODES] == [1, 1, 1]
    taken = {(DRIVER_A, "node-1", "d0")}
    outcomes.bump(taken)
    got, searches = _allocate(taken, index, [[""]], outcomes)
    # node-0 and node-2 reuse their outcome; node-1 is searched (one allocateOne call: no free device)
    assert searches == 1 and got["node-1"] is None
    assert [got[n][0]["devices"]["results"] for n in ("node-0", "node-2")] == [
        [{"request": "req-0", "driver": DRIVER_A, "pool": n, "device": "d0"}] for n in ("node-0", "node-2")
    ]
