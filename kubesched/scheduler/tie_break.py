"""The random draws of host selection among tied totals, in bulk.

Upstream ``pkg/scheduler/schedule_one.go: selectHost`` (v1.34's reservoir sampling, kept as the
uniform tie-break, see :meth:`kubesched.scheduler.placement.Placement.select_host`) draws
``rand.Intn(cntOfMaxScore)`` for every node that ties the running maximum and takes the node when
the draw is 0. :func:`draw_zero` makes those draws for a whole score list at once and consumes
exactly the words of the generator's stream that ``random.Random.randrange`` would, one call per
count, so every placement and every later draw is unchanged.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

#: 2**31: a 32-bit word below it is accepted by every count's rejection test (see draw_zero)
_HALF = 1 << 31
#: fewer draws than this left: made one word at a time
_SCALAR_TAIL = 48


def draw_zero(rng: random.Random, counts: Any) -> Any:
    """``[rng.randrange(c) == 0 for c in counts]`` as a boolean array, with exactly the same
    consumption of the generator's stream.

    ``counts`` is a one-dimensional integer array, every element ``>= 2``. For a plain
    ``random.Random`` and counts below ``2**32``, CPython's ``randrange(c)`` is
    ``_randbelow_with_getrandbits``: ``k = c.bit_length()``, then 32-bit words ``w`` are drawn
    until ``w >> (32 - k) < c``, that is until ``w < t`` with the threshold
    ``t = c << (32 - k)`` (``2**31 <= t < 2**32``); the draw is 0 when ``w >> (32 - k) == 0``.

    Words are fetched in bulk with ``getrandbits(32 * m)`` (word ``i`` at bits ``32*i``, ``m``
    never more than the draws still to make, so no word is consumed that the one-by-one calls
    would not consume). Which draw a word belongs to depends on how many words were rejected
    before it, so the rejections are found in order; but a word below ``2**31`` is accepted by
    every count, so only the words at or above ``2**31`` (about half) are visited one by one. The
    accepted words then give every draw's result in one array operation.

    Other generator types (or counts of ``2**32`` and more) call ``randrange`` per count.
    """
    n = int(counts.size)
    if n == 0:
        return np.zeros(0, dtype=bool)
    if type(rng) is not random.Random or int(counts.max()) >= 1 << 32:
        return np.array([rng.randrange(c) == 0 for c in counts.tolist()], dtype=bool)
    counts = counts.astype(np.int64, copy=False)
    # 32 - k per draw (frexp's exponent is the bit length; exact below 2**53)
    shifts = 32 - np.frexp(counts.astype(np.float64))[1]
    thresholds = (counts << shifts).tolist()
    getrandbits = rng.getrandbits
    chunks: list[Any] = []
    rejected: list[int] = []
    reject = rejected.append
    start = 0  # stream position (in words) of the next chunk's first word
    draw = 0  # index of the draw the next chunk's first word belongs to
    while n - draw >= _SCALAR_TAIL:
        m = n - draw
        words = np.frombuffer(getrandbits(32 * m).to_bytes(4 * m, "little"), dtype="<u4")
        chunks.append(words)
        high = np.flatnonzero(words >= _HALF)
        # the draw of the word at position i of this chunk is i + offset
        offset = draw
        for i, w in zip(high.tolist(), words[high].tolist(), strict=True):
            if w >= thresholds[i + offset]:
                offset -= 1
                reject(start + i)
        start += m
        draw = m + offset
    if draw < n:
        # the last few draws one word at a time (a bulk fetch costs more than they do)
        tail = []
        for t in thresholds[draw:]:
            w = getrandbits(32)
            while w >= t:
                w = getrandbits(32)
            tail.append(w)
        chunks.append(np.array(tail, dtype=np.uint32))
    accepted = chunks[0] if len(chunks) == 1 else np.concatenate(chunks)
    if rejected:
        keep = np.ones(len(accepted), dtype=bool)
        keep[np.fromiter(rejected, dtype=np.int64, count=len(rejected))] = False
        accepted = accepted[keep]
    return (accepted >> shifts.astype(np.uint32)) == 0
