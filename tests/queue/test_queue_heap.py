"""Indexed heap: ordering, update and delete by key (kubesched.queue.heap)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kubesched.queue.heap import Heap, LessKey


def _tuple_heap() -> Heap[tuple[str, int]]:
    return Heap(lambda it: it[0], lambda it, seq: (it[1], seq))


def _less_heap() -> Heap[tuple[str, int]]:
    return Heap(lambda it: it[0], lambda it, seq: LessKey(it, seq, lambda a, b: a[1] < b[1]))


def test_pop_order_and_ties_by_insertion() -> None:
    for h in (_tuple_heap(), _less_heap()):
        for name, v in [("a", 3), ("b", 1), ("c", 3), ("d", 2), ("e", 1)]:
            assert h.add_or_update((name, v)) is True
        assert [h.pop() for _ in range(5)] == [("b", 1), ("e", 1), ("d", 2), ("a", 3), ("c", 3)]
        assert h.pop() is None
        assert h.peek() is None


def test_update_delete_get() -> None:
    h = _tuple_heap()
    for name, v in [("a", 5), ("b", 4), ("c", 3)]:
        h.add_or_update((name, v))
    assert h.add_or_update(("a", 1)) is False
    assert h.get("a") == ("a", 1)
    assert h.peek() == ("a", 1)
    assert h.delete("b") == ("b", 4)
    assert h.delete("b") is None
    assert "b" not in h and "c" in h
    assert len(h) == 2
    assert [h.pop(), h.pop()] == [("a", 1), ("c", 3)]


@given(
    st.lists(st.tuples(st.sampled_from(["add", "del"]), st.integers(0, 15), st.integers(-5, 5)), max_size=80)
)
def test_heap_matches_sorted_model(ops: list[tuple[str, int, int]]) -> None:
    h = _tuple_heap()
    model: dict[str, int] = {}
    for op, k, v in ops:
        key = f"k{k}"
        if op == "add":
            h.add_or_update((key, v))
            model[key] = v
        else:
            assert (h.delete(key) is not None) == (key in model)
            model.pop(key, None)
        assert len(h) == len(model)
    out = []
    while (it := h.pop()) is not None:
        out.append(it)
    assert sorted(v for _, v in out) == [v for _, v in out]
    assert dict(out) == model


@given(
    st.lists(
        st.tuples(st.sampled_from(["add", "del", "pop", "pop"]), st.integers(0, 40), st.integers(-5, 5)),
        max_size=150,
    )
)
def test_pop_leaves_the_array_a_sift_down_from_the_root_leaves(ops: list[tuple[str, int, int]]) -> None:
    """pop (the hole taken to a leaf, the last entry risen from there) against the general
    removal at index 0 (the last entry sifted down from the root): the same entries at the same
    positions after every operation, so ``items()`` order is unchanged too."""
    a, b = _tuple_heap(), _less_heap()
    c, d = _tuple_heap(), _less_heap()
    for op, k, v in ops:
        key = f"k{k}"
        for h, classic in ((a, c), (b, d)):
            if op == "add":
                h.add_or_update((key, v))
                classic.add_or_update((key, v))
            elif op == "del":
                assert h.delete(key) == classic.delete(key)
            else:
                assert h.pop() == (classic._remove_at(0) if len(classic) else None)
            assert h.items() == classic.items()
            assert h._pos == classic._pos
