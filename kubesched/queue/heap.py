"""Indexed binary heap (``pkg/scheduler/backend/heap/heap.go``).

Items are addressed by a key (the queue uses ``namespace/name``) so they can be looked up,
updated in place and deleted in O(log n). Ordering comes from a *sort key* computed when an
item is pushed or re-fixed: ``sort_key(item, seq)`` must return an object comparable with
``<`` whose order is total (``seq`` is a per-heap insertion counter used to break ties
deterministically, where upstream's order is arbitrary).

Mutating an item in a way that changes its order is allowed only through
:meth:`Heap.add_or_update` (which re-computes the sort key and re-sifts).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")

#: ``sort_key(item, seq) -> comparable``.
SortKey = Callable[[Any, int], Any]


class LessKey:
    """Adapter turning a ``less(a, b) -> bool`` function into a sort key; ties (neither is
    less than the other) are broken by insertion ``seq``."""

    __slots__ = ("item", "seq", "less")

    def __init__(self, item: Any, seq: int, less: Callable[[Any, Any], bool]) -> None:
        self.item = item
        self.seq = seq
        self.less = less

    def __lt__(self, other: LessKey) -> bool:
        less = self.less
        if less(self.item, other.item):
            return True
        if less(other.item, self.item):
            return False
        return self.seq < other.seq


class Heap(Generic[T]):
    """Min-heap of items keyed by ``key_of(item)``; entries are ``[sort_key, item, key, seq]``.

    All operations are O(log n) except :meth:`items` (O(n)).
    """

    __slots__ = ("_h", "_pos", "_key_of", "_sort_key", "_seq")

    def __init__(self, key_of: Callable[[T], Hashable], sort_key: SortKey) -> None:
        self._h: list[list[Any]] = []
        self._pos: dict[Hashable, int] = {}
        self._key_of = key_of
        self._sort_key = sort_key
        self._seq = 0

    def __len__(self) -> int:
        return len(self._h)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._pos

    def get(self, key: Hashable) -> T | None:
        """The item stored under ``key``, or ``None``."""
        i = self._pos.get(key)
        return None if i is None else self._h[i][1]

    def peek(self) -> T | None:
        """The smallest item without removing it, or ``None`` when empty."""
        return self._h[0][1] if self._h else None

    def add_or_update(self, item: T) -> bool:
        """Insert ``item`` or replace the item with the same key (re-sorting it).

        Returns True if the key was new.
        """
        k = self._key_of(item)
        i = self._pos.get(k)
        if i is None:
            seq = self._seq
            self._seq = seq + 1
            self._h.append([self._sort_key(item, seq), item, k, seq])
            self._up(len(self._h) - 1)
            return True
        e = self._h[i]
        e[1] = item
        e[0] = self._sort_key(item, e[3])
        self._up(i)
        self._down(self._pos[k])
        return False

    def pop(self) -> T | None:
        """Remove and return the smallest item, or ``None`` when empty."""
        h = self._h
        if not h:
            return None
        e = h[0]
        del self._pos[e[2]]
        last = h.pop()
        if h:
            self._sift_from_root(last)
        return e[1]  # type: ignore[no-any-return]

    def delete(self, key: Hashable) -> T | None:
        """Remove the item under ``key``; returns it, or ``None`` if absent."""
        i = self._pos.get(key)
        if i is None:
            return None
        return self._remove_at(i)

    def items(self) -> list[T]:
        """All items in heap (not sorted) order."""
        return [e[1] for e in self._h]

    def __iter__(self) -> Iterator[T]:
        return iter(self.items())

    # -- internals ---------------------------------------------------------------------------

    def _remove_at(self, i: int) -> T:
        h = self._h
        e = h[i]
        del self._pos[e[2]]
        last = h.pop()
        if i < len(h):
            h[i] = last
            self._pos[last[2]] = i
            self._up(i)
            self._down(self._pos[last[2]])
        return e[1]  # type: ignore[no-any-return]

    def _sift_from_root(self, e: list[Any]) -> None:
        """Put ``e`` (the former last entry) in the emptied root's place: the hole goes down along
        the smaller children to a leaf, then ``e`` rises from there (one comparison per level on
        the way down instead of two). Sort keys are distinct, so every entry ends where
        :meth:`_down` from the root would put it: the same array."""
        h = self._h
        pos = self._pos
        n = len(h)
        i = 0
        c = 1
        while c < n:
            r = c + 1
            if r < n and h[r][0] < h[c][0]:
                c = r
            ce = h[c]
            h[i] = ce
            pos[ce[2]] = i
            i = c
            c = 2 * i + 1
        h[i] = e
        pos[e[2]] = i
        self._up(i)

    def _up(self, i: int) -> None:
        h = self._h
        pos = self._pos
        e = h[i]
        k0 = e[0]
        while i > 0:
            p = (i - 1) >> 1
            pe = h[p]
            if k0 < pe[0]:
                h[i] = pe
                pos[pe[2]] = i
                i = p
            else:
                break
        h[i] = e
        pos[e[2]] = i

    def _down(self, i: int) -> None:
        h = self._h
        pos = self._pos
        n = len(h)
        e = h[i]
        k0 = e[0]
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            r = c + 1
            if r < n and h[r][0] < h[c][0]:
                c = r
            ce = h[c]
            if ce[0] < k0:
                h[i] = ce
                pos[ce[2]] = i
                i = c
            else:
                break
        h[i] = e
        pos[e[2]] = i
