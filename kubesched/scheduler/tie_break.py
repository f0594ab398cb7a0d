"""The random draws of host selection among tied totals, in bulk.

Upstream ``pkg/scheduler/schedule_one.go: selectHost`` (v1.34's reservoir sampling, kept as the
uniform tie-break, see :meth:`kubesched.scheduler.placement.Placement.select_host`) draws
``rand.Intn(cntOfMaxScore)`` for every node that ties the running maximum and takes the node when
the draw is 0. :func:`draw_zero` makes those draws for a whole score list at once, and
:func:`last_zero_of_run` the draws of one run of ties (counts 2, 3, ..., n + 1: no new maximum
after the first node, the common case); both consume exactly the words of the generator's stream
that ``random.Random.randrange`` would, one call per count, so every placement and every later
draw is unchanged.

For a plain ``random.Random`` and counts below ``2**32``, CPython's ``randrange(c)`` is
``_randbelow_with_getrandbits``: ``k = c.bit_length()``, then 32-bit words ``w`` are drawn until
``w >> (32 - k) < c``, that is until ``w < t`` with the threshold ``t = c << (32 - k)``
(``2**31 <= t < 2**32``); the draw is 0 when ``w >> (32 - k) == 0``, that is when
``w < 1 << (32 - k)``.

Words are fetched in bulk with ``getrandbits(32 * m)`` (word ``i`` at bits ``32*i``, ``m`` never
more than the draws still to make, so no word is consumed that the one-by-one calls would not
consume). Which draw a word belongs to depends on how many words were rejected before it, so the
rejections are found in order: in a large chunk only the words at or above ``2**31`` (about half)
are visited one by one (a word below it is accepted by every count); a small chunk (the words
that replace the rejected ones, a third of the size of the chunk before) is walked word by word,
which costs less than the array operations that would pick its high words. The accepted words
then give every draw's result in one array operation.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

#: 2**31: a 32-bit word below it is accepted by every count's rejection test
_HALF = 1 << 31
#: fewer draws than this left: made one word at a time
_SCALAR_TAIL = 8
#: chunks of at least this many words visit only their high words (see the module docstring)
_HIGH_WORDS_FROM = 128
#: counts below this take their thresholds from the module's tables (grown on demand)
_TABLE_LIMIT = 1 << 17

#: ``(thresholds, zero)``: ``thresholds[c] == c << (32 - c.bit_length())`` and
#: ``zero[c] == 1 << (32 - c.bit_length())`` (a ``uint32`` array: a draw for count ``c`` is 0 below
#: it), index 0 unused; replaced by a longer pair when a larger count comes (one assignment, so a
#: reader always holds a matching pair)
_table_pair: tuple[list[int], Any] = ([0, 1 << 31], np.array([0, 1 << 31], dtype=np.uint32))


def _tables(top: int) -> tuple[list[int], Any]:
    """The threshold and zero tables covering counts up to ``top`` (< ``_TABLE_LIMIT``)."""
    global _table_pair
    pair = _table_pair
    have = len(pair[0])
    if top >= have:
        size = min(_TABLE_LIMIT, max(2 * have, 1 << top.bit_length()))
        added = range(have, size)
        pair = (
            pair[0] + [c << (32 - c.bit_length()) for c in added],
            np.concatenate([pair[1], np.array([1 << (32 - c.bit_length()) for c in added], dtype=np.uint32)]),
        )
        _table_pair = pair
    return pair


def _accepted_words(rng: random.Random, n: int, thresholds: list[int], base: int) -> Any:
    """The accepted word of each of ``n`` draws as a ``uint32`` array; draw ``j``'s threshold is
    ``thresholds[j + base]``. Consumes exactly the words the draws one by one would."""
    getrandbits = rng.getrandbits
    chunks: list[Any] = []
    kept: list[bytearray] = []  # per chunk, 1 for an accepted word, 0 for a rejected one
    draw = 0  # index of the draw the next chunk's first word belongs to
    while n - draw >= _SCALAR_TAIL:
        m = n - draw
        words = np.frombuffer(getrandbits(32 * m).to_bytes(4 * m, "little"), dtype="<u4")
        keep = bytearray(b"\x01") * m
        if m >= _HIGH_WORDS_FROM:
            high = np.flatnonzero(words >= _HALF)
            # the draw of the word at position i of this chunk is i + offset - base
            offset = draw + base
            for i, w in zip(high.tolist(), words[high].tolist(), strict=True):
                if w >= thresholds[i + offset]:
                    offset -= 1
                    keep[i] = 0
            draw = m + offset - base
        else:
            at = draw + base  # the threshold index of the draw the next word belongs to
            for i, w in enumerate(words.tolist()):
                if w < thresholds[at]:
                    at += 1
                else:
                    keep[i] = 0
            draw = at - base
        chunks.append(words)
        kept.append(keep)
    if len(chunks) == 1:
        accepted = chunks[0][np.frombuffer(kept[0], dtype=np.bool_)]
    elif chunks:
        accepted = np.concatenate(chunks)[np.frombuffer(b"".join(kept), dtype=np.bool_)]
    else:
        accepted = np.zeros(0, dtype=np.uint32)
    if draw < n:
        # the last few draws one word at a time (a bulk fetch costs more than they do)
        tail = []
        for t in thresholds[draw + base : n + base]:
            w = getrandbits(32)
            while w >= t:
                w = getrandbits(32)
            tail.append(w)
        accepted = np.concatenate([accepted, np.array(tail, dtype=np.uint32)])
    return accepted


def _thresholds_of(counts: Any, table: list[int]) -> list[int]:
    """``[table[c] for c in counts]``, by slices of ``table`` for runs of consecutive counts (host
    selection's counts are runs 2, 3, ..., restarting at each new maximum)."""
    n = len(counts)
    breaks = (np.flatnonzero(counts[1:] != counts[:-1] + 1) + 1).tolist()
    if 8 * len(breaks) > n:
        return [table[c] for c in counts.tolist()]
    out: list[int] = []
    firsts = counts[[0, *breaks]].tolist()
    for c0, s, e in zip(firsts, [0, *breaks], [*breaks, n], strict=True):
        out += table[c0 : c0 + e - s]
    return out


def draw_zero(rng: random.Random, counts: Any) -> Any:
    """``[rng.randrange(c) == 0 for c in counts]`` as a boolean array, with exactly the same
    consumption of the generator's stream (see the module docstring).

    ``counts`` is a one-dimensional integer array, every element ``>= 2``. Other generator
    types (or counts of ``2**32`` and more) call ``randrange`` per count."""
    n = int(counts.size)
    if n == 0:
        return np.zeros(0, dtype=bool)
    top = int(counts.max())
    if type(rng) is not random.Random or top >= 1 << 32:
        return np.array([rng.randrange(c) == 0 for c in counts.tolist()], dtype=bool)
    counts = counts.astype(np.int64, copy=False)
    if top < _TABLE_LIMIT:
        table, zero = _tables(top)
        thresholds = _thresholds_of(counts, table)
        below = zero[counts]
    else:
        # 32 - k per draw (frexp's exponent is the bit length; exact below 2**53)
        shifts = 32 - np.frexp(counts.astype(np.float64))[1]
        thresholds = (counts << shifts).tolist()
        below = (np.ones(n, dtype=np.int64) << shifts).astype(np.uint32)
    return _accepted_words(rng, n, thresholds, 0) < below


def last_zero_of_run(rng: random.Random, n: int) -> int:
    """The draws ``rng.randrange(c)`` for ``c = 2, 3, ..., n + 1`` in that order (one run of ``n``
    ties, as host selection makes them when no node after the first raises the maximum),
    consuming the generator's stream exactly as those calls would; returns the index of the last
    draw that is 0 (the tie that is kept), or -1 when none is."""
    if n <= 0:
        return -1
    if type(rng) is not random.Random or n + 1 >= _TABLE_LIMIT:
        hits = draw_zero(rng, np.arange(2, n + 2, dtype=np.int64))
    else:
        table, zero = _tables(n + 1)
        hits = _accepted_words(rng, n, table, 2) < zero[2 : n + 2]
    found = np.flatnonzero(hits)
    return int(found[-1]) if found.size else -1
